#include "daemon/ledger/ledger.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/text.hpp"
#include "daemon/ledger/clock.hpp"

namespace flytecd::ledger {
namespace {

// A JSON array of strings without an escape or a control character in any of them (what the
// ledger writes for entities and launch-plan names), read without a general parser: the
// no-change registration check reads every record, and nlohmann's lexer was most of that (1.2 MB
// for 200 packages of 84 entities). nullopt for anything else.
std::optional<std::vector<std::string>> plain_string_list(std::string_view t) {
  size_t i = 0;
  auto next_is = [&](char c) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i;
    if (i == t.size() || t[i] != c) return false;
    ++i;
    return true;
  };
  std::vector<std::string> v;
  if (!next_is('[')) return std::nullopt;
  if (!next_is(']')) {
    do {
      if (!next_is('"')) return std::nullopt;
      const size_t start = i;
      for (; i < t.size() && t[i] != '"'; ++i)
        if (t[i] == '\\' || static_cast<unsigned char>(t[i]) < 0x20) return std::nullopt;
      if (i == t.size()) return std::nullopt;
      v.emplace_back(t.substr(start, i - start));
      ++i;
    } while (next_is(','));
    if (!next_is(']')) return std::nullopt;
  }
  if (t.find_first_not_of(" \n\r\t", i) != std::string_view::npos) return std::nullopt;
  return v;
}

// A recorded list: the plain form above when it is one (and well-formed UTF-8), else nlohmann's
// reading (so escapes decode the same), else empty (text that is not an array of strings).
std::vector<std::string> string_list(std::string_view text) {
  if (text::valid_utf8(text))
    if (auto v = plain_string_list(text)) return std::move(*v);
  std::vector<std::string> v;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_array())
    for (const auto& e : j)
      if (e.is_string()) v.push_back(e.get<std::string>());
  return v;
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
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
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

Status insert_registration(sqlite::Database& db, const RegistrationRecord& r) {
  auto st = db.prepare(
      "INSERT OR REPLACE INTO registrations(key, fingerprint, digest, package, project, "
      "domain, version, entities, launch_plans, activated, revision, applied_at, signer) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
      "record registration " + r.key);
  if (!st) return st.error();
  st->bind(r.key)
      .bind(r.fingerprint)
      .bind(r.digest)
      .bind(r.package)
      .bind(r.project)
      .bind(r.domain)
      .bind(r.version)
      .bind(dump_json(nlohmann::json(r.entities)))
      .bind(dump_json(nlohmann::json(r.launch_plans)))
      .bind(dump_json(nlohmann::json(r.activated)))
      .bind(r.revision)
      .bind(detail::now_seconds())
      .bind(r.signer);
  return st->run();
}

Status set_meta(sqlite::Database& db, const std::string& key, const std::string& value) {
  auto st = db.prepare(
      "INSERT INTO meta(key, value) VALUES(?,?) ON CONFLICT(key) DO UPDATE SET "
      "value=excluded.value",
      "write " + key);
  if (!st) return st.error();
  return st->bind(key).bind(value).run();
}

}  // namespace

Result<std::unique_ptr<Ledger>> Ledger::open(const std::string& path) {
  // WAL + synchronous=NORMAL: every committed transaction survives a process crash (SIGKILL);
  // only an OS crash can lose the last few, and a lost record is re-learned as "adopt" on the
  // next reconcile (live already equals desired), so nothing is lost that matters.
  sqlite::OpenOptions options;
  options.synchronous = "NORMAL";
  options.foreign_keys = true;
  options.serialized = true;
  auto db = sqlite::Database::open(path, "ledger", options);
  if (!db) return db.error();
  if (auto s = (*db)->exec(k_schema, "create schema"); !s) return s.error();
  // Columns added after the first release: ledgers written before get them on open.
  for (auto [table, column, type] :
       {std::tuple{"reconciles", "subject", "TEXT NOT NULL DEFAULT ''"},
        std::tuple{"reconciles", "author", "TEXT NOT NULL DEFAULT ''"},
        std::tuple{"reconciles", "committed_at", "INTEGER NOT NULL DEFAULT 0"},
        std::tuple{"reconciles", "trigger", "TEXT NOT NULL DEFAULT ''"},
        std::tuple{"reconciles", "noops", "INTEGER NOT NULL DEFAULT 0"},
        std::tuple{"reconcile_steps", "changes", "TEXT NOT NULL DEFAULT ''"},
        std::tuple{"registrations", "signer", "TEXT NOT NULL DEFAULT ''"},
        std::tuple{"managed", "version", "INTEGER NOT NULL DEFAULT 0"}}) {
    auto info = (*db)->prepare(
        std::string("SELECT 1 FROM pragma_table_info('") + table + "') WHERE name = ?",
        "read schema");
    if (!info) return info.error();
    auto present = info->bind(column).step();
    if (!present) return present.error();
    if (!*present)
      if (auto s = (*db)->exec(
              std::string("ALTER TABLE ") + table + " ADD COLUMN " + column + " " + type,
              "migrate schema");
          !s)
        return s.error();
  }
  if (auto s = (*db)->exec(
          "CREATE INDEX IF NOT EXISTS reconcile_steps_key ON reconcile_steps(key, reconcile_id)",
          "create index");
      !s)
    return s.error();
  return std::unique_ptr<Ledger>(new Ledger(std::move(*db)));
}

