#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/common/sqlite.hpp"
#include "daemon/reconcile/plan.hpp"
#include "sources/verify_policy.hpp"

namespace flytecd::ledger {

// One step of a recorded pass: an override/project step or a registration outcome.
struct HistoryStep {
  std::string action;   // create, update, replace, delete, adopt; registered, activated, …
  std::string key;      // "override/…", "project/…", "registration/…"
  std::string outcome;  // "ok", "failed"
  std::string message;  // the step's reason, or its error
  std::string changes;  // JSON array of field changes ({path, live, desired}); "" = none
};

struct HistoryEntry {
  int64_t id = 0;
  std::string revision;
  int64_t started_at = 0;  // unix seconds
  int64_t finished_at = 0;
  int steps = 0;
  std::string outcome;  // "success", "failed", "refused", "running" (a crash leaves "running")
  std::string detail;
  std::string subject, author;         // of the commit (empty for a directory)
  int64_t committed_at = 0;            // commit time, unix seconds (0: unknown)
  std::string trigger;                 // "startup", "interval", "webhook …", "apply", …
  int64_t noops = 0;                   // no-op passes (nothing to do) that followed this one
  std::vector<HistoryStep> step_list;  // filled by history(query)
};

// A pass worth remembering: it changed something, was refused, or failed.
struct PassRecord {
  std::string revision, subject, author, trigger, outcome, detail;
  int64_t committed_at = 0;
  std::vector<HistoryStep> steps;
};

struct HistoryQuery {
  int limit = 20;
  std::string object;   // only passes with a step on this key (exact, or a key prefix ending '/')
  std::string project;  // only passes with a step on this project
};

// How much history is kept (history.maxEntries / history.maxAge).
struct Retention {
  int64_t max_entries = 1000;
  int64_t max_age_seconds = 90 * 24 * 3600;
};

// A workflow registration flytecd applied: which package digest became which FlyteAdmin ids.
struct RegistrationRecord {
  std::string key;          // "registration/<project>/<domain>/<name>"
  std::string fingerprint;  // hash of everything that decides the registered entities
  std::string digest;       // package content digest "sha256:…"
  std::string package;      // the reference as written in Git
  std::string project, domain, version;
  std::vector<std::string> entities;      // "TASK p/d/name@version", … as registered
  std::vector<std::string> launch_plans;  // every launch-plan name in the package
  std::vector<std::string> activated;     // launch-plan names flytecd keeps ACTIVE
  std::string revision;
  int64_t applied_at = 0;  // unix seconds
  // Who signed the registered manifest, when a signature policy applied (signer_text): the
  // verified digest, the signer, the log's time and when flytecd verified it; empty if none.
  std::string signer;
};

// A verified signer as the ledger keeps it: JSON {"by", "method", "identity", "issuer", "digest",
// "signedAt", "verifiedAt"}; empty without one.
std::string signer_text(const std::optional<sources::Signer>& signer);
// The "signed by …" line of a recorded signer (empty if none or unreadable).
std::string signer_by(const std::string& signer_text);

// What flytecd manages and what it did, in SQLite (WAL, synchronous=NORMAL): every managed object
// with the hash it last applied and the revision, plus an audit history of reconciles and their
// steps. Each write is a transaction (record() and forget() calls that arrive together from
// several threads share one: group commit, each returns once its transaction committed), so a
// crash at any point leaves a consistent file. Thread-safe.
class Ledger {
 public:
  // Opens (creating) the database at `path` (":memory:" for tests).
  static Result<std::unique_ptr<Ledger>> open(const std::string& path);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  Result<reconcile::Managed> managed() const;
  // The managed objects of these projects only: "project/P" and "override/P/…" (a targeted pass;
  // read through the key index, not the whole table).
  Result<reconcile::Managed> managed_of(const std::set<std::string>& projects) const;
  // How many managed objects there are per kind of key ("project", "override", "settings", …).
  Result<std::map<std::string, size_t>> managed_counts() const;
  // Where each object flytecd manages came from: the revision and the time (unix seconds) it was
  // last applied, for projects, overrides and registrations alike, by key.
  struct Applied {
    std::string revision;
    int64_t at = 0;
  };
  Result<std::map<std::string, Applied>> applied() const;
  // applied() of these projects' keys only ("project/P", "override/P/…", "registration/P/…").
  Result<std::map<std::string, Applied>> applied_of(const std::set<std::string>& projects) const;
  // Records that `key` now holds what `hash` describes (after a successful write), and the
  // server's version of the record when it keeps one (Sink::written_version; 0 otherwise).
  Status record(const std::string& key, const std::string& kind, const std::string& hash,
                const std::string& revision, uint64_t version = 0);
  Status forget(const std::string& key);
  // record() / forget() of several objects in one transaction (one outcome for all): how a pass
  // that runs its steps asynchronously records the ones that ended together.
  struct ObjectChange {
    std::string key, kind, hash, revision;
    uint64_t version = 0;
    bool forget = false;  // forget(key); the other fields unused
  };
  Status record_all(std::vector<ObjectChange> changes);
  // How many transactions record() and forget() have written (fewer than calls when calls from
  // several threads arrived together; tests, benchmarks).
  uint64_t write_groups() const;

