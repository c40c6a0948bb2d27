#pragma once

// The one SQLite wrapper: a connection opened with the settings every flytecd database uses
// (busy timeout, WAL, a chosen synchronous level), RAII prepared statements with positional
// bind / step / column helpers, and RAII transactions that roll back unless committed.
// sqlite3.h stays out of this header.
//
// Errors carry the database's context ("ledger", "emulator: sqlite"), what was being done and
// SQLite's message: "<context>: <what>: <sqlite message>". A constraint violation is
// ErrorCode::already_exists; anything else is internal (open failures are unavailable).

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "daemon/common/result.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace flytecd::sqlite {

struct OpenOptions {
  int busy_timeout_ms = 5000;
  bool wal = true;
  // PRAGMA synchronous: "NORMAL" (a commit survives a process crash) or "FULL" (also power loss).
  std::string synchronous = "NORMAL";
  bool foreign_keys = false;
  // true: SQLITE_OPEN_FULLMUTEX (the connection may be used from several threads, serialized
  // by SQLite); false: SQLITE_OPEN_NOMUTEX (the owner serializes access itself).
  bool serialized = false;
};

class Database;

// A prepared statement. Binds are positional in call order (bind() then bind() fills ?1, ?2);
// reset() rewinds for another execution with fresh binds. Not thread-safe; must not outlive
// its Database. When it goes, it is rewound and goes back to its Database's statement cache, so
// the next prepare() of the same SQL text skips SQLite's parser.
class Statement {
 public:
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(std::string_view text);  // TEXT
  Statement& bind(const char* text) { return bind(std::string_view(text)); }
  Statement& bind(const std::string& text) { return bind(std::string_view(text)); }
  Statement& bind(int64_t value);
  Statement& bind(int value) { return bind(static_cast<int64_t>(value)); }
  Statement& bind_blob(std::string_view bytes);  // BLOB

  // Advances to the next row: true when a row is available, false when done.
  Result<bool> step();
  // Steps until done (statements without rows, or whose rows are not needed).
  Status run();
  // Calls `on_row(*this)` for every row.
  template <typename F>
  Status each(F&& on_row) {
    for (;;) {
      auto row = step();
      if (!row) return row.error();
      if (!*row) return ok_status();
      on_row(*this);
    }
  }
  // Clears bindings and rewinds.
  void reset();

  std::string text(int col) const;  // "" for NULL
  std::string blob(int col) const;  // "" for NULL
  int64_t int64(int col) const;     // 0 for NULL

 private:
  friend class Database;
  Statement(Database* db, sqlite3_stmt* stmt, std::string sql, std::string what)
      : m_db(db), m_stmt(stmt), m_sql(std::move(sql)), m_what(std::move(what)) {}
  void release();
  Database* m_db = nullptr;
  sqlite3_stmt* m_stmt = nullptr;
  std::string m_sql;  // the cache key
  std::string m_what;
  int m_index = 0;
};

// One connection. Thread-safety follows OpenOptions::serialized.
class Database {
 public:
  // Opens or creates `path` (":memory:" = a private in-memory database) and applies `options`.
  // `context` prefixes every error. Errors: unavailable (cannot open), internal (a pragma).
  static Result<std::unique_ptr<Database>> open(const std::string& path, std::string context,
                                                const OpenOptions& options = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more SQL statements without results (schema, pragmas). A single statement
  // (no ';') goes through the statement cache: BEGIN / SAVEPOINT / RELEASE on a hot path.
  Status exec(std::string_view sql, std::string_view what);
  // Prepares one statement; `what` names it in errors. A statement of the same SQL text
  // released earlier is reused (rewound, bindings cleared) instead of parsed again.
  Result<Statement> prepare(std::string_view sql, std::string what);
  // How many prepare() calls reused a cached statement / parsed SQL (tests, benchmarks).
  struct CacheStats {
    uint64_t hits = 0;
    uint64_t misses = 0;
  };
  CacheStats statement_cache_stats();
  int64_t last_insert_rowid() const;
  int64_t changes() const;  // rows changed by the last statement
  const std::string& context() const { return m_context; }

  // The error for the connection's last failure: "<context>: <what>: <sqlite message>".
  Error error(std::string_view what, int rc) const;

 private:
  friend class Statement;
  Database(sqlite3* db, std::string context) : m_db(db), m_context(std::move(context)) {}
  void give_back(std::string sql, sqlite3_stmt* stmt);
  sqlite3* m_db;
  std::string m_context;
  // Released statements by SQL text. Bounded: a few statements per text (one per thread that
  // uses it at once), and few texts (flytecd's SQL is fixed strings, plus WHERE clauses built
  // from which fields are set).
  std::mutex m_cache_mu;
  std::unordered_map<std::string, std::vector<sqlite3_stmt*>> m_cache;
  CacheStats m_cache_stats;
};

// BEGIN on construction (BEGIN IMMEDIATE for writers, so a writer waits for the lock up front
// instead of failing at its first write), ROLLBACK on destruction unless commit() succeeded.
class Transaction {
 public:
  enum class Mode { deferred, immediate };
  // Errors: internal (or busy past the busy timeout).
  static Result<Transaction> begin(Database& db, Mode mode);
  ~Transaction();
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // COMMIT; on failure the transaction is rolled back. Either way it is closed.
  Status commit();
  bool open() const { return m_db != nullptr; }

 private:
  explicit Transaction(Database* db) : m_db(db) {}
  Database* m_db;
};

}  // namespace flytecd::sqlite
