#pragma once

// SQLite persistence of the emulator (internal to sinks/emulator). Rows hold serialized
// protobuf blobs; the store knows nothing about protobuf. Every RPC runs in one Tx, which
// holds the store's mutex, so the store is thread-safe and each write RPC is atomic (a
// savepoint) and durable (WAL, synchronous=FULL): the process may be SIGKILLed at any point and
// restarted on the same file without losing an acknowledged write.
//
// Group commit: write RPCs that arrive together share one SQLite transaction, and so one fsync.
// A writer that finishes while another writer waits for the store leaves the transaction open
// and waits; the last writer of the group (or the 64th, or the first after 20 ms) asks the
// store's committer thread to end it. The committer COMMITs the open group and syncs the WAL
// with the store unlocked; writes that end during that sync form the next group, which it
// commits as soon as the sync returns: under load a group is every write of one sync's
// duration, and the committer never sleeps. Tx::commit() returns only once the group holding its
// writes is committed and synced: a write is acknowledged only when it is on disk; if the COMMIT
// or the sync fails, every write of the group fails with that error. A reader first commits an
// open group and waits for its sync, so it never sees a write that is not yet acknowledged.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/common/sqlite.hpp"

namespace flytecd::sinks::emulator {

// Numerically equal to flyteidl.core.ResourceType.
enum class EntityKind : int { task = 1, workflow = 2, launch_plan = 3 };

struct ProjectRow {
  std::string id;
  std::string blob;  // serialized flyteidl.admin.Project (domains not stored)
  int state = 0;
  int64_t seq = 0;
};

// Unique key of a matchable-attributes row, as FlyteAdmin's `resources` table.
struct ResourceKey {
  std::string project;
  std::string domain;
  std::string workflow;
  std::string launch_plan;
  int resource_type = 0;
};

struct ResourceRow {
  ResourceKey key;
  int priority = 0;
  std::string attributes;  // serialized flyteidl.admin.MatchingAttributes
};

struct EntityKey {
  EntityKind kind = EntityKind::task;
  std::string project;
  std::string domain;
  std::string name;
  std::string version;
};

struct EntityRow {
  EntityKey key;
  std::string blob;    // serialized admin.Task / admin.Workflow / admin.LaunchPlan
  std::string digest;  // hex digest of what FlyteAdmin compares for "identical structure"
  int state = 0;       // launch plans: flyteidl.admin.LaunchPlanState
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  int64_t seq = 0;  // insertion order
};

struct UploadLocation {
  std::string path;  // "<project>/<domain>/<prefix>/<filename>" (bucket-relative)
  std::string md5;   // 16 raw bytes, or empty when only filename_root was given
  int64_t expires_at_ms = 0;
};

// One row of Flyte 2's `settings` table (runs/migrations: key TEXT UNIQUE, data the Settings
// message as protojson, version for optimistic locking, starting at 1).
struct SettingsRow {
  std::string key;   // "v1:{org}:{domain}:{project}"
  std::string data;  // protojson of flyteidl2.settings.Settings
  uint64_t version = 0;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

// One row of Flyte 2's `projects` table (runs/repository/models/project.go): the org is not
// stored, and domains are the server's configuration, injected into every answer.
struct Flyte2ProjectRow {
  std::string identifier;
  std::string name;
  std::string description;
  std::string labels;  // serialized flyteidl2.task.Labels, or empty for none
  int64_t state = 0;   // flyteidl2.project.ProjectState
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

class Store;

// The SQL of the store's reads of matchable-attribute rows (store_rows.cpp), given here so that
// a test can ask SQLite which index it picks for exactly the statements the store runs. Each has
// its values as `?`, in the order Tx binds them.
namespace resource_sql {
std::string list_of_type();                    // resource_type
std::string first_like(const ResourceKey& k);  // resource_type, then each non-empty field of k
std::string most_specific();                   // resource_type, domain, project, workflow
}  // namespace resource_sql

// One SQLite transaction holding the store's lock. Rolls back on destruction unless
// commit() succeeded. Not thread-safe itself; use from one thread.
class Tx {
 public:
  Tx(Tx&& other) noexcept;
  Tx& operator=(Tx&&) = delete;
  Tx(const Tx&) = delete;
  ~Tx();

  // Reads: ends the transaction. Writes: keeps this Tx's changes and returns once the group
  // transaction holding them has committed (or failed: then nothing of them is kept). On a
  // thread with a DeferredAck in scope, a write returns at once (ok): the DeferredAck holds its
  // group, and the caller acknowledges nothing before Store::when_durable says so.
  Status commit();

