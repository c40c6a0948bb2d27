#include "sinks/emulator/store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <string>
#include <utility>
#include <vector>

#include "daemon/common/sqlite.hpp"

namespace flytecd::sinks::emulator {
namespace {

thread_local DeferredAck* t_deferred = nullptr;  // the handler's, while it runs

// 1: FlyteAdmin's tables; 2: and Flyte 2's settings; 3: and Flyte 2's projects (each added by
// CREATE TABLE IF NOT EXISTS, so an older file opens as it is and is upgraded in place).
constexpr int k_schema_version = 3;

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
CREATE INDEX IF NOT EXISTS entities_by_version ON entities(kind, project, domain, version);
CREATE TABLE IF NOT EXISTS upload_locations(
  path TEXT PRIMARY KEY, md5 BLOB NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS uploads(
  native_url TEXT PRIMARY KEY, md5 BLOB NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS settings(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL UNIQUE, data TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS flyte2_projects(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  identifier TEXT NOT NULL UNIQUE, name TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '', labels BLOB NOT NULL DEFAULT '',
  state INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
)sql";

// Collects every row through `read`.
template <typename T, typename F>
Result<std::vector<T>> collect(sqlite::Statement& st, F read) {
  std::vector<T> out;
  auto s = st.each([&](const sqlite::Statement& row) { out.push_back(read(row)); });
  if (!s) return s.error();
  return out;
}

template <typename T, typename F>
Result<std::optional<T>> first(sqlite::Statement& st, F read) {
  auto rows = collect<T>(st, read);
  if (!rows) return rows.error();
  if (rows->empty()) return std::optional<T>{};
  return std::optional<T>(std::move(rows->front()));
}

ProjectRow read_project(const sqlite::Statement& st) {
  return ProjectRow{st.text(0), st.blob(1), static_cast<int>(st.int64(2)), st.int64(3)};
}

constexpr const char* k_resource_cols =
    "project, domain, workflow, launch_plan, resource_type, priority, attributes";

ResourceRow read_resource(const sqlite::Statement& st) {
  return ResourceRow{
      ResourceKey{st.text(0), st.text(1), st.text(2), st.text(3), static_cast<int>(st.int64(4))},
      static_cast<int>(st.int64(5)), st.blob(6)};
}

constexpr const char* k_entity_cols =
    "kind, project, domain, name, version, blob, digest, state, created_at, updated_at, seq";

EntityRow read_entity(const sqlite::Statement& st) {
  EntityRow r;
  r.key = EntityKey{static_cast<EntityKind>(st.int64(0)), st.text(1), st.text(2), st.text(3),
                    st.text(4)};
  r.blob = st.blob(5);
  r.digest = st.text(6);
  r.state = static_cast<int>(st.int64(7));
  r.created_at_ms = st.int64(8);
  r.updated_at_ms = st.int64(9);
  r.seq = st.int64(10);
  return r;
}

std::string sql(const char* head, const char* cols, const char* tail) {
  return std::string(head) + cols + tail;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::open(const std::string& path,
                                           std::chrono::milliseconds max_group_age) {
  // WAL + NORMAL: SQLite's COMMIT writes the WAL without syncing it; the store syncs the WAL
  // itself, outside its lock, before any write of the group is acknowledged (see make_durable),
  // so an acknowledged write survives a SIGKILL and power loss as with synchronous=FULL, and the
  // next group runs while this one's fdatasync is in flight.
  sqlite::OpenOptions options;
  options.synchronous = "NORMAL";
  auto db = sqlite::Database::open(path, "emulator: sqlite", options);
  if (!db) return db.error();
  std::unique_ptr<Store> store(new Store(std::move(*db), path));
  store->m_max_group_age = max_group_age;
  sqlite::Database& d = *store->m_db;
  int version = 0;
  {
    auto st = d.prepare("PRAGMA user_version", "read schema version");
    if (!st) return st.error();
    auto row = st->step();
    if (!row) return row.error();
    if (*row) version = static_cast<int>(st->int64(0));
  }
  if (version > k_schema_version) {
    return make_error(ErrorCode::internal, "emulator: database " + path + " has schema version " +
                                               std::to_string(version) +
                                               ", newer than this build supports (" +
                                               std::to_string(k_schema_version) + ")");
  }
  auto tx = sqlite::Transaction::begin(d, sqlite::Transaction::Mode::immediate);
  if (!tx) return tx.error();
  if (auto s = d.exec(k_schema, "create schema"); !s) return s.error();
  if (auto s =
          d.exec("PRAGMA user_version=" + std::to_string(k_schema_version), "set schema version");
      !s)
    return s.error();
  if (auto s = tx->commit(); !s) return s.error();
  // Up to 32 MiB of pages kept between transactions (SQLite's default is 2 MiB): a registration's
  // observation reads each of its entities by key, and with the default every read past the
  // first few thousand rows went back to the file (pread) for pages it had read a moment before.
  if (auto s = d.exec("PRAGMA cache_size=-32768", "PRAGMA cache_size"); !s) return s.error();
  if (path != ":memory:" && !path.empty()) {
    // The WAL exists from the schema transaction on and stays while the connection is open.
    store->m_wal_fd = ::open((path + "-wal").c_str(), O_RDONLY | O_CLOEXEC);
    if (store->m_wal_fd < 0) {
      // No WAL to sync (journal_mode=WAL refused here): let SQLite sync at every COMMIT.
      if (auto s = d.exec("PRAGMA synchronous=FULL", "PRAGMA synchronous=FULL"); !s)
        return s.error();
    }
  }
  Store* raw = store.get();
  store->m_committer = std::thread([raw] { raw->commit_loop(); });
  return store;
}

Store::Store(std::unique_ptr<sqlite::Database> db, std::string path)
    : m_db(std::move(db)), m_path(std::move(path)) {}

Store::~Store() {
  // No Tx is open, so no writer waits on a group; one left open is committed and synced.
  if (m_committer.joinable()) {
    {
      std::lock_guard<std::mutex> lock(m_mu);
      m_closing = true;
    }
    m_commit_wanted.notify_one();
    m_committer.join();
  }
  std::vector<std::pair<Status, std::function<void(Status)>>> acks;
  {
    std::unique_lock<std::mutex> lock(m_mu);
    settle(lock);
    acks = take_ready_acks();  // none when the server stopped first, as it does
  }
  for (auto& [outcome, done] : acks) done(outcome);
  if (m_wal_fd >= 0) ::close(m_wal_fd);
}

GroupCommitStats Store::group_commit_stats() {
  std::unique_lock<std::mutex> lock(m_mu);
  return m_stats;
}

Result<Tx> Store::begin(bool write) {
  if (!write) {
    std::unique_lock<std::mutex> lock(m_mu);
    // A read sees acknowledged writes only: the open group commits, and the reader waits until
    // every committed group is on disk.
    settle(lock);
    auto t = sqlite::Transaction::begin(*m_db, sqlite::Transaction::Mode::deferred);
    if (!t) return t.error();
    Tx tx(this, std::move(lock));
    tx.m_tx.emplace(std::move(*t));
    return Result<Tx>(std::move(tx));
  }
  m_writers_waiting.fetch_add(1);
  std::unique_lock<std::mutex> lock(m_mu);
  m_writers_waiting.fetch_sub(1);
  if (!m_group_open) {
    if (auto s = m_db->exec("BEGIN IMMEDIATE", "begin transaction"); !s) return s.error();
    m_group_open = true;
    ++m_group;
    m_group_writes = 0;
    m_group_started = std::chrono::steady_clock::now();
  }
  if (auto s = m_db->exec("SAVEPOINT rpc", "begin write"); !s) {
    // Others' writes may wait in this group: it must not be left open without a writer.
    end_write(lock);
    return s.error();
  }
  Tx tx(this, std::move(lock));
  tx.m_group = m_group;
  tx.m_savepoint = true;
  return Result<Tx>(std::move(tx));
}

void Store::settle(std::unique_lock<std::mutex>& lock) {
  // Both waits unlock, and a writer may open a new group meanwhile: check again after each.
  for (;;) {
    if (m_group_open) {
      commit_group();
      make_durable(lock);
    } else if (m_durable < m_committed) {
      m_group_ended.wait(lock);
    } else {
      return;
    }
  }
}

bool Store::keep_group_open() const {
  return m_writers_waiting.load() > 0 && m_group_writes < k_max_group_writes &&
         std::chrono::steady_clock::now() - m_group_started < m_max_group_age;
}

void Store::end_write(std::unique_lock<std::mutex>& lock) {
  if (keep_group_open()) return;
  if (!m_committer.joinable()) {  // the store is being opened: no committer yet
    commit_group();
    make_durable(lock);
    return;
  }
  // The committer may be syncing the previous group: it finds this one when the sync returns.
  m_commit_requested = true;
  m_commit_wanted.notify_one();
}

void Store::commit_loop() {
  std::unique_lock<std::mutex> lock(m_mu);
  for (;;) {
    m_commit_wanted.wait(lock, [&] {
      return m_commit_requested || m_closing ||
             (!m_acks.empty() && m_acks.front().first <= m_durable);
    });
    if (m_commit_requested) {
      m_commit_requested = false;
      // A reader (settle) may have ended the group already.
      if (m_group_open) commit_group();
      make_durable(lock);
    }
    auto ready = take_ready_acks();
    if (!ready.empty()) {
      // Outside the lock: an acknowledgement sends a reply (gRPC), and the next group forms.
      lock.unlock();
      for (auto& [outcome, done] : ready) done(outcome);
      lock.lock();
      continue;
    }
    if (m_closing && !m_commit_requested) return;
  }
}

std::vector<std::pair<Status, std::function<void(Status)>>> Store::take_ready_acks() {
  std::vector<std::pair<Status, std::function<void(Status)>>> ready;
  size_t n = 0;
  while (n < m_acks.size() && m_acks[n].first <= m_durable) ++n;
  if (n == 0) return ready;
  ready.reserve(n);
  for (size_t i = 0; i < n; ++i)
    ready.emplace_back(outcome_of(m_acks[i].first), std::move(m_acks[i].second));
  m_acks.erase(m_acks.begin(), m_acks.begin() + static_cast<std::ptrdiff_t>(n));
  return ready;
}

void Store::when_durable(uint64_t group, std::function<void(Status)> done) {
  std::unique_lock<std::mutex> lock(m_mu);
  if (m_durable >= group || !m_committer.joinable()) {
    Status outcome = outcome_of(group);
    lock.unlock();
    done(outcome);
    return;
  }
  // Groups become durable in order, and acknowledgements are asked in order of their group
  // (a handler's group is the newest when it asks), so m_acks stays sorted: insert from the back.
  auto at = m_acks.end();
  while (at != m_acks.begin() && std::prev(at)->first > group) --at;
  m_acks.emplace(at, group, std::move(done));
  m_commit_wanted.notify_one();
}

void Store::commit_group() {
  auto s = m_db->exec("COMMIT", "commit");
  if (!s) {
    (void)m_db->exec("ROLLBACK", "rollback");
    m_failed_groups.emplace(m_group, s.error());
    m_any_failed.store(true);
    // Writers of a group wake within a few groups of its end; older failures are not asked for.
    while (m_failed_groups.size() > 64) m_failed_groups.erase(m_failed_groups.begin());
  }
  ++m_stats.commits;
  m_group_open = false;
  m_committed = m_group;
}

void Store::make_durable(std::unique_lock<std::mutex>& lock) {
  const uint64_t upto = m_committed;
  if (m_durable >= upto) return;
  if (m_wal_fd >= 0) {
    // Outside the lock: the next group forms and commits while this fdatasync runs. One
    // fdatasync covers every frame written to the WAL before it started.
    lock.unlock();
    const int rc = ::fdatasync(m_wal_fd);
    const int err = errno;
    lock.lock();
    if (rc != 0) {
      m_any_failed.store(true);
      for (uint64_t g = m_durable + 1; g <= upto; ++g)
        m_failed_groups.emplace(
            g, make_error(ErrorCode::internal,
                          "emulator: sqlite: fdatasync of the WAL: " + std::string(strerror(err))));
    }
  }
  if (upto > m_durable) m_durable = upto;
  // Writers waiting for an acknowledgement wake on the word; readers and settle() on the
  // condition variable (with m_mu).
  m_durable_word.store(static_cast<uint32_t>(m_durable));
  m_durable_word.notify_all();
  m_group_ended.notify_all();
  // A reader may have made the group durable: the committer runs its acknowledgements.
  if (!m_acks.empty()) m_commit_wanted.notify_one();
}

Status Store::outcome_of(uint64_t group) const {
  auto it = m_failed_groups.find(group);
  if (it == m_failed_groups.end()) return ok_status();
  return it->second;
}

DeferredAck::DeferredAck() { t_deferred = this; }
DeferredAck::~DeferredAck() { t_deferred = nullptr; }

Tx::Tx(Store* store, std::unique_lock<std::mutex> lock) : m_store(store), m_lock(std::move(lock)) {}

// Declared order matters: the transaction rolls back before the lock is released.
Tx::Tx(Tx&& other) noexcept
    : m_store(other.m_store),
      m_lock(std::move(other.m_lock)),
      m_tx(std::move(other.m_tx)),
      m_group(other.m_group),
      m_savepoint(std::exchange(other.m_savepoint, false)) {
  other.m_tx.reset();
}

Tx::~Tx() {
  m_tx.reset();
  if (m_savepoint && m_lock.owns_lock()) {
    // A write that did not commit: undo its changes; the group goes on without them.
    (void)m_store->m_db->exec("ROLLBACK TO rpc; RELEASE rpc", "roll back write");
    m_store->end_write(m_lock);
  }
}

Status Tx::commit() {
  if (m_savepoint) {
    m_savepoint = false;
    Store& s = *m_store;
    if (auto st = s.m_db->exec("RELEASE rpc", "commit write"); !st) {
      (void)s.m_db->exec("ROLLBACK TO rpc; RELEASE rpc", "roll back write");
      s.end_write(m_lock);
      return st;
    }
    ++s.m_group_writes;
    ++s.m_stats.writes;
    s.end_write(m_lock);
    if (s.m_durable >= m_group) return s.outcome_of(m_group);
    if (t_deferred != nullptr) {  // the handler acknowledges after Store::when_durable
      t_deferred->m_pending = DeferredAck::Pending{m_store, m_group};
      m_lock.unlock();
      return ok_status();
    }
    // Wait without m_mu: the next group's writers take it meanwhile, and a writer of this group
    // must not wait for them to be acknowledged. Wraps of the 32-bit word compare right while
    // fewer than 2^31 groups end during one wait.
    m_lock.unlock();
    const auto group = static_cast<uint32_t>(m_group);
    for (uint32_t seen = s.m_durable_word.load(); static_cast<int32_t>(seen - group) < 0;
         seen = s.m_durable_word.load())
      s.m_durable_word.wait(seen);
    if (!s.m_any_failed.load()) return ok_status();
    std::lock_guard<std::mutex> relock(s.m_mu);
    return s.outcome_of(m_group);
  }
  if (!m_tx) return make_error(ErrorCode::internal, "emulator: sqlite: commit: no transaction");
  auto st = m_tx->commit();
  m_tx.reset();
  return st;
}

Result<std::optional<ProjectRow>> Tx::get_project(const std::string& id) {
  auto st = m_store->m_db->prepare("SELECT id, blob, state, seq FROM projects WHERE id = ?",
                                   "get project");
  if (!st) return st.error();
  st->bind(id);
  return first<ProjectRow>(*st, read_project);
}

Status Tx::insert_project(const ProjectRow& row) {
  auto st = m_store->m_db->prepare("INSERT INTO projects(id, blob, state) VALUES (?, ?, ?)",
                                   "insert project");
  if (!st) return st.error();
  st->bind(row.id).bind_blob(row.blob).bind(row.state);
  return st->run();
}

Status Tx::update_project(const ProjectRow& row) {
  auto st = m_store->m_db->prepare("UPDATE projects SET blob = ?, state = ? WHERE id = ?",
                                   "update project");
  if (!st) return st.error();
  st->bind_blob(row.blob).bind(row.state).bind(row.id);
  return st->run();
}

Result<std::vector<ProjectRow>> Tx::list_projects() {
  auto st = m_store->m_db->prepare("SELECT id, blob, state, seq FROM projects ORDER BY seq",
                                   "list projects");
  if (!st) return st.error();
  return collect<ProjectRow>(*st, read_project);
}

Result<std::optional<ResourceRow>> Tx::get_resource(const ResourceKey& k) {
  const auto q = sql("SELECT ", k_resource_cols,
                     " FROM resources WHERE project = ? AND domain = ? AND workflow = ? AND "
                     "launch_plan = ? AND resource_type = ?");
  auto st = m_store->m_db->prepare(q.c_str(), "get resource");
  if (!st) return st.error();
  st->bind(k.project).bind(k.domain).bind(k.workflow).bind(k.launch_plan).bind(k.resource_type);
  return first<ResourceRow>(*st, read_resource);
}

Result<std::optional<ResourceRow>> Tx::first_resource_like(const ResourceKey& k) {
  // Only the set fields go into the WHERE clause, as GORM builds it; that also lets SQLite use
  // the (project, domain, ...) unique index ("? = '' OR project = ?" scanned the whole table on
  // every plugin-override update: 36k rows each at 2,000 projects).
  std::string where = "resource_type = ?";
  std::vector<const std::string*> values;
  for (auto [column, value] :
       {std::pair{" AND project = ?", &k.project}, std::pair{" AND domain = ?", &k.domain},
        std::pair{" AND workflow = ?", &k.workflow},
        std::pair{" AND launch_plan = ?", &k.launch_plan}})
    if (!value->empty()) {
      where += column;
      values.push_back(value);
    }
  const std::string tail = " FROM resources WHERE " + where + " ORDER BY seq LIMIT 1";
  const auto q = sql("SELECT ", k_resource_cols, tail.c_str());
  auto st = m_store->m_db->prepare(q.c_str(), "get raw resource");
  if (!st) return st.error();
  st->bind(k.resource_type);
  for (const auto* v : values) st->bind(*v);
  return first<ResourceRow>(*st, read_resource);
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
  auto st = m_store->m_db->prepare(q.c_str(), "get resource");
  if (!st) return st.error();
  st->bind(type).bind(domain).bind(project).bind(workflow);
  return first<ResourceRow>(*st, read_resource);
}

Status Tx::upsert_resource(const ResourceRow& r) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO resources(project, domain, workflow, launch_plan, resource_type, priority, "
      "attributes) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(project, domain, workflow, "
      "launch_plan, resource_type) DO UPDATE SET priority = excluded.priority, attributes = "
      "excluded.attributes",
      "upsert resource");
  if (!st) return st.error();
  st->bind(r.key.project).bind(r.key.domain).bind(r.key.workflow).bind(r.key.launch_plan);
  st->bind(r.key.resource_type).bind(r.priority).bind_blob(r.attributes);
  return st->run();
}

Result<int64_t> Tx::delete_resources(int type, const std::string& project,
                                     const std::string& domain, const std::string& workflow) {
  // Mirrors a GORM struct condition: empty fields are dropped from the WHERE clause.
  auto st = m_store->m_db->prepare(
      "DELETE FROM resources WHERE resource_type = ? AND project = ? AND (? = '' OR domain = ?) "
      "AND (? = '' OR workflow = ?)",
      "delete resources");
  if (!st) return st.error();
  st->bind(type).bind(project).bind(domain).bind(domain).bind(workflow).bind(workflow);
  auto ok = st->run();
  if (!ok) return ok.error();
  return static_cast<int64_t>(m_store->m_db->changes());
}

Result<std::vector<ResourceRow>> Tx::list_resources(int type) {
  const auto q = sql("SELECT ", k_resource_cols,
                     " FROM resources WHERE resource_type = ? ORDER BY priority DESC, seq");
  auto st = m_store->m_db->prepare(q.c_str(), "list resources");
  if (!st) return st.error();
  st->bind(type);
  return collect<ResourceRow>(*st, read_resource);
}

Result<std::optional<EntityRow>> Tx::get_entity(const EntityKey& k) {
  const auto q = sql("SELECT ", k_entity_cols,
                     " FROM entities WHERE kind = ? AND project = ? AND domain = ? AND name = ? "
                     "AND version = ?");
  auto st = m_store->m_db->prepare(q.c_str(), "get entity");
  if (!st) return st.error();
  st->bind(static_cast<int>(k.kind)).bind(k.project).bind(k.domain).bind(k.name).bind(k.version);
  return first<EntityRow>(*st, read_entity);
}

Status Tx::insert_entity(const EntityRow& r) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO entities(kind, project, domain, name, version, blob, digest, state, "
      "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      "insert entity");
  if (!st) return st.error();
  st->bind(static_cast<int>(r.key.kind)).bind(r.key.project).bind(r.key.domain);
  st->bind(r.key.name).bind(r.key.version).bind_blob(r.blob).bind(r.digest).bind(r.state);
  st->bind(r.created_at_ms).bind(r.updated_at_ms);
  return st->run();
}

Result<std::vector<EntityRow>> Tx::list_entities(EntityKind kind, const std::string& project,
                                                 const std::string& domain, const std::string& name,
                                                 const std::string& version) {
  // Only the fields given are compared, so SQLite picks the index that matches them (a list at
  // one version reads entities_by_version; "? = '' OR version = ?" scanned every row of the kind).
  std::string where = " FROM entities WHERE kind = ?";
  const std::pair<const char*, const std::string*> fields[] = {{" AND project = ?", &project},
                                                               {" AND domain = ?", &domain},
                                                               {" AND name = ?", &name},
                                                               {" AND version = ?", &version}};
  for (const auto& [clause, value] : fields)
    if (!value->empty()) where += clause;
  where += " ORDER BY seq";
  const auto q = sql("SELECT ", k_entity_cols, where.c_str());
  auto st = m_store->m_db->prepare(q.c_str(), "list entities");
  if (!st) return st.error();
  st->bind(static_cast<int>(kind));
  for (const auto& [clause, value] : fields)
    if (!value->empty()) st->bind(*value);
  return collect<EntityRow>(*st, read_entity);
}

Status Tx::set_entity_state(const EntityKey& k, int state, int64_t updated_at_ms) {
  auto st = m_store->m_db->prepare(
      "UPDATE entities SET state = ?, updated_at = ? WHERE kind = ? AND project = ? AND "
      "domain = ? AND name = ? AND version = ?",
      "set entity state");
  if (!st) return st.error();
  st->bind(state).bind(updated_at_ms).bind(static_cast<int>(k.kind));
  st->bind(k.project).bind(k.domain).bind(k.name).bind(k.version);
  return st->run();
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
  auto st = m_store->m_db->prepare(q.c_str(), "list entities by state");
  if (!st) return st.error();
  st->bind(static_cast<int>(kind)).bind(project).bind(domain).bind(name).bind(name);
  st->bind(state);
  return collect<EntityRow>(*st, read_entity);
}

Status Tx::put_upload_location(const UploadLocation& loc) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO upload_locations(path, md5, expires_at) VALUES (?, ?, ?) ON CONFLICT(path) "
      "DO UPDATE SET md5 = excluded.md5, expires_at = excluded.expires_at",
      "put upload location");
  if (!st) return st.error();
  st->bind(loc.path).bind_blob(loc.md5).bind(loc.expires_at_ms);
  return st->run();
}

Result<std::optional<UploadLocation>> Tx::get_upload_location(const std::string& path) {
  auto st = m_store->m_db->prepare(
      "SELECT path, md5, expires_at FROM upload_locations WHERE path = ?", "get upload location");
  if (!st) return st.error();
  st->bind(path);
  return first<UploadLocation>(*st, [](const sqlite::Statement& s) {
    return UploadLocation{s.text(0), s.blob(1), s.int64(2)};
  });
}

Status Tx::put_upload(const std::string& native_url, const std::string& md5,
                      const std::string& data) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO uploads(native_url, md5, data) VALUES (?, ?, ?) ON CONFLICT(native_url) "
      "DO UPDATE SET md5 = excluded.md5, data = excluded.data",
      "put upload");
  if (!st) return st.error();
  st->bind(native_url).bind_blob(md5).bind_blob(data);
  return st->run();
}

Result<std::optional<std::string>> Tx::get_upload(const std::string& native_url) {
  auto st = m_store->m_db->prepare("SELECT data FROM uploads WHERE native_url = ?", "get upload");
  if (!st) return st.error();
  st->bind(native_url);
  return first<std::string>(*st, [](const sqlite::Statement& s) { return s.blob(0); });
}

Result<std::optional<std::string>> Tx::get_upload_md5(const std::string& native_url) {
  auto st =
      m_store->m_db->prepare("SELECT md5 FROM uploads WHERE native_url = ?", "get upload md5");
  if (!st) return st.error();
  st->bind(native_url);
  return first<std::string>(*st, [](const sqlite::Statement& s) { return s.blob(0); });
}

Result<std::vector<SettingsRow>> Tx::settings_by_keys(const std::vector<std::string>& keys) {
  std::vector<SettingsRow> out;
  auto st = m_store->m_db->prepare(
      "SELECT key, data, version, created_at, updated_at FROM settings WHERE key = ?",
      "get settings");
  if (!st) return st.error();
  for (const auto& key : keys) {
    st->reset();
    st->bind(key);
    auto row = first<SettingsRow>(*st, [](const sqlite::Statement& s) {
      return SettingsRow{s.text(0), s.text(1), static_cast<uint64_t>(s.int64(2)), s.int64(3),
                         s.int64(4)};
    });
    if (!row) return row.error();
    if (*row) out.push_back(std::move(**row));
  }
  return out;
}

Status Tx::insert_settings(const SettingsRow& row) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO settings(key, data, version, created_at, updated_at) VALUES (?, ?, 1, ?, ?) "
      "ON CONFLICT(key) DO NOTHING",
      "create settings");
  if (!st) return st.error();
  st->bind(row.key).bind(row.data).bind(row.created_at_ms).bind(row.updated_at_ms);
  if (auto s = st->run(); !s) return s;
  if (m_store->m_db->changes() == 0)
    return make_error(ErrorCode::already_exists, "settings already exist: " + row.key);
  return ok_status();
}

