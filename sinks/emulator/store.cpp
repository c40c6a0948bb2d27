#include "sinks/emulator/store.hpp"

#include <sqlite3.h>

#include <utility>

namespace flytecd::sinks::emulator {
namespace {

constexpr int k_schema_version = 1;

constexpr const char* k_schema = R"sql(
CREATE TABLE IF NOT EXISTS projects(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  blob BLOB NOT NULL,
  state INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS resources(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  project TEXT NOT NULL, domain TEXT NOT NULL, workflow TEXT NOT NULL,
  launch_plan TEXT NOT NULL, resource_type INTEGER NOT NULL,
  priority INTEGER NOT NULL, attributes BLOB NOT NULL,
  UNIQUE(project, domain, workflow, launch_plan, resource_type));
CREATE TABLE IF NOT EXISTS entities(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind INTEGER NOT NULL, project TEXT NOT NULL, domain TEXT NOT NULL,
  name TEXT NOT NULL, version TEXT NOT NULL,
  blob BLOB NOT NULL, digest TEXT NOT NULL, state INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  UNIQUE(kind, project, domain, name, version));
CREATE INDEX IF NOT EXISTS entities_by_state ON entities(kind, project, domain, name, state);
CREATE TABLE IF NOT EXISTS upload_locations(
  path TEXT PRIMARY KEY, md5 BLOB NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS uploads(
  native_url TEXT PRIMARY KEY, md5 BLOB NOT NULL, data BLOB NOT NULL);
)sql";

Error sql_error(sqlite3* db, const std::string& what) {
  return make_error(ErrorCode::internal, "emulator: sqlite: " + what + ": " + sqlite3_errmsg(db));
}

// RAII prepared statement with positional binding helpers.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { m_rc = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr); }
  ~Stmt() { sqlite3_finalize(m_stmt); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  bool prepared() const { return m_rc == SQLITE_OK; }
  Stmt& text(const std::string& v) {
    sqlite3_bind_text(m_stmt, ++m_idx, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& blob(const std::string& v) {
    sqlite3_bind_blob64(m_stmt, ++m_idx, v.data(), v.size(), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& integer(int64_t v) {
    sqlite3_bind_int64(m_stmt, ++m_idx, v);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(m_stmt); }

  std::string col_text(int i) const {
    const auto* p = sqlite3_column_text(m_stmt, i);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(m_stmt, i)))
             : std::string();
  }
  std::string col_blob(int i) const {
    const void* p = sqlite3_column_blob(m_stmt, i);
    return p ? std::string(static_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(m_stmt, i)))
             : std::string();
  }
  int64_t col_int(int i) const { return sqlite3_column_int64(m_stmt, i); }

 private:
  sqlite3_stmt* m_stmt = nullptr;
  int m_rc;
  int m_idx = 0;
};

Status exec(sqlite3* db, const char* sql, const std::string& what) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return make_error(ErrorCode::internal, "emulator: sqlite: " + what + ": " + msg);
  }
  return ok_status();
}

// Runs a statement that returns no rows.
Status run(sqlite3* db, Stmt& st, const std::string& what) {
  if (!st.prepared()) return sql_error(db, what);
  const int rc = st.step();
  if (rc == SQLITE_CONSTRAINT) {
    return make_error(ErrorCode::already_exists, "emulator: sqlite: " + what + ": duplicate key");
  }
  if (rc != SQLITE_DONE) return sql_error(db, what);
  return ok_status();
}

// Collects every row through `read`.
template <typename T, typename F>
Result<std::vector<T>> collect(sqlite3* db, Stmt& st, const std::string& what, F read) {
  if (!st.prepared()) return sql_error(db, what);
  std::vector<T> out;
  int rc;
  while ((rc = st.step()) == SQLITE_ROW) out.push_back(read(st));
  if (rc != SQLITE_DONE) return sql_error(db, what);
  return out;
}

template <typename T, typename F>
Result<std::optional<T>> first(sqlite3* db, Stmt& st, const std::string& what, F read) {
  auto rows = collect<T>(db, st, what, read);
  if (!rows) return rows.error();
  if (rows->empty()) return std::optional<T>{};
  return std::optional<T>(std::move(rows->front()));
}

ProjectRow read_project(const Stmt& st) {
  return ProjectRow{st.col_text(0), st.col_blob(1), static_cast<int>(st.col_int(2)), st.col_int(3)};
}

constexpr const char* k_resource_cols =
    "project, domain, workflow, launch_plan, resource_type, priority, attributes";

ResourceRow read_resource(const Stmt& st) {
  return ResourceRow{ResourceKey{st.col_text(0), st.col_text(1), st.col_text(2), st.col_text(3),
                                 static_cast<int>(st.col_int(4))},
                     static_cast<int>(st.col_int(5)), st.col_blob(6)};
}

constexpr const char* k_entity_cols =
    "kind, project, domain, name, version, blob, digest, state, created_at, updated_at, seq";

EntityRow read_entity(const Stmt& st) {
  EntityRow r;
  r.key = EntityKey{static_cast<EntityKind>(st.col_int(0)), st.col_text(1), st.col_text(2),
                    st.col_text(3), st.col_text(4)};
  r.blob = st.col_blob(5);
  r.digest = st.col_text(6);
  r.state = static_cast<int>(st.col_int(7));
  r.created_at_ms = st.col_int(8);
  r.updated_at_ms = st.col_int(9);
  r.seq = st.col_int(10);
  return r;
}

std::string sql(const char* head, const char* cols, const char* tail) {
  return std::string(head) + cols + tail;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::open(const std::string& path) {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    Error e = make_error(ErrorCode::internal, "emulator: open database " + path + ": " +
                                                  (db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return e;
  }
  std::unique_ptr<Store> store(new Store(db, path));
  sqlite3_busy_timeout(db, 5000);
  // WAL + FULL: a committed write survives a SIGKILL (and power loss) of this process.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"}) {
    auto st = exec(db, pragma, pragma);
    if (!st) return st.error();
  }
  int version = 0;
  {
    Stmt st(db, "PRAGMA user_version");
    if (!st.prepared() || st.step() != SQLITE_ROW) return sql_error(db, "read schema version");
    version = static_cast<int>(st.col_int(0));
  }
  if (version > k_schema_version) {
    return make_error(ErrorCode::internal, "emulator: database " + path + " has schema version " +
                                               std::to_string(version) +
                                               ", newer than this build supports (" +
                                               std::to_string(k_schema_version) + ")");
  }
  auto created = exec(db, "BEGIN IMMEDIATE", "begin schema");
  if (!created) return created.error();
  created = exec(db, k_schema, "create schema");
  if (created) created = exec(db, "PRAGMA user_version=1", "set schema version");
  if (!created) {
    (void)exec(db, "ROLLBACK", "rollback schema");
    return created.error();
  }
  created = exec(db, "COMMIT", "commit schema");
  if (!created) return created.error();
  return store;
}

Store::~Store() { sqlite3_close_v2(m_db); }

Result<Tx> Store::begin(bool write) {
  std::unique_lock<std::mutex> lock(m_mu);
  auto st = exec(m_db, write ? "BEGIN IMMEDIATE" : "BEGIN", "begin transaction");
  if (!st) return st.error();
  Tx tx(this, std::move(lock));
  tx.m_open = true;
  return Result<Tx>(std::move(tx));
}

Tx::Tx(Store* store, std::unique_lock<std::mutex> lock) : m_store(store), m_lock(std::move(lock)) {}

Tx::Tx(Tx&& other) noexcept
    : m_store(other.m_store), m_lock(std::move(other.m_lock)), m_open(other.m_open) {
  other.m_open = false;
}

Tx::~Tx() {
  if (m_open) (void)exec(m_store->m_db, "ROLLBACK", "rollback");
}

Status Tx::commit() {
  auto st = exec(m_store->m_db, "COMMIT", "commit");
  if (!st) {
    (void)exec(m_store->m_db, "ROLLBACK", "rollback");
  }
  m_open = false;
  return st;
}

Result<std::optional<ProjectRow>> Tx::get_project(const std::string& id) {
  Stmt st(m_store->m_db, "SELECT id, blob, state, seq FROM projects WHERE id = ?");
  st.text(id);
  return first<ProjectRow>(m_store->m_db, st, "get project", read_project);
}

Status Tx::insert_project(const ProjectRow& row) {
  Stmt st(m_store->m_db, "INSERT INTO projects(id, blob, state) VALUES (?, ?, ?)");
  st.text(row.id).blob(row.blob).integer(row.state);
  return run(m_store->m_db, st, "insert project");
}

Status Tx::update_project(const ProjectRow& row) {
  Stmt st(m_store->m_db, "UPDATE projects SET blob = ?, state = ? WHERE id = ?");
  st.blob(row.blob).integer(row.state).text(row.id);
  return run(m_store->m_db, st, "update project");
}

Result<std::vector<ProjectRow>> Tx::list_projects() {
  Stmt st(m_store->m_db, "SELECT id, blob, state, seq FROM projects ORDER BY seq");
  return collect<ProjectRow>(m_store->m_db, st, "list projects", read_project);
}

Result<std::optional<ResourceRow>> Tx::get_resource(const ResourceKey& k) {
  const auto q = sql("SELECT ", k_resource_cols,
                     " FROM resources WHERE project = ? AND domain = ? AND workflow = ? AND "
                     "launch_plan = ? AND resource_type = ?");
  Stmt st(m_store->m_db, q.c_str());
  st.text(k.project).text(k.domain).text(k.workflow).text(k.launch_plan).integer(k.resource_type);
  return first<ResourceRow>(m_store->m_db, st, "get resource", read_resource);
}

Result<std::optional<ResourceRow>> Tx::most_specific_resource(int type, const std::string& project,
                                                              const std::string& domain,
                                                              const std::string& workflow) {
  // FlyteAdmin: resource_type = T AND domain IN ('', d) AND project IN ('', p)
  //   AND workflow IN ('', wf) AND launch_plan IN ('') ORDER BY priority DESC LIMIT 1
  const auto q = sql("SELECT ", k_resource_cols,
                     " FROM resources WHERE resource_type = ? AND domain IN ('', ?) AND project IN "
                     "('', ?) AND workflow IN ('', ?) AND launch_plan = '' "
                     "ORDER BY priority DESC, seq LIMIT 1");
  Stmt st(m_store->m_db, q.c_str());
  st.integer(type).text(domain).text(project).text(workflow);
  return first<ResourceRow>(m_store->m_db, st, "get resource", read_resource);
}

Status Tx::upsert_resource(const ResourceRow& r) {
  Stmt st(m_store->m_db,
          "INSERT INTO resources(project, domain, workflow, launch_plan, resource_type, priority, "
          "attributes) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(project, domain, workflow, "
          "launch_plan, resource_type) DO UPDATE SET priority = excluded.priority, attributes = "
          "excluded.attributes");
  st.text(r.key.project).text(r.key.domain).text(r.key.workflow).text(r.key.launch_plan);
  st.integer(r.key.resource_type).integer(r.priority).blob(r.attributes);
  return run(m_store->m_db, st, "upsert resource");
}

Result<int64_t> Tx::delete_resources(int type, const std::string& project,
                                     const std::string& domain, const std::string& workflow) {
  // Mirrors a GORM struct condition: empty fields are dropped from the WHERE clause.
  Stmt st(
      m_store->m_db,
      "DELETE FROM resources WHERE resource_type = ? AND project = ? AND (? = '' OR domain = ?) "
      "AND (? = '' OR workflow = ?)");
  st.integer(type).text(project).text(domain).text(domain).text(workflow).text(workflow);
  auto ok = run(m_store->m_db, st, "delete resources");
  if (!ok) return ok.error();
  return static_cast<int64_t>(sqlite3_changes(m_store->m_db));
}

Result<std::vector<ResourceRow>> Tx::list_resources(int type) {
  const auto q = sql("SELECT ", k_resource_cols,
                     " FROM resources WHERE resource_type = ? ORDER BY priority DESC, seq");
  Stmt st(m_store->m_db, q.c_str());
  st.integer(type);
  return collect<ResourceRow>(m_store->m_db, st, "list resources", read_resource);
}

Result<std::optional<EntityRow>> Tx::get_entity(const EntityKey& k) {
  const auto q = sql("SELECT ", k_entity_cols,
                     " FROM entities WHERE kind = ? AND project = ? AND domain = ? AND name = ? "
                     "AND version = ?");
  Stmt st(m_store->m_db, q.c_str());
  st.integer(static_cast<int>(k.kind)).text(k.project).text(k.domain).text(k.name).text(k.version);
  return first<EntityRow>(m_store->m_db, st, "get entity", read_entity);
}

Status Tx::insert_entity(const EntityRow& r) {
  Stmt st(m_store->m_db,
          "INSERT INTO entities(kind, project, domain, name, version, blob, digest, state, "
          "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.integer(static_cast<int>(r.key.kind)).text(r.key.project).text(r.key.domain);
  st.text(r.key.name).text(r.key.version).blob(r.blob).text(r.digest).integer(r.state);
  st.integer(r.created_at_ms).integer(r.updated_at_ms);
  return run(m_store->m_db, st, "insert entity");
}

Result<std::vector<EntityRow>> Tx::list_entities(EntityKind kind, const std::string& project,
                                                 const std::string& domain,
                                                 const std::string& name) {
  const auto q = sql("SELECT ", k_entity_cols,
                     " FROM entities WHERE kind = ? AND project = ? AND domain = ? AND "
                     "(? = '' OR name = ?) ORDER BY seq");
  Stmt st(m_store->m_db, q.c_str());
  st.integer(static_cast<int>(kind)).text(project).text(domain).text(name).text(name);
  return collect<EntityRow>(m_store->m_db, st, "list entities", read_entity);
}

Status Tx::set_entity_state(const EntityKey& k, int state, int64_t updated_at_ms) {
  Stmt st(m_store->m_db,
          "UPDATE entities SET state = ?, updated_at = ? WHERE kind = ? AND project = ? AND "
          "domain = ? AND name = ? AND version = ?");
  st.integer(state).integer(updated_at_ms).integer(static_cast<int>(k.kind));
  st.text(k.project).text(k.domain).text(k.name).text(k.version);
  return run(m_store->m_db, st, "set entity state");
}

Result<std::vector<EntityKey>> Tx::clear_state(const EntityKey& k, int state,
                                               int64_t updated_at_ms) {
  auto rows = entities_with_state(k.kind, k.project, k.domain, k.name, state);
  if (!rows) return rows.error();
  std::vector<EntityKey> cleared;
  for (const auto& r : *rows) {
    auto st = set_entity_state(r.key, 0, updated_at_ms);
    if (!st) return st.error();
    cleared.push_back(r.key);
  }
  return cleared;
}

Result<std::vector<EntityRow>> Tx::entities_with_state(EntityKind kind, const std::string& project,
                                                       const std::string& domain,
                                                       const std::string& name, int state) {
  const auto q = sql("SELECT ", k_entity_cols,
                     " FROM entities WHERE kind = ? AND project = ? AND domain = ? AND "
                     "(? = '' OR name = ?) AND state = ? ORDER BY seq");
  Stmt st(m_store->m_db, q.c_str());
  st.integer(static_cast<int>(kind)).text(project).text(domain).text(name).text(name);
  st.integer(state);
  return collect<EntityRow>(m_store->m_db, st, "list entities by state", read_entity);
}

Status Tx::put_upload_location(const UploadLocation& loc) {
  Stmt st(m_store->m_db,
          "INSERT INTO upload_locations(path, md5, expires_at) VALUES (?, ?, ?) ON CONFLICT(path) "
          "DO UPDATE SET md5 = excluded.md5, expires_at = excluded.expires_at");
  st.text(loc.path).blob(loc.md5).integer(loc.expires_at_ms);
  return run(m_store->m_db, st, "put upload location");
}

Result<std::optional<UploadLocation>> Tx::get_upload_location(const std::string& path) {
  Stmt st(m_store->m_db, "SELECT path, md5, expires_at FROM upload_locations WHERE path = ?");
  st.text(path);
  return first<UploadLocation>(m_store->m_db, st, "get upload location", [](const Stmt& s) {
    return UploadLocation{s.col_text(0), s.col_blob(1), s.col_int(2)};
  });
}

Status Tx::put_upload(const std::string& native_url, const std::string& md5,
                      const std::string& data) {
  Stmt st(m_store->m_db,
          "INSERT INTO uploads(native_url, md5, data) VALUES (?, ?, ?) ON CONFLICT(native_url) "
          "DO UPDATE SET md5 = excluded.md5, data = excluded.data");
  st.text(native_url).blob(md5).blob(data);
  return run(m_store->m_db, st, "put upload");
}

Result<std::optional<std::string>> Tx::get_upload(const std::string& native_url) {
  Stmt st(m_store->m_db, "SELECT data FROM uploads WHERE native_url = ?");
  st.text(native_url);
  return first<std::string>(m_store->m_db, st, "get upload",
                            [](const Stmt& s) { return s.col_blob(0); });
}

Result<std::optional<std::string>> Tx::get_upload_md5(const std::string& native_url) {
  Stmt st(m_store->m_db, "SELECT md5 FROM uploads WHERE native_url = ?");
  st.text(native_url);
  return first<std::string>(m_store->m_db, st, "get upload md5",
                            [](const Stmt& s) { return s.col_blob(0); });
}

}  // namespace flytecd::sinks::emulator
