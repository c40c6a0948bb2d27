#include "daemon/common/sqlite.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <utility>

namespace flytecd::sqlite {

namespace {
constexpr size_t k_cached_texts = 256;
constexpr size_t k_cached_per_text = 8;
}  // namespace

Statement::~Statement() { release(); }

void Statement::release() {
  if (m_stmt == nullptr) return;
  sqlite3_stmt* stmt = std::exchange(m_stmt, nullptr);
  if (m_db == nullptr) {
    sqlite3_finalize(stmt);
    return;
  }
  m_db->give_back(std::move(m_sql), stmt);
}

Statement::Statement(Statement&& other) noexcept
    : m_db(other.m_db),
      m_stmt(std::exchange(other.m_stmt, nullptr)),
      m_sql(std::move(other.m_sql)),
      m_what(std::move(other.m_what)),
      m_index(other.m_index) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    release();
    m_db = other.m_db;
    m_stmt = std::exchange(other.m_stmt, nullptr);
    m_sql = std::move(other.m_sql);
    m_what = std::move(other.m_what);
    m_index = other.m_index;
  }
  return *this;
}

Statement& Statement::bind(std::string_view text) {
  sqlite3_bind_text64(m_stmt, ++m_index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Statement& Statement::bind(int64_t value) {
  sqlite3_bind_int64(m_stmt, ++m_index, value);
  return *this;
}

Statement& Statement::bind_blob(std::string_view bytes) {
  // A zero-length blob, not NULL, for an empty value (data() may be null).
  static const char k_empty = 0;
  sqlite3_bind_blob64(m_stmt, ++m_index, bytes.empty() ? &k_empty : bytes.data(), bytes.size(),
                      SQLITE_TRANSIENT);
  return *this;
}

Result<bool> Statement::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return m_db->error(m_what, rc);
}

Status Statement::run() {
  for (;;) {
    auto row = step();
    if (!row) return row.error();
    if (!*row) return ok_status();
  }
}

void Statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
  m_index = 0;
}

std::string Statement::text(int col) const {
  const auto* p = sqlite3_column_text(m_stmt, col);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(m_stmt, col)))
           : std::string();
}

std::string Statement::blob(int col) const {
  const void* p = sqlite3_column_blob(m_stmt, col);
  return p ? std::string(static_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(m_stmt, col)))
           : std::string();
}

int64_t Statement::int64(int col) const { return sqlite3_column_int64(m_stmt, col); }

Result<std::unique_ptr<Database>> Database::open(const std::string& path, std::string context,
                                                 const OpenOptions& options) {
  // A new database is created 0600 whatever the umask; SQLite gives its -wal and -shm files the
  // database file's mode.
  if (path != ":memory:" && !path.empty()) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
      const int err = ::fchmod(fd, 0600) == 0 ? 0 : errno;
      ::close(fd);
      if (err != 0)
        return make_error(
            ErrorCode::unavailable,
            context + ": open " + path + ": cannot set mode 0600: " + std::strerror(err));
    }
    // EEXIST: an existing database keeps its mode; any other error is SQLite's to report.
  }
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                    (options.serialized ? SQLITE_OPEN_FULLMUTEX : SQLITE_OPEN_NOMUTEX);
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    const std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return make_error(ErrorCode::unavailable, context + ": open " + path + ": " + msg);
  }
  std::unique_ptr<Database> out(new Database(db, std::move(context)));
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  if (options.wal) {
    if (auto s = out->exec("PRAGMA journal_mode=WAL", "PRAGMA journal_mode=WAL"); !s) {
      return s.error();
    }
  }
  const std::string sync = "PRAGMA synchronous=" + options.synchronous;
  if (auto s = out->exec(sync, sync); !s) return s.error();
  if (options.foreign_keys) {
    if (auto s = out->exec("PRAGMA foreign_keys=ON", "PRAGMA foreign_keys=ON"); !s) {
      return s.error();
    }
  }
  return out;
}

Database::~Database() {
  for (auto& [sql, stmts] : m_cache)
    for (auto* stmt : stmts) sqlite3_finalize(stmt);
  sqlite3_close_v2(m_db);
}

void Database::give_back(std::string sql, sqlite3_stmt* stmt) {
  // Rewound now: a statement left mid-read would hold its read transaction open.
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  std::lock_guard<std::mutex> lock(m_cache_mu);
  auto it = m_cache.find(sql);
  if (it == m_cache.end() && m_cache.size() < k_cached_texts)
    it = m_cache.emplace(std::move(sql), std::vector<sqlite3_stmt*>{}).first;
  if (it == m_cache.end() || it->second.size() >= k_cached_per_text) {
    sqlite3_finalize(stmt);
    return;
  }
  it->second.push_back(stmt);
}

Database::CacheStats Database::statement_cache_stats() {
  std::lock_guard<std::mutex> lock(m_cache_mu);
  return m_cache_stats;
}

Status Database::exec(std::string_view sql, std::string_view what) {
  if (sql.find(';') == std::string_view::npos) {
    auto st = prepare(sql, std::string(what));
    if (!st) return st.error();
    return st->run();
  }
  char* err = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string msg = err != nullptr ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return make_error(
        (rc & 0xff) == SQLITE_CONSTRAINT ? ErrorCode::already_exists : ErrorCode::internal,
        m_context + ": " + std::string(what) + ": " + msg);
  }
  return ok_status();
}

Result<Statement> Database::prepare(std::string_view sql, std::string what) {
  std::string key(sql);
  {
    std::lock_guard<std::mutex> lock(m_cache_mu);
    auto it = m_cache.find(key);
    if (it != m_cache.end() && !it->second.empty()) {
      sqlite3_stmt* stmt = it->second.back();
      it->second.pop_back();
      ++m_cache_stats.hits;
      return Statement(this, stmt, std::move(key), std::move(what));
    }
    ++m_cache_stats.misses;
  }
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(m_db, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return error(what, rc);
  }
  return Statement(this, stmt, std::move(key), std::move(what));
}

int64_t Database::last_insert_rowid() const {
  return static_cast<int64_t>(sqlite3_last_insert_rowid(m_db));
}

int64_t Database::changes() const { return static_cast<int64_t>(sqlite3_changes(m_db)); }

Error Database::error(std::string_view what, int rc) const {
  if ((rc & 0xff) == SQLITE_CONSTRAINT) {
    return make_error(
        ErrorCode::already_exists,
        m_context + ": " + std::string(what) + ": duplicate key (" + sqlite3_errmsg(m_db) + ")");
  }
  return make_error(ErrorCode::internal,
                    m_context + ": " + std::string(what) + ": " + sqlite3_errmsg(m_db));
}

Result<Transaction> Transaction::begin(Database& db, Mode mode) {
  auto s = db.exec(mode == Mode::immediate ? "BEGIN IMMEDIATE" : "BEGIN", "begin transaction");
  if (!s) return s.error();
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : m_db(std::exchange(other.m_db, nullptr)) {}

Transaction::~Transaction() {
  if (m_db != nullptr) (void)m_db->exec("ROLLBACK", "rollback");
}

Status Transaction::commit() {
  Database* db = std::exchange(m_db, nullptr);
  if (db == nullptr) return make_error(ErrorCode::internal, "sqlite: commit without a transaction");
  auto s = db->exec("COMMIT", "commit");
  if (!s) (void)db->exec("ROLLBACK", "rollback");
  return s;
}

}  // namespace flytecd::sqlite
