#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/config/config.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/model/incremental.hpp"
#include "daemon/pass/pass.hpp"
#include "daemon/registration/budget.hpp"
#include "daemon/registration/packages.hpp"
#include "daemon/wiring/target.hpp"
#include "sources/source.hpp"

namespace flytecd::wiring {

// One revision of the source, read and loaded. `docs` is the revision's documents when
// `diagnostics` holds no error; otherwise the revision is invalid and must not be applied.
struct LoadedRevision {
  std::string revision;      // commit id, or "dir:<content hash>" (a directory)
  std::string subject;       // commit subject ("" for a directory)
  std::string author;        // commit author ("" for a directory)
  int64_t committed_at = 0;  // commit time, unix seconds
  model::Documents docs;
  model::Diagnostics diagnostics;
  size_t files_parsed = 0;  // files parsed for this load (the others came from the cache)
  std::map<std::string, std::string> files;  // path -> content id of each document file
  std::vector<model::FileLoad> loads;        // each file loaded: documents, nodes (in order)
  bool ok() const;
  // The pass's view of it (documents borrowed: `this` must outlive the pass).
  pass::Revision pass_revision() const;
};

// The one owner of everything a reconcile needs: the configuration's source (sources/), the
// package source of its registrations, the target (sinks and ledger) and the applied-revision
// record. Every command that loads a revision or runs a pass, and the daemon's loop, go through
// it; none opens a backend of its own.
//
// The target is opened separately (open_target): a command that only reads revisions (plan
// --git) never takes the state directory's lock, and the daemon can prepare a new configuration's
// source beside the one in force before it moves the target over (SIGHUP). Not thread-safe: the
// reconcile thread (or a command) owns it.
class Reconciler {
 public:
  // Opens cfg's source (wiring::make_source: Git, a directory, …). Nothing is contacted beyond
  // what opening the source does. Errors: the source's.
  static Result<std::unique_ptr<Reconciler>> open(const config::Config& cfg);
  ~Reconciler();
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  const config::Config& config() const { return m_cfg; }
  sources::Source& source() { return *m_source; }
  std::string describe_source() const { return m_source->describe(); }

  // The source's current revision, cheaply (a ref lookup for Git).
  Result<std::string> head() { return m_source->head(); }
  // Reads and loads a revision: `at` empty is the source's head (sync(): what it tracks moves),
  // else a revision named as `git rev-parse` takes it (snapshot_at: nothing moves). Files whose
  // content id is unchanged since an earlier load are not parsed again. Errors: the source's
  // (unavailable, not_found, invalid_input for a directory asked for a revision); an invalid
  // revision is not an error: its diagnostics are in the result.
  Result<LoadedRevision> load(const std::string& at = "");
  // The two halves of load(): a revision read (snapshot_at; nothing parsed), and its files loaded
  // (only the paths in `only` when given: `files` still names every file of the revision).
  Result<sources::Snapshot> snapshot(const std::string& at) { return m_source->snapshot_at(at); }
  LoadedRevision load_snapshot(const sources::Snapshot& snap,
                               const std::set<std::string>* only = nullptr);
  // Every file parsed stays cached (not only the last load's): for a command comparing revisions.
  void keep_parsed_files() { m_loader.keep_all(true); }
  // No parsed file stays cached: for a command that loads one revision (a second load, e.g.
  // ownership rebuilt from Git at another revision, parses again).
  void keep_no_parsed_files() { m_loader.keep_none(true); }

  // The target: opened with `access` (wiring::open_target: the state directory's lock for a
  // writer, the embedded emulator when there is no endpoint), its applied-revision record the
  // state directory's file. close_target releases both (and the lock). Errors: open_target's.
  Status open_target(Access access = Access::write);
  void close_target();
  // Where the applied-revision record is kept instead of the state directory's file (in a
  // cluster, a ConfigMap every replica reads). Requires has_target().
  void use_record(std::unique_ptr<pass::RecordStore> record);
  bool has_target() const { return m_target != nullptr; }
  Target& target() { return *m_target; }
  pass::RecordStore& record() { return *m_record; }

  // One reconcile pass of `rev` (loaded by this reconciler) against the target: packages from
  // the configured registries and from the revision's own files, one memory budget across every
  // pass (packages.memoryBudgetBytes), ownership rebuilt from the source's history when needed.
  // The configuration's fingerprint is set; `options.writer` defaults to this host's name.
  // Requires has_target().
  pass::Report pass(const LoadedRevision& rev, pass::Options options);

 private:
  Reconciler(config::Config cfg, std::unique_ptr<sources::Source> source);
  config::Config m_cfg;
  std::unique_ptr<sources::Source> m_source;
  model::IncrementalLoader m_loader;
  std::unique_ptr<Target> m_target;
  std::unique_ptr<pass::RecordStore> m_record;
  // The package source is kept across passes (its token and blob caches persist); it reads
  // repository packages at the revision of the pass in progress.
  std::unique_ptr<registration::PackageResolver> m_packages;
  std::string m_pass_revision;
  registration::MemoryBudget m_memory;
};

}  // namespace flytecd::wiring