Result<int64_t> Tx::update_settings(const std::string& key, const std::string& data,
                                    uint64_t version, int64_t updated_at_ms) {
  auto st = m_store->m_db->prepare(
      "UPDATE settings SET data = ?, version = version + 1, updated_at = ? WHERE key = ? AND "
      "version = ?",
      "update settings");
  if (!st) return st.error();
  st->bind(data).bind(updated_at_ms).bind(key).bind(static_cast<int64_t>(version));
  if (auto s = st->run(); !s) return s.error();
  return static_cast<int64_t>(m_store->m_db->changes());
}

namespace {
constexpr const char* k_flyte2_project_cols =
    "identifier, name, description, labels, state, created_at, updated_at";
Flyte2ProjectRow read_flyte2_project(const sqlite::Statement& s) {
  return Flyte2ProjectRow{s.text(0),  s.text(1),  s.text(2), s.blob(3),
                          s.int64(4), s.int64(5), s.int64(6)};
}
}  // namespace

Status Tx::insert_flyte2_project(const Flyte2ProjectRow& row) {
  auto st =
      m_store->m_db->prepare(std::string("INSERT INTO flyte2_projects(") + k_flyte2_project_cols +
                                 ") VALUES (?, ?, ?, ?, ?, ?, ?) "
                                 "ON CONFLICT(identifier) DO NOTHING",
                             "create project");
  if (!st) return st.error();
  st->bind(row.identifier).bind(row.name).bind(row.description).bind_blob(row.labels);
  st->bind(row.state).bind(row.created_at_ms).bind(row.updated_at_ms);
  if (auto s = st->run(); !s) return s;
  if (m_store->m_db->changes() == 0)
    return make_error(ErrorCode::already_exists, "project already exists: " + row.identifier);
  return ok_status();
}