  Result<std::optional<ProjectRow>> get_project(const std::string& id);
  Status insert_project(const ProjectRow& row);  // already_exists on duplicate id
  Status update_project(const ProjectRow& row);
  Result<std::vector<ProjectRow>> list_projects();

  Result<std::optional<ResourceRow>> get_resource(const ResourceKey& key);
  // FlyteAdmin's ResourceRepo.GetRaw: a GORM struct query, so empty project/domain/workflow/
  // launch_plan are dropped from the WHERE clause, and First() takes the lowest primary key.
  Result<std::optional<ResourceRow>> first_resource_like(const ResourceKey& key);
  // Most specific row for (type, project, domain, workflow) with FlyteAdmin's IN ('', x)
  // matching and ORDER BY priority DESC.
  Result<std::optional<ResourceRow>> most_specific_resource(int type, const std::string& project,
                                                            const std::string& domain,
                                                            const std::string& workflow);
  Status upsert_resource(const ResourceRow& row);
  // Deletes rows of `type` for `project`; an empty domain/workflow matches any value.
  Result<int64_t> delete_resources(int type, const std::string& project, const std::string& domain,
                                   const std::string& workflow);
  Result<std::vector<ResourceRow>> list_resources(int type);  // priority DESC, then insertion

  Result<std::optional<EntityRow>> get_entity(const EntityKey& key);
  Status insert_entity(const EntityRow& row);  // already_exists on duplicate key
  // All rows of a kind in project, domain and name at any of `versions`, insertion order; an
  // empty field (no versions) matches any (as FlyteAdmin's identifier filters leave it out).
  Result<std::vector<EntityRow>> list_entities(EntityKind kind, const std::string& project,
                                               const std::string& domain, const std::string& name,
                                               const std::vector<std::string>& versions = {});
  Status set_entity_state(const EntityKey& key, int state, int64_t updated_at_ms);
  // Sets state 0 on every version of (kind, project, domain, name) whose state is `state`.
  Result<std::vector<EntityKey>> clear_state(const EntityKey& named, int state,
                                             int64_t updated_at_ms);
  Result<std::vector<EntityRow>> entities_with_state(EntityKind kind, const std::string& project,
                                                     const std::string& domain,
                                                     const std::string& name, int state);

  // Flyte 2's settings rows (runs/repository/impl/settings.go). insert: version 1, or
  // already_exists when the key has a row. update: `UPDATE … SET version = version + 1 WHERE key
  // = ? AND version = ?`; returns the rows it changed (0: no such row, or another version).
  Result<std::vector<SettingsRow>> settings_by_keys(const std::vector<std::string>& keys);
  Status insert_settings(const SettingsRow& row);
  Result<int64_t> update_settings(const std::string& key, const std::string& data, uint64_t version,
                                  int64_t updated_at_ms);

  // Flyte 2's project rows (runs/repository/impl/project.go). insert: already_exists when the
  // identifier has a row; update: the rows it changed (0: no such project); list: insertion order.
  Status insert_flyte2_project(const Flyte2ProjectRow& row);
  Result<int64_t> update_flyte2_project(const Flyte2ProjectRow& row);
  Result<std::optional<Flyte2ProjectRow>> get_flyte2_project(const std::string& identifier);
  Result<std::vector<Flyte2ProjectRow>> list_flyte2_projects();

  Status put_upload_location(const UploadLocation& loc);
  Result<std::optional<UploadLocation>> get_upload_location(const std::string& path);
  Status put_upload(const std::string& native_url, const std::string& md5, const std::string& data);
  Result<std::optional<std::string>> get_upload(const std::string& native_url);
  Result<std::optional<std::string>> get_upload_md5(const std::string& native_url);

 private:
  friend class Store;
  Tx(Store* store, std::unique_lock<std::mutex> lock);
  Store* m_store;
  std::unique_lock<std::mutex> m_lock;
  std::optional<sqlite::Transaction> m_tx;  // reads: rolled back (if open) before m_lock goes
  uint64_t m_group = 0;                     // writes: the group transaction of this Tx's savepoint
  bool m_savepoint = false;                 // writes: the savepoint is open (not yet released)
};

// How writes were grouped since the store opened (for benchmarks and tests).
struct GroupCommitStats {
  uint64_t writes = 0;   // write transactions that committed their savepoint
  uint64_t commits = 0;  // SQLite transactions that held them (one fsync each)
};

class Store;

// Set on a thread for one RPC handler that must not block (gRPC's callback threads): the write
// transactions it commits do not wait for their group's sync, and pending() names the last
// group they joined, for Store::when_durable. Not nestable.
class DeferredAck {
 public:
  DeferredAck();
  ~DeferredAck();
  DeferredAck(const DeferredAck&) = delete;
  DeferredAck& operator=(const DeferredAck&) = delete;
  struct Pending {
    Store* store = nullptr;
    uint64_t group = 0;
  };
  // The group to wait for; nullopt when no write committed.
  std::optional<Pending> pending() const { return m_pending; }