Ledger::Ledger(std::unique_ptr<sqlite::Database> db) : m_db(std::move(db)) {}

Ledger::~Ledger() = default;

Result<reconcile::Managed> Ledger::managed() const {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st = m_db->prepare("SELECT key, hash, revision, version FROM managed", "read managed");
  if (!st) return st.error();
  reconcile::Managed out;
  auto s = st->each([&](const sqlite::Statement& row) {
    out[row.text(0)] =
        reconcile::ManagedRecord{row.text(1), row.text(2), static_cast<uint64_t>(row.int64(3))};
  });
  if (!s) return s.error();
  return out;
}

Result<reconcile::Managed> Ledger::managed_of(const std::set<std::string>& projects) const {
  std::lock_guard<std::mutex> lock(m_mu);
  // '0' follows '/': [override/P/, override/P0) is every key under override/P/.
  auto st = m_db->prepare(
      "SELECT key, hash, revision, version FROM managed WHERE key = ?1 OR (key >= ?2 AND key < ?3)",
      "read managed of a project");
  if (!st) return st.error();
  reconcile::Managed out;
  for (const auto& p : projects) {
    st->reset();
    st->bind("project/" + p).bind("override/" + p + "/").bind("override/" + p + "0");
    auto s = st->each([&](const sqlite::Statement& row) {
      out[row.text(0)] =
          reconcile::ManagedRecord{row.text(1), row.text(2), static_cast<uint64_t>(row.int64(3))};
    });
    if (!s) return s.error();
  }
  return out;
}

// Kind by kind through the key index: the first key at or after a point names a kind (the text
// before its first '/'), one COUNT over that kind's range [kind/, kind0) ('0' follows '/'), then on
// to kind0. A GROUP BY over substr(key) read and sorted every row (15 ms of a targeted pass over
// 27k rows; the range counts take 1.5 ms). A key without '/' counts under "", as substr made it.
Result<std::map<std::string, size_t>> Ledger::managed_counts() const {
  std::lock_guard<std::mutex> lock(m_mu);
  auto at =
      m_db->prepare("SELECT key FROM managed WHERE key >= ? ORDER BY key LIMIT 1", "count managed");
  if (!at) return at.error();
  auto after =
      m_db->prepare("SELECT key FROM managed WHERE key > ? ORDER BY key LIMIT 1", "count managed");
  if (!after) return after.error();
  auto in_range =
      m_db->prepare("SELECT COUNT(*) FROM managed WHERE key >= ? AND key < ?", "count managed");
  if (!in_range) return in_range.error();
  std::map<std::string, size_t> out;
  std::string from;
  bool inclusive = true;
  for (;;) {
    sqlite::Statement& next = inclusive ? *at : *after;
    next.reset();
    auto row = next.bind(from).step();
    if (!row) return row.error();
    if (!*row) return out;
    const std::string key = next.text(0);
    const size_t slash = key.find('/');
    if (slash == std::string::npos) {
      ++out[""];
      from = key;
      inclusive = false;
      continue;
    }
    const std::string kind = key.substr(0, slash);
    in_range->reset();
    auto counted = in_range->bind(kind + "/").bind(kind + "0").step();
    if (!counted) return counted.error();
    out[kind] += static_cast<size_t>(in_range->int64(0));
    from = kind + "0";
    inclusive = true;
  }
}

Result<std::map<std::string, Ledger::Applied>> Ledger::applied_of(
    const std::set<std::string>& projects) const {
  std::lock_guard<std::mutex> lock(m_mu);
  std::map<std::string, Applied> out;
  // Each table's keys of a project: [prefix/P/, prefix/P0) ('0' follows '/'), and "project/P".
  for (const char* table : {"managed", "registrations"}) {
    auto st = m_db->prepare(std::string("SELECT key, revision, applied_at FROM ") + table +
                                " WHERE key = ?1 OR (key >= ?2 AND key < ?3)",
                            "read applied revisions of a project");
    if (!st) return st.error();
    const std::string prefix = table == std::string("managed") ? "override/" : "registration/";
    for (const auto& p : projects) {
      st->reset();
      st->bind("project/" + p).bind(prefix + p + "/").bind(prefix + p + "0");
      auto s = st->each([&](const sqlite::Statement& row) {
        out[row.text(0)] = Applied{row.text(1), row.int64(2)};
      });
      if (!s) return s.error();
    }
  }
  return out;
}

