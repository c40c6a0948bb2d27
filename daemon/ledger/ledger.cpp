#include "daemon/ledger/ledger.hpp"

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include <chrono>

namespace flytecd::ledger {
namespace {

int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// RAII prepared statement.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { m_rc = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr); }
  ~Stmt() { sqlite3_finalize(m_stmt); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return m_rc == SQLITE_OK; }
  Stmt& bind(int i, const std::string& s) {
    sqlite3_bind_text(m_stmt, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(m_stmt, i, v);
    return *this;
  }
  int step() { return sqlite3_step(m_stmt); }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(m_stmt, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(m_stmt, col)))
             : std::string();
  }
  int64_t int64(int col) const { return sqlite3_column_int64(m_stmt, col); }

 private:
  sqlite3_stmt* m_stmt = nullptr;
  int m_rc = SQLITE_ERROR;
};

Error db_error(sqlite3* db, const std::string& what) {
  return make_error(ErrorCode::internal, "ledger: " + what + ": " + sqlite3_errmsg(db));
}

constexpr const char* k_schema = R"(
CREATE TABLE IF NOT EXISTS managed (
  key TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  hash TEXT NOT NULL,
  revision TEXT NOT NULL,
  applied_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS registrations (
  key TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  digest TEXT NOT NULL,
  package TEXT NOT NULL,
  project TEXT NOT NULL,
  domain TEXT NOT NULL,
  version TEXT NOT NULL,
  entities TEXT NOT NULL,
  launch_plans TEXT NOT NULL,
  activated TEXT NOT NULL,
  revision TEXT NOT NULL,
  applied_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS reconciles (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  revision TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  steps INTEGER NOT NULL DEFAULT 0,
  outcome TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS reconcile_steps (
  reconcile_id INTEGER NOT NULL REFERENCES reconciles(id),
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  action TEXT NOT NULL,
  key TEXT NOT NULL,
  outcome TEXT NOT NULL,
  message TEXT NOT NULL,
  at INTEGER NOT NULL
);
)";

}  // namespace

Result<std::unique_ptr<Ledger>> Ledger::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return make_error(ErrorCode::unavailable, "ledger: open " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db, 5000);
  // WAL + synchronous=NORMAL: every committed transaction survives a process crash (SIGKILL);
  // only an OS crash can lose the last few, and a lost record is re-learned as "adopt" on the
  // next reconcile (live already equals desired), so nothing is lost that matters.
  std::unique_ptr<Ledger> ledger(new Ledger(db));
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL;", "PRAGMA synchronous=NORMAL;", "PRAGMA foreign_keys=ON;"})
    if (auto s = ledger->exec(pragma); !s) return s.error();
  if (auto s = ledger->exec(k_schema); !s) return s.error();
  return ledger;
}

Ledger::~Ledger() { sqlite3_close(m_db); }

Status Ledger::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return make_error(ErrorCode::internal, "ledger: " + msg);
  }
  return ok_status();
}

Result<reconcile::Managed> Ledger::managed() const {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db, "SELECT key, hash, revision FROM managed");
  if (!st.ok()) return db_error(m_db, "read managed");
  reconcile::Managed out;
  int rc;
  while ((rc = st.step()) == SQLITE_ROW)
    out[st.text(0)] = reconcile::ManagedRecord{st.text(1), st.text(2)};
  if (rc != SQLITE_DONE) return db_error(m_db, "read managed");
  return out;
}

Status Ledger::record(const std::string& key, const std::string& kind, const std::string& hash,
                      const std::string& revision) {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db,
          "INSERT INTO managed(key, kind, hash, revision, applied_at) VALUES(?,?,?,?,?) "
          "ON CONFLICT(key) DO UPDATE SET kind=excluded.kind, hash=excluded.hash, "
          "revision=excluded.revision, "
          "applied_at=excluded.applied_at");
  if (!st.ok()) return db_error(m_db, "record");
  st.bind(1, key).bind(2, kind).bind(3, hash).bind(4, revision).bind(5, now_seconds());
  if (st.step() != SQLITE_DONE) return db_error(m_db, "record " + key);
  return ok_status();
}

Status Ledger::forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db, "DELETE FROM managed WHERE key = ?");
  if (!st.ok()) return db_error(m_db, "forget");
  st.bind(1, key);
  if (st.step() != SQLITE_DONE) return db_error(m_db, "forget " + key);
  return ok_status();
}