 private:
  friend class Tx;
  std::optional<Pending> m_pending;
};

class Store {
 public:
  // Opens or creates the database and its schema. ":memory:" gives a private in-memory db.
  // `max_group_age`: how long a group may stay open for writers that join it.
  static Result<std::unique_ptr<Store>> open(
      const std::string& path, std::chrono::milliseconds max_group_age = k_max_group_age);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Starts a transaction: a read, or a write (a savepoint in the open group transaction, which
  // it opens with BEGIN IMMEDIATE if there is none). Blocks while another Tx is open.
  Result<Tx> begin(bool write);
  const std::string& path() const { return m_path; }
  GroupCommitStats group_commit_stats();
  // Runs `done` with the outcome of `group` (a DeferredAck's) once it is committed and synced:
  // on the committer thread, or at once on this one when it already is. `done` must not block
  // or use the store.
  void when_durable(uint64_t group, std::function<void(Status)> done);

  static constexpr uint64_t k_max_group_writes = 64;
  static constexpr std::chrono::milliseconds k_max_group_age{20};

 private:
  friend class Tx;
  Store(std::unique_ptr<sqlite::Database> db, std::string path);
  // With m_mu held. keep_group_open: another writer waits to join the group, within its
  // bounds. end_write: after a write's savepoint ended, ask the committer to end the group
  // unless it is kept open. commit_group: COMMIT the open group. make_durable: sync the WAL
  // (unlocking while it runs) so that every committed group is on disk.
  bool keep_group_open() const;
  void end_write();
  void commit_group();
  void make_durable(std::unique_lock<std::mutex>& lock);
  // No group open and every committed group durable (what a reader and the destructor need).
  void settle(std::unique_lock<std::mutex>& lock);
  // The committer thread: ends each group end_write asks it to, and runs the acknowledgements
  // of durable groups, until the store closes.
  void commit_loop();
  // With m_mu held: the acknowledgements whose group is durable, taken out of m_acks.
  std::vector<std::pair<Status, std::function<void(Status)>>> take_ready_acks();
  Status outcome_of(uint64_t group) const;

  std::unique_ptr<sqlite::Database> m_db;
  std::string m_path;
  std::mutex m_mu;
  std::condition_variable m_group_ended;
  std::condition_variable m_commit_wanted;  // the committer waits on it
  std::atomic<int> m_writers_waiting{0};    // write begin() calls not yet holding m_mu
  // Guarded by m_mu:
  bool m_group_open = false;
  uint64_t m_group = 0;      // id of the open group, or of the last one
  uint64_t m_committed = 0;  // every group up to this id has ended its COMMIT (or failed)
  uint64_t m_durable = 0;    // ... and is synced to disk: its writes can be acknowledged
  uint64_t m_group_writes = 0;
  bool m_commit_requested = false;  // a writer left the open group for the committer to end
  // Acknowledgements waiting for their group to be durable (when_durable), in group order.
  std::vector<std::pair<uint64_t, std::function<void(Status)>>> m_acks;
  bool m_closing = false;  // the committer stops
  std::chrono::steady_clock::time_point m_group_started;
  std::chrono::milliseconds m_max_group_age = k_max_group_age;
  std::map<uint64_t, Error> m_failed_groups;  // recent groups whose COMMIT or sync failed
  // Not guarded: what a writer waiting for its acknowledgement reads without m_mu (which the
  // next group's writers hold meanwhile). The low 32 bits of m_durable, stored after it (a futex
  // word: std::atomic<uint32_t>::wait sleeps in the kernel on it directly), and whether any
  // group ever failed (set before m_durable moves past it).
  std::atomic<uint32_t> m_durable_word{0};
  std::atomic<bool> m_any_failed{false};
  int m_wal_fd = -1;  // the WAL, synced by make_durable; -1: SQLite syncs (synchronous=FULL)
  GroupCommitStats m_stats;
  std::thread m_committer;  // last: starts once the rest is set up (open), joined first
};

}  // namespace flytecd::sinks::emulator