Result<std::map<std::string, Ledger::Applied>> Ledger::applied() const {
  std::lock_guard<std::mutex> lock(m_mu);
  std::map<std::string, Applied> out;
  for (const char* sql : {"SELECT key, revision, applied_at FROM managed",
                          "SELECT key, revision, applied_at FROM registrations"}) {
    auto st = m_db->prepare(sql, "read applied revisions");
    if (!st) return st.error();
    auto s = st->each([&](const sqlite::Statement& row) {
      out[row.text(0)] = Applied{row.text(1), row.int64(2)};
    });
    if (!s) return s.error();
  }
  return out;
}

Status Ledger::record(const std::string& key, const std::string& kind, const std::string& hash,
                      const std::string& revision, uint64_t version) {
  return commit_changes({ObjectChange{key, kind, hash, revision, version, false}});
}

Status Ledger::forget(const std::string& key) {
  return commit_changes({ObjectChange{key, {}, {}, {}, 0, true}});
}

Status Ledger::record_all(std::vector<ObjectChange> changes) {
  if (changes.empty()) return ok_status();
  return commit_changes(std::move(changes));
}

Status Ledger::commit_changes(std::vector<ObjectChange> changes) {
  Status result = ok_status();
  bool done = false;
  std::unique_lock<std::mutex> lock(m_group_mu);
  for (auto& c : changes) m_queue.push_back(Change{std::move(c), &result, &done});
  while (!done) {
    if (m_writing) {
      m_group_cv.wait(lock);
      continue;
    }
    // This caller writes what is queued (its own changes, and those that came while the last
    // group was being written); the others wait for it.
    m_writing = true;
    std::vector<Change> group;
    group.swap(m_queue);
    lock.unlock();
    const Status written = write_changes(group);
    lock.lock();
    for (const auto& c : group) {
      *c.result = written;
      *c.done = true;
    }
    m_writing = false;
    ++m_groups;
    m_group_cv.notify_all();
  }
  return result;
}

uint64_t Ledger::write_groups() const {
  std::lock_guard<std::mutex> lock(m_group_mu);
  return m_groups;
}

// One transaction for the group: a statement that fails (a full disk, a broken file) rolls the
// whole group back, and every caller of the group gets that error (it names the failing key), so
// no caller is told "recorded" for a row that is not there. Each statement is prepared once for
// the group and rewound per row; the group's rows share one applied_at.
Status Ledger::write_changes(const std::vector<Change>& changes) {
  std::lock_guard<std::mutex> lock(m_mu);
  std::optional<sqlite::Transaction> tx;
  if (changes.size() > 1) {
    auto t = sqlite::Transaction::begin(*m_db, sqlite::Transaction::Mode::immediate);
    if (!t) return t.error();
    tx.emplace(std::move(*t));
  }
  std::optional<sqlite::Statement> upsert, remove;
  const int64_t now = detail::now_seconds();
  // The error of a row's statement, naming its key: "ledger: record <key>: <sqlite message>".
  auto named = [&](const Error& e, const char* what, const std::string& key) {
    const std::string prefix = m_db->context() + ": " + what + ": ";
    std::string detail =
        e.message.starts_with(prefix) ? e.message.substr(prefix.size()) : e.message;
    return Error{e.code, m_db->context() + ": " + what + " " + key + ": " + detail};
  };
  for (const auto& c : changes) {
    if (c.forget) {
      if (!remove) {
        auto st = m_db->prepare("DELETE FROM managed WHERE key = ?", "forget");
        if (!st) return named(st.error(), "forget", c.key);
        remove.emplace(std::move(*st));
      }
      remove->reset();
      if (auto s = remove->bind(c.key).run(); !s) return named(s.error(), "forget", c.key);
      continue;
    }
    if (!upsert) {
      auto st = m_db->prepare(
          "INSERT INTO managed(key, kind, hash, revision, applied_at, version) VALUES(?,?,?,?,?,?) "
          "ON CONFLICT(key) DO UPDATE SET kind=excluded.kind, hash=excluded.hash, "
          "revision=excluded.revision, "
          "applied_at=excluded.applied_at, version=excluded.version",
          "record");
      if (!st) return named(st.error(), "record", c.key);
      upsert.emplace(std::move(*st));
    }
    upsert->reset();
    if (auto s = upsert->bind(c.key)
                     .bind(c.kind)
                     .bind(c.hash)
                     .bind(c.revision)
                     .bind(now)
                     .bind(static_cast<int64_t>(c.version))
                     .run();
        !s)
      return named(s.error(), "record", c.key);
  }
  upsert.reset();
  remove.reset();
  return tx ? tx->commit() : ok_status();
}

