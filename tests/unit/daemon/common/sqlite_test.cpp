#include "daemon/common/sqlite.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using flytecd::ErrorCode;
namespace sqlite = flytecd::sqlite;

namespace {

std::unique_ptr<sqlite::Database> memory_db() {
  auto db = sqlite::Database::open(":memory:", "test");
  REQUIRE(db);
  REQUIRE((*db)->exec("CREATE TABLE t(k TEXT PRIMARY KEY, n INTEGER, b BLOB)", "schema"));
  return std::move(*db);
}

}  // namespace

TEST_CASE("sqlite: binds are positional, text, integers and blobs round-trip", "[sqlite]") {
  auto db = memory_db();
  const std::string blob("a\0b\xff", 4);
  auto ins = db->prepare("INSERT INTO t(k, n, b) VALUES (?, ?, ?)", "insert");
  REQUIRE(ins);
  REQUIRE(ins->bind("one").bind(int64_t{1} << 40).bind_blob(blob).run());
  ins->reset();
  REQUIRE(ins->bind(std::string("two")).bind(2).bind_blob("").run());
  CHECK(db->changes() == 1);

  auto sel = db->prepare("SELECT k, n, b FROM t ORDER BY k", "select");
  REQUIRE(sel);
  std::vector<std::tuple<std::string, int64_t, std::string>> rows;
  REQUIRE(sel->each(
      [&](const sqlite::Statement& r) { rows.emplace_back(r.text(0), r.int64(1), r.blob(2)); }));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == std::tuple<std::string, int64_t, std::string>{"one", int64_t{1} << 40, blob});
  CHECK(std::get<2>(rows[1]).empty());
}

TEST_CASE("sqlite: a duplicate key is already_exists, naming the context and the statement",
          "[sqlite]") {
  auto db = memory_db();
  auto ins = db->prepare("INSERT INTO t(k) VALUES (?)", "insert row");
  REQUIRE(ins);
  REQUIRE(ins->bind("x").run());
  ins->reset();
  auto dup = ins->bind("x").run();
  REQUIRE_FALSE(dup);
  CHECK(dup.error().code == ErrorCode::already_exists);
  CHECK_THAT(dup.error().message, Catch::StartsWith("test: insert row: duplicate key"));

  auto bad = db->prepare("SELECT nope FROM t", "read nope");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::internal);
  CHECK_THAT(bad.error().message,
             Catch::StartsWith("test: read nope: ") && Catch::Contains("no such column"));
}

TEST_CASE("sqlite: a transaction rolls back unless committed", "[sqlite]") {
  auto db = memory_db();
  auto count = [&] {
    auto st = db->prepare("SELECT COUNT(*) FROM t", "count");
    REQUIRE(st);
    auto row = st->step();
    REQUIRE(row);
    REQUIRE(*row);
    return st->int64(0);
  };
  {
    auto tx = sqlite::Transaction::begin(*db, sqlite::Transaction::Mode::immediate);
    REQUIRE(tx);
    REQUIRE(db->exec("INSERT INTO t(k) VALUES ('a')", "insert"));
  }
  CHECK(count() == 0);
  {
    auto tx = sqlite::Transaction::begin(*db, sqlite::Transaction::Mode::deferred);
    REQUIRE(tx);
    REQUIRE(db->exec("INSERT INTO t(k) VALUES ('a')", "insert"));
    REQUIRE(tx->commit());
    CHECK_FALSE(tx->open());
  }
  CHECK(count() == 1);
}