Result<int64_t> Tx::update_flyte2_project(const Flyte2ProjectRow& row) {
  auto st = m_store->m_db->prepare(
      "UPDATE flyte2_projects SET name = ?, description = ?, labels = ?, state = ?, updated_at = ? "
      "WHERE identifier = ?",
      "update project");
  if (!st) return st.error();
  st->bind(row.name).bind(row.description).bind_blob(row.labels).bind(row.state);
  st->bind(row.updated_at_ms).bind(row.identifier);
  if (auto s = st->run(); !s) return s.error();
  return static_cast<int64_t>(m_store->m_db->changes());
}

Result<std::optional<Flyte2ProjectRow>> Tx::get_flyte2_project(const std::string& identifier) {
  auto st = m_store->m_db->prepare(
      std::string("SELECT ") + k_flyte2_project_cols + " FROM flyte2_projects WHERE identifier = ?",
      "get project");
  if (!st) return st.error();
  st->bind(identifier);
  return first<Flyte2ProjectRow>(*st, read_flyte2_project);
}

Result<std::vector<Flyte2ProjectRow>> Tx::list_flyte2_projects() {
  auto st = m_store->m_db->prepare(
      std::string("SELECT ") + k_flyte2_project_cols + " FROM flyte2_projects ORDER BY seq",
      "list projects");
  if (!st) return st.error();
  return collect<Flyte2ProjectRow>(*st, read_flyte2_project);
}

}  // namespace flytecd::sinks::emulator