std::string signer_text(const std::optional<sources::Signer>& signer) {
  if (!signer) return {};
  nlohmann::json j = {{"by", signer->describe()},           {"method", signer->method},
                      {"identity", signer->identity},       {"issuer", signer->issuer},
                      {"digest", signer->digest},           {"signedAt", signer->signed_at},
                      {"verifiedAt", detail::now_seconds()}};
  return dump_json(j);
}

std::string signer_by(const std::string& text) {
  if (text.empty()) return {};
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("by") || !j["by"].is_string()) return {};
  return j["by"].get<std::string>();
}

Result<std::map<std::string, RegistrationRecord>> Ledger::registrations(Entities entities) const {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st = m_db->prepare(entities == Entities::read
                              ? "SELECT key, fingerprint, digest, package, project, domain, "
                                "version, entities, launch_plans, activated, revision, applied_at, "
                                "signer FROM registrations"
                              : "SELECT key, fingerprint, digest, package, project, domain, "
                                "version, '[]', launch_plans, activated, revision, applied_at, "
                                "signer FROM registrations",
                          "read registrations");
  if (!st) return st.error();
  std::map<std::string, RegistrationRecord> out;
  auto s = st->each([&](const sqlite::Statement& row) {
    RegistrationRecord r;
    r.key = row.text(0);
    r.fingerprint = row.text(1);
    r.digest = row.text(2);
    r.package = row.text(3);
    r.project = row.text(4);
    r.domain = row.text(5);
    r.version = row.text(6);
    r.entities = string_list(row.text(7));
    r.launch_plans = string_list(row.text(8));
    r.activated = string_list(row.text(9));
    r.revision = row.text(10);
    r.applied_at = row.int64(11);
    r.signer = row.text(12);
    out[r.key] = std::move(r);
  });
  if (!s) return s.error();
  return out;
}

Status Ledger::record_registration(const RegistrationRecord& r) {
  std::lock_guard<std::mutex> lock(m_mu);
  return insert_registration(*m_db, r);
}

Status Ledger::forget_registration(const std::string& key) {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st = m_db->prepare("DELETE FROM registrations WHERE key = ?", "forget registration " + key);
  if (!st) return st.error();
  return st->bind(key).run();
}

Result<std::string> Ledger::converged_revision() const {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st = m_db->prepare("SELECT value FROM meta WHERE key = 'converged'", "read converged");
  if (!st) return st.error();
  std::string out;
  auto s = st->each([&](const sqlite::Statement& row) { out = row.text(0); });
  if (!s) return s.error();
  return out;
}

Status Ledger::set_converged_revision(const std::string& revision) {
  std::lock_guard<std::mutex> lock(m_mu);
  return set_meta(*m_db, "converged", revision);
}

Result<bool> Ledger::owns_nothing() const {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st =
      m_db->prepare("SELECT (SELECT COUNT(*) FROM managed) + (SELECT COUNT(*) FROM registrations)",
                    "count owned");
  if (!st) return st.error();
  int64_t n = 0;
  auto s = st->each([&](const sqlite::Statement& row) { n = row.int64(0); });
  if (!s) return s.error();
  return n == 0;
}

Status Ledger::replace_ownership(const std::vector<OwnedObject>& objects,
                                 const std::vector<RegistrationRecord>& registrations,
                                 const std::string& converged) {
  std::lock_guard<std::mutex> lock(m_mu);
  auto tx = sqlite::Transaction::begin(*m_db, sqlite::Transaction::Mode::immediate);
  if (!tx) return tx.error();
  if (auto s = m_db->exec("DELETE FROM managed; DELETE FROM registrations;", "clear ownership"); !s)
    return s;
  auto ins =
      m_db->prepare("INSERT INTO managed(key, kind, hash, revision, applied_at) VALUES(?,?,?,?,?)",
                    "record owned object");
  if (!ins) return ins.error();
  const int64_t now = detail::now_seconds();
  for (const auto& o : objects) {
    ins->reset();
    if (auto s = ins->bind(o.key).bind(o.kind).bind(o.hash).bind(o.revision).bind(now).run(); !s)
      return s;
  }
  for (const auto& r : registrations)
    if (auto s = insert_registration(*m_db, r); !s) return s;
  if (auto s = set_meta(*m_db, "converged", converged); !s) return s;
  return tx->commit();
}

Result<std::string> Ledger::integrity_check() const {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st = m_db->prepare("PRAGMA integrity_check", "integrity_check");
  if (!st) return st.error();
  std::string out;
  auto s = st->each(
      [&](const sqlite::Statement& row) { out += (out.empty() ? "" : "\n") + row.text(0); });
  if (!s) return s.error();
  return out;
}

}  // namespace flytecd::ledger
