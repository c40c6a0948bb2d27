#pragma once

// SQLite persistence of the emulator (internal to sinks/emulator). Rows hold serialized
// protobuf blobs; the store knows nothing about protobuf. Every RPC runs in one Tx, which
// holds the store's mutex, so the store is thread-safe and each write RPC is one atomic,
// durable SQLite transaction (WAL, synchronous=FULL): the process may be SIGKILLed at any
// point and restarted on the same file without losing committed writes.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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

class Store;

// One SQLite transaction holding the store's lock. Rolls back on destruction unless
// commit() succeeded. Not thread-safe itself; use from one thread.
class Tx {
 public:
  Tx(Tx&& other) noexcept;
  Tx& operator=(Tx&&) = delete;
  Tx(const Tx&) = delete;
  ~Tx();

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
  // All rows of a kind in project, domain and name, insertion order; an empty one matches any
  // (as FlyteAdmin's identifier filters leave it out).
  Result<std::vector<EntityRow>> list_entities(EntityKind kind, const std::string& project,
                                               const std::string& domain, const std::string& name);
  Status set_entity_state(const EntityKey& key, int state, int64_t updated_at_ms);
  // Sets state 0 on every version of (kind, project, domain, name) whose state is `state`.
  Result<std::vector<EntityKey>> clear_state(const EntityKey& named, int state,
                                             int64_t updated_at_ms);
  Result<std::vector<EntityRow>> entities_with_state(EntityKind kind, const std::string& project,
                                                     const std::string& domain,
                                                     const std::string& name, int state);

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
  std::optional<sqlite::Transaction> m_tx;  // rolled back (if open) before m_lock is released
};

class Store {
 public:
  // Opens or creates the database and its schema. ":memory:" gives a private in-memory db.
  static Result<std::unique_ptr<Store>> open(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Starts a transaction (BEGIN IMMEDIATE for writes). Blocks while another Tx is open.
  Result<Tx> begin(bool write);
  const std::string& path() const { return m_path; }

 private:
  friend class Tx;
  Store(std::unique_ptr<sqlite::Database> db, std::string path);
  std::unique_ptr<sqlite::Database> m_db;
  std::string m_path;
  std::mutex m_mu;
};

}  // namespace flytecd::sinks::emulator