Result<std::map<std::string, RegistrationRecord>> Ledger::registrations() const {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db,
          "SELECT key, fingerprint, digest, package, project, domain, version, entities, "
          "launch_plans, activated, revision, applied_at FROM registrations");
  if (!st.ok()) return db_error(m_db, "read registrations");
  std::map<std::string, RegistrationRecord> out;
  auto list = [](const std::string& text) {
    std::vector<std::string> v;
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_array())
      for (const auto& e : j)
        if (e.is_string()) v.push_back(e.get<std::string>());
    return v;
  };
  int rc;
  while ((rc = st.step()) == SQLITE_ROW) {
    RegistrationRecord r;
    r.key = st.text(0);
    r.fingerprint = st.text(1);
    r.digest = st.text(2);
    r.package = st.text(3);
    r.project = st.text(4);
    r.domain = st.text(5);
    r.version = st.text(6);
    r.entities = list(st.text(7));
    r.launch_plans = list(st.text(8));
    r.activated = list(st.text(9));
    r.revision = st.text(10);
    r.applied_at = st.int64(11);
    out[r.key] = std::move(r);
  }
  if (rc != SQLITE_DONE) return db_error(m_db, "read registrations");
  return out;
}

Status Ledger::record_registration(const RegistrationRecord& r) {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db,
          "INSERT OR REPLACE INTO registrations(key, fingerprint, digest, package, project, "
          "domain, version, entities, launch_plans, activated, revision, applied_at) "
          "VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!st.ok()) return db_error(m_db, "record registration");
  st.bind(1, r.key)
      .bind(2, r.fingerprint)
      .bind(3, r.digest)
      .bind(4, r.package)
      .bind(5, r.project)
      .bind(6, r.domain)
      .bind(7, r.version)
      .bind(8, nlohmann::json(r.entities).dump())
      .bind(9, nlohmann::json(r.launch_plans).dump())
      .bind(10, nlohmann::json(r.activated).dump())
      .bind(11, r.revision)
      .bind(12, now_seconds());
  if (st.step() != SQLITE_DONE) return db_error(m_db, "record registration " + r.key);
  return ok_status();
}

Status Ledger::forget_registration(const std::string& key) {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db, "DELETE FROM registrations WHERE key = ?");
  if (!st.ok()) return db_error(m_db, "forget registration");
  st.bind(1, key);
  if (st.step() != SQLITE_DONE) return db_error(m_db, "forget registration " + key);
  return ok_status();
}

Result<int64_t> Ledger::begin_reconcile(const std::string& revision) {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db, "INSERT INTO reconciles(revision, started_at, outcome) VALUES(?, ?, 'running')");
  if (!st.ok()) return db_error(m_db, "begin reconcile");
  st.bind(1, revision).bind(2, now_seconds());
  if (st.step() != SQLITE_DONE) return db_error(m_db, "begin reconcile");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(m_db));
}

Status Ledger::add_step(int64_t reconcile_id, const std::string& action, const std::string& key,
                        const std::string& outcome, const std::string& message) {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db,
          "INSERT INTO reconcile_steps(reconcile_id, action, key, outcome, message, at) "
          "VALUES(?,?,?,?,?,?)");
  if (!st.ok()) return db_error(m_db, "add step");
  st.bind(1, reconcile_id)
      .bind(2, action)
      .bind(3, key)
      .bind(4, outcome)
      .bind(5, message)
      .bind(6, now_seconds());
  if (st.step() != SQLITE_DONE) return db_error(m_db, "add step");
  return ok_status();
}

Status Ledger::finish_reconcile(int64_t reconcile_id, int steps, const std::string& outcome,
                                const std::string& detail) {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db, "UPDATE reconciles SET finished_at=?, steps=?, outcome=?, detail=? WHERE id=?");
  if (!st.ok()) return db_error(m_db, "finish reconcile");
  st.bind(1, now_seconds())
      .bind(2, static_cast<int64_t>(steps))
      .bind(3, outcome)
      .bind(4, detail)
      .bind(5, reconcile_id);
  if (st.step() != SQLITE_DONE) return db_error(m_db, "finish reconcile");
  return ok_status();
}

Result<std::vector<HistoryEntry>> Ledger::history(int limit) const {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db,
          "SELECT id, revision, started_at, COALESCE(finished_at, 0), steps, outcome, detail FROM "
          "reconciles "
          "ORDER BY id DESC LIMIT ?");
  if (!st.ok()) return db_error(m_db, "history");
  st.bind(1, static_cast<int64_t>(limit));
  std::vector<HistoryEntry> out;
  int rc;
  while ((rc = st.step()) == SQLITE_ROW)
    out.push_back(HistoryEntry{st.int64(0), st.text(1), st.int64(2), st.int64(3),
                               static_cast<int>(st.int64(4)), st.text(5), st.text(6)});
  if (rc != SQLITE_DONE) return db_error(m_db, "history");
  return out;
}

Result<std::string> Ledger::integrity_check() const {
  std::lock_guard<std::mutex> lock(m_mu);
  Stmt st(m_db, "PRAGMA integrity_check");
  if (!st.ok()) return db_error(m_db, "integrity_check");
  std::string out;
  while (st.step() == SQLITE_ROW) out += (out.empty() ? "" : "\n") + st.text(0);
  return out;
}

}  // namespace flytecd::ledger