  // Registrations (package digest <-> registered ids), by key. Without entities, each record's
  // `entities` is left empty and not read: the pass's guard counts activated launch plans only,
  // and a package's entity names are most of its record (1.2 MB for 200 packages of 84).
  enum class Entities { read, skip };
  Result<std::map<std::string, RegistrationRecord>> registrations(
      Entities entities = Entities::read) const;
  Status record_registration(const RegistrationRecord& r);
  Status forget_registration(const std::string& key);

  // Audit history.
  Result<int64_t> begin_reconcile(const std::string& revision);
  Status add_step(int64_t reconcile_id, const std::string& action, const std::string& key,
                  const std::string& outcome, const std::string& message);
  Status finish_reconcile(int64_t reconcile_id, int steps, const std::string& outcome,
                          const std::string& detail);
  Result<std::vector<HistoryEntry>> history(int limit) const;
  // A pass and its steps in one transaction; then what `retention` no longer keeps is deleted.
  Result<int64_t> record_pass(const PassRecord& pass, const Retention& retention = {});
  // Counts a pass that had nothing to do on the newest entry (no row per no-op interval).
  Status count_noop();
  // Newest first, with their steps.
  Result<std::vector<HistoryEntry>> history(const HistoryQuery& query) const;

  // Ownership: the revision the last converged pass applied ("" when none has, or the ledger was
  // just created), and when it was set. Compared with the applied-revision record to tell a lost
  // or stale ledger.
  Result<std::string> converged_revision() const;
  Status set_converged_revision(const std::string& revision);
  // True when the ledger holds no managed object and no registration (new, or wiped).
  Result<bool> owns_nothing() const;
  // Replaces every managed object and registration record with `objects` / `registrations` and
  // sets the converged revision, in one transaction (ownership rebuilt from Git). History stays.
  struct OwnedObject {
    std::string key, kind, hash, revision;
  };
  Status replace_ownership(const std::vector<OwnedObject>& objects,
                           const std::vector<RegistrationRecord>& registrations,
                           const std::string& converged);
  // Every version the history shows registered under `key` before: the versions of its
  // recorded version changes (old and new), e.g. {v1, v2} after v1 -> v2. Bounded by retention.
  // (ledger/versions.cpp)
  Result<std::set<std::string>> registered_versions(const std::string& key) const;

  // Runs PRAGMA integrity_check; returns "ok" when the file is sound.
  Result<std::string> integrity_check() const;

 private:
  explicit Ledger(std::unique_ptr<sqlite::Database> db);
  // One managed-object change of record() / forget(); result and done belong to its waiting
  // caller.
  struct Change : ObjectChange {
    Status* result = nullptr;
    bool* done = nullptr;
  };
  // Group commit: queues the changes; the first caller that finds no write in progress writes
  // everything queued in one transaction, and each caller returns with its transaction's outcome.
  Status commit_changes(std::vector<ObjectChange> changes);
  Status write_changes(const std::vector<Change>& changes);
  // Const readers share the connection; m_mu serializes every use of it.
  std::unique_ptr<sqlite::Database> m_db;
  mutable std::mutex m_mu;
  mutable std::mutex m_group_mu;
  std::condition_variable m_group_cv;
  std::vector<Change> m_queue;
  bool m_writing = false;
  uint64_t m_groups = 0;
};

}  // namespace flytecd::ledger