TEST_CASE("sqlite: files open in WAL mode with the busy timeout, a second writer waits",
          "[sqlite]") {
  std::string dir = (fs::temp_directory_path() / "flytecd-sqlite-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  const std::string path = dir + "/db.sqlite";
  sqlite::OpenOptions options;
  options.busy_timeout_ms = 100;
  options.synchronous = "FULL";
  auto a = sqlite::Database::open(path, "a", options);
  REQUIRE(a);
  {
    auto mode = (*a)->prepare("PRAGMA journal_mode", "journal mode");
    REQUIRE(mode);
    REQUIRE(*mode->step());
    CHECK(mode->text(0) == "wal");
    auto sync = (*a)->prepare("PRAGMA synchronous", "synchronous");
    REQUIRE(sync);
    REQUIRE(*sync->step());
    CHECK(sync->int64(0) == 2);  // FULL
  }                              // statements in progress would block the COMMIT below
  REQUIRE((*a)->exec("CREATE TABLE t(k TEXT)", "schema"));

  auto b = sqlite::Database::open(path, "b", options);
  REQUIRE(b);
  auto held = sqlite::Transaction::begin(**a, sqlite::Transaction::Mode::immediate);
  REQUIRE(held);
  // The writer lock is held: b gives up after its busy timeout instead of hanging.
  auto blocked = sqlite::Transaction::begin(**b, sqlite::Transaction::Mode::immediate);
  REQUIRE_FALSE(blocked);
  CHECK_THAT(blocked.error().message, Catch::StartsWith("b: begin transaction: "));
  auto committed = held->commit();
  INFO((committed ? std::string() : committed.error().message));
  REQUIRE(committed);
  CHECK(sqlite::Transaction::begin(**b, sqlite::Transaction::Mode::immediate));

  auto missing = sqlite::Database::open(dir + "/no/such/dir/db", "ledger");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::unavailable);
  CHECK_THAT(missing.error().message, Catch::StartsWith("ledger: open "));
  a->reset();
  b->reset();
  fs::remove_all(dir);
}

TEST_CASE("sqlite: a released statement is reused for the same SQL, rewound with no bindings",
          "[sqlite]") {
  auto db = memory_db();
  const char* insert = "INSERT INTO t(k, n) VALUES (?, ?)";
  const auto before = db->statement_cache_stats();
  for (int i = 0; i < 5; ++i) {
    auto ins = db->prepare(insert, "insert");
    REQUIRE(ins);
    REQUIRE(ins->bind("k" + std::to_string(i)).bind(i).run());
  }
  auto stats = db->statement_cache_stats();
  CHECK(stats.misses - before.misses == 1);  // parsed once, reused four times
  CHECK(stats.hits - before.hits == 4);

  // A read left mid-way goes back rewound: the next user starts at the first row, and the
  // abandoned read does not keep its transaction open (a write to a file database would wait).
  const char* select = "SELECT k FROM t ORDER BY k";
  {
    auto sel = db->prepare(select, "select");
    REQUIRE(sel);
    REQUIRE(*sel->step());
    CHECK(sel->text(0) == "k0");
    REQUIRE(*sel->step());
  }
  {
    auto sel = db->prepare(select, "select");
    REQUIRE(sel);
    REQUIRE(*sel->step());
    CHECK(sel->text(0) == "k0");
  }
  // Bindings do not carry over: an unbound parameter is NULL.
  {
    auto q = db->prepare("SELECT count(*) FROM t WHERE n = ?", "count");
    REQUIRE(q);
    q->bind(3);
    REQUIRE(*q->step());
    CHECK(q->int64(0) == 1);
  }
  {
    auto q = db->prepare("SELECT count(*) FROM t WHERE n = ?", "count");
    REQUIRE(q);
    REQUIRE(*q->step());
    CHECK(q->int64(0) == 0);
  }
  // Two statements of one text in use at once are two statements.
  auto a = db->prepare(select, "select");
  auto b = db->prepare(select, "select");
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(*a->step());
  REQUIRE(*a->step());
  REQUIRE(*b->step());
  CHECK(a->text(0) == "k1");
  CHECK(b->text(0) == "k0");
  // exec of one statement uses the cache too (BEGIN / SAVEPOINT / RELEASE on a hot path).
  const auto mid = db->statement_cache_stats();
  REQUIRE(db->exec("DELETE FROM t WHERE n = 4", "delete"));
  REQUIRE(db->exec("DELETE FROM t WHERE n = 4", "delete"));
  CHECK(db->statement_cache_stats().hits - mid.hits >= 1);
}

}  // namespace FLYTECD_UNITY_ID
