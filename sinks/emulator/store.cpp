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
// CREATE TABLE IF NOT EXISTS, so an older file opens as it is and is upgraded in place; indexes
// the same way: resources_by_type serves ListMatchableAttributes, and the lookups by project
// write "+resource_type" so that they never take it).
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
CREATE INDEX IF NOT EXISTS resources_by_type ON resources(resource_type, priority DESC, seq);
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
    end_write();
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

void Store::end_write() {
  if (keep_group_open()) return;
  // The committer (running from open() until the destructor, when no Tx is left) may be syncing
  // the previous group: it finds this one when the sync returns.
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
  if (m_durable >= group) {
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
    m_store->end_write();
  }
}

Status Tx::commit() {
  if (m_savepoint) {
    m_savepoint = false;
    Store& s = *m_store;
    if (auto st = s.m_db->exec("RELEASE rpc", "commit write"); !st) {
      (void)s.m_db->exec("ROLLBACK TO rpc; RELEASE rpc", "roll back write");
      s.end_write();
      return st;
    }
    ++s.m_group_writes;
    ++s.m_stats.writes;
    s.end_write();
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

}  // namespace flytecd::sinks::emulator
