#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "daemon/common/sqlite.hpp"
#include "daemon/ledger/ledger.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {
// A fresh, empty directory for a file ledger (the test removes it).
std::filesystem::path scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("flytecd-ledger-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}
}  // namespace

TEST_CASE("ledger: record, read back and forget managed objects", "[ledger]") {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  auto& ledger = **l;
  REQUIRE(ledger.record("project/p", "project", "h1", "rev1"));
  REQUIRE(ledger.record("override/p/TASK_RESOURCE", "override", "h2", "rev1"));
  REQUIRE(ledger.record("override/p/TASK_RESOURCE", "override", "h3", "rev2"));  // replaces
  auto m = ledger.managed();
  REQUIRE(m);
  REQUIRE(m->size() == 2);
  CHECK(m->at("override/p/TASK_RESOURCE").hash == "h3");
  CHECK(m->at("override/p/TASK_RESOURCE").revision == "rev2");
  CHECK(m->at("project/p").hash == "h1");
  REQUIRE(ledger.forget("project/p"));
  REQUIRE(ledger.forget("project/never-recorded"));  // idempotent
  m = ledger.managed();
  REQUIRE(m);
  CHECK(m->size() == 1);
  CHECK(m->count("project/p") == 0);
}

TEST_CASE("ledger: registration records keep every field, by key", "[ledger]") {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  ledger::RegistrationRecord r;
  r.key = "registration/p/development/core";
  r.fingerprint = "sha256:f";
  r.digest = "sha256:d";
  r.package = "packages/core.tgz";
  r.project = "p";
  r.domain = "development";
  r.version = "v1";
  r.entities = {"TASK p/development/t@v1", "WORKFLOW p/development/w@v1"};
  r.launch_plans = {"w", "nightly"};
  r.activated = {"nightly"};
  r.revision = "rev1";
  REQUIRE((*l)->record_registration(r));
  auto rows = (*l)->registrations();
  REQUIRE(rows);
  REQUIRE(rows->size() == 1);
  const auto& got = rows->at(r.key);
  CHECK(got.fingerprint == r.fingerprint);
  CHECK(got.digest == r.digest);
  CHECK(got.package == r.package);
  CHECK(got.version == "v1");
  CHECK(got.entities == r.entities);
  CHECK(got.launch_plans == r.launch_plans);
  CHECK(got.activated == r.activated);
  CHECK(got.revision == "rev1");
  CHECK(got.applied_at > 0);
  // Read without entities (the pass's guard): every other field the same.
  auto light = (*l)->registrations(ledger::Ledger::Entities::skip);
  REQUIRE(light);
  const auto& lg = light->at(r.key);
  CHECK(lg.entities.empty());
  CHECK(lg.launch_plans == r.launch_plans);
  CHECK(lg.activated == r.activated);
  CHECK(lg.fingerprint == r.fingerprint);
  CHECK(lg.version == "v1");
  r.version = "v2";
  r.activated.clear();
  REQUIRE((*l)->record_registration(r));  // replaces the row
  rows = (*l)->registrations();
  REQUIRE(rows);
  CHECK(rows->at(r.key).version == "v2");
  CHECK(rows->at(r.key).activated.empty());
  REQUIRE((*l)->forget_registration(r.key));
  rows = (*l)->registrations();
  REQUIRE(rows);
  CHECK(rows->empty());
}

TEST_CASE("ledger: recorded lists read back exactly, escapes and hand-written JSON included",
          "[ledger]") {
  // Names with quotes, backslashes, control characters and non-ASCII round-trip (they take the
  // general JSON reader; plain names the fast one).
  auto dir = std::filesystem::temp_directory_path() / "flytecd-ledger-lists-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ledger.db").string();
  ledger::RegistrationRecord r;
  r.key = "registration/p/development/core";
  r.project = "p";
  r.domain = "development";
  r.version = "v1";
  r.entities = {
      "TASK p/development/t@v1", "",    "a \"quoted\" name", "back\\slash", "tab\there\nnewline",
      "caf\u00e9 \u2603",        "\x01"};
  r.launch_plans = {};
  r.activated = {"only"};
  {
    auto l = ledger::Ledger::open(path);
    REQUIRE(l);
    REQUIRE((*l)->record_registration(r));
    auto rows = (*l)->registrations();
    REQUIRE(rows);
    CHECK(rows->at(r.key).entities == r.entities);
    CHECK(rows->at(r.key).launch_plans.empty());
    CHECK(rows->at(r.key).activated == r.activated);
  }
  // Text another writer could have left: whitespace, escapes of plain characters, and what is
  // not a list of strings (read as empty, as nlohmann's reading of it gives nothing).
  const std::pair<const char*, std::vector<std::string>> cases[] = {
      {" [ \"a\" ,\n\t\"b\" ] ", {"a", "b"}},
      {"[]", {}},
      {"[ ]", {}},
      {"[\"\\u0041\\/x\"]", {"A/x"}},
      {"[\"a\", 1, \"b\"]", {"a", "b"}},
      {"[\"a\",]", {}},
      {"[\"a\"] x", {}},
      {"[\"a\"", {}},
      {"\"a\"", {}},
      {"", {}},
      {"[\"\xff\"]", {}},
  };
  for (const auto& [text, want] : cases) {
    {
      auto db = sqlite::Database::open(path, "test");
      REQUIRE(db);
      auto st = (*db)->prepare("UPDATE registrations SET entities = ?", "test");
      REQUIRE(st);
      REQUIRE(st->bind(std::string(text)).run());
    }
    auto l = ledger::Ledger::open(path);
    REQUIRE(l);
    auto rows = (*l)->registrations();
    REQUIRE(rows);
    INFO(text);
    CHECK(rows->at(r.key).entities == want);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("ledger: history lists reconciles newest first with their outcome", "[ledger]") {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  auto a = (*l)->begin_reconcile("rev1");
  REQUIRE(a);
  REQUIRE((*l)->add_step(*a, "create", "project/p", "ok", "new in Git"));
  REQUIRE((*l)->finish_reconcile(*a, 1, "success", ""));
  auto b = (*l)->begin_reconcile("rev2");
  REQUIRE(b);
  REQUIRE((*l)->finish_reconcile(*b, 0, "refused", "refusing a revision with zero documents"));
  auto c = (*l)->begin_reconcile("rev3");  // never finished: a crash leaves it running
  REQUIRE(c);
  auto h = (*l)->history(10);
  REQUIRE(h);
  REQUIRE(h->size() == 3);
  CHECK((*h)[0].revision == "rev3");
  CHECK((*h)[0].outcome == "running");
  CHECK((*h)[1].outcome == "refused");
  CHECK((*h)[1].detail.find("zero documents") != std::string::npos);
  CHECK((*h)[2].revision == "rev1");
  CHECK((*h)[2].steps == 1);
  auto one = (*l)->history(1);
  REQUIRE(one);
  CHECK(one->size() == 1);
}

TEST_CASE("ledger: survives a reopen, integrity check passes", "[ledger]") {
  auto dir = std::filesystem::temp_directory_path() / "flytecd-ledger-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ledger.db").string();
  {
    auto l = ledger::Ledger::open(path);
    REQUIRE(l);
    REQUIRE((*l)->record("project/p", "project", "h", "rev"));
  }
  auto l = ledger::Ledger::open(path);
  REQUIRE(l);
  auto m = (*l)->managed();
  REQUIRE(m);
  CHECK(m->count("project/p") == 1);
  auto ic = (*l)->integrity_check();
  REQUIRE(ic);
  CHECK(*ic == "ok");
  std::filesystem::remove_all(dir);
}

TEST_CASE("ledger: a path that cannot be opened is an error naming it", "[ledger]") {
  auto l = ledger::Ledger::open("/nonexistent-dir-flytecd/ledger.db");
  REQUIRE_FALSE(l);
  CHECK(l.error().message.find("/nonexistent-dir-flytecd/ledger.db") != std::string::npos);
}

namespace {
ledger::PassRecord pass_with(const std::string& revision, std::vector<std::string> keys) {
  ledger::PassRecord p;
  p.revision = revision;
  p.subject = "raise the cpu limit";
  p.author = "Ada <ada@example.com>";
  p.committed_at = 1700000000;
  p.trigger = "interval";
  p.outcome = "success";
  for (auto& k : keys)
    p.steps.push_back(ledger::HistoryStep{"update", k, "ok", "changed in Git",
                                          R"([{"path":"a.b","live":"1","desired":"2"}])"});
  return p;
}
}  // namespace

// Issue 13: history existed only as one SQLite row per no-op interval, with no command to read it.
TEST_CASE("ledger: passes are recorded with their steps, no-op passes are only counted",
          "[ledger]") {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  REQUIRE((*l)->record_pass(pass_with("r1", {"override/p/development/-/TASK_RESOURCE"})));
  for (int i = 0; i < 5; ++i) REQUIRE((*l)->count_noop());
  REQUIRE((*l)->record_pass(pass_with("r2", {"project/q", "override/q/-/-/EXECUTION_QUEUE"})));
  auto h = (*l)->history(ledger::HistoryQuery{});
  REQUIRE(h);
  REQUIRE(h->size() == 2);
  CHECK((*h)[0].revision == "r2");
  CHECK((*h)[0].noops == 0);
  CHECK((*h)[1].noops == 5);  // "then 5 passes with nothing to do", not 5 rows
  CHECK((*h)[1].subject == "raise the cpu limit");
  CHECK((*h)[1].author == "Ada <ada@example.com>");
  CHECK((*h)[1].committed_at == 1700000000);
  CHECK((*h)[1].trigger == "interval");
  REQUIRE((*h)[1].step_list.size() == 1);
  CHECK((*h)[1].step_list[0].changes.find("\"a.b\"") != std::string::npos);
  ledger::HistoryQuery by_project;
  by_project.project = "q";
  h = (*l)->history(by_project);
  REQUIRE(h);
  REQUIRE(h->size() == 1);
  CHECK((*h)[0].revision == "r2");
  REQUIRE((*h)[0].step_list.size() == 2);  // both steps are project q's
  ledger::HistoryQuery by_object;
  by_object.object = "override/p/development/-/TASK_RESOURCE";
  h = (*l)->history(by_object);
  REQUIRE(h);
  REQUIRE(h->size() == 1);
  CHECK((*h)[0].revision == "r1");
  by_object.object = "override/q/";  // a prefix
  h = (*l)->history(by_object);
  REQUIRE(h);
  CHECK(h->size() == 1);
  by_object.object = "override/q";  // not a prefix without '/': exact only
  h = (*l)->history(by_object);
  REQUIRE(h);
  CHECK(h->empty());
}

TEST_CASE("ledger: history retention keeps the newest entries within the age", "[ledger]") {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  ledger::Retention keep3;
  keep3.max_entries = 3;
  for (int i = 0; i < 10; ++i)
    REQUIRE((*l)->record_pass(pass_with("r" + std::to_string(i), {"project/p"}), keep3));
  ledger::HistoryQuery all;
  all.limit = 100;
  auto h = (*l)->history(all);
  REQUIRE(h);
  REQUIRE(h->size() == 3);
  CHECK((*h)[0].revision == "r9");
  CHECK((*h)[2].revision == "r7");
}

TEST_CASE("ledger: a ledger written before history columns existed gains them on open",
          "[ledger]") {
  auto dir = std::filesystem::temp_directory_path() / "flytecd-ledger-migrate";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ledger.db").string();
  {
    auto db = sqlite::Database::open(path, "old ledger", {});
    REQUIRE(db);
    REQUIRE(
        (*db)->exec("CREATE TABLE reconciles (id INTEGER PRIMARY KEY AUTOINCREMENT, revision "
                    "TEXT NOT NULL, started_at INTEGER NOT NULL, finished_at INTEGER, steps "
                    "INTEGER NOT NULL DEFAULT 0, outcome TEXT NOT NULL, detail TEXT NOT NULL "
                    "DEFAULT '');"
                    "CREATE TABLE reconcile_steps (reconcile_id INTEGER NOT NULL REFERENCES "
                    "reconciles(id), seq INTEGER PRIMARY KEY AUTOINCREMENT, action TEXT NOT "
                    "NULL, key TEXT NOT NULL, outcome TEXT NOT NULL, message TEXT NOT NULL, at "
                    "INTEGER NOT NULL);"
                    "INSERT INTO reconciles(revision, started_at, outcome) VALUES('old', "
                    "CAST(strftime('%s', 'now') AS INTEGER), 'success');",
                    "old schema"));
  }
  auto l = ledger::Ledger::open(path);
  REQUIRE(l);
  REQUIRE((*l)->record_pass(pass_with("new", {"project/p"})));
  auto h = (*l)->history(ledger::HistoryQuery{});
  REQUIRE(h);
  REQUIRE(h->size() == 2);
  CHECK((*h)[1].revision == "old");
  CHECK((*h)[0].step_list.size() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("ledger: ownership is replaced whole with the converged revision, and history stays",
          "[ledger][ownership]") {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  auto& led = **l;
  CHECK(*led.owns_nothing());
  CHECK(led.converged_revision()->empty());
  REQUIRE(led.record("override/old", "override", "h0", "R0"));
  ledger::RegistrationRecord old_reg;
  old_reg.key = "registration/p/d/old";
  REQUIRE(led.record_registration(old_reg));
  ledger::PassRecord pass;
  pass.revision = "R0";
  pass.outcome = "success";
  REQUIRE(led.record_pass(pass));
  CHECK_FALSE(*led.owns_nothing());

  ledger::RegistrationRecord reg;
  reg.key = "registration/p/d/wf";
  reg.version = "v1";
  reg.activated = {"lp"};
  REQUIRE(led.replace_ownership(
      {{"project/p", "project", "h1", "R1"}, {"override/new", "override", "h2", "R1"}}, {reg},
      "R1"));
  auto managed = led.managed();
  REQUIRE(managed);
  CHECK(managed->size() == 2);
  CHECK_FALSE(managed->count("override/old"));
  CHECK(managed->at("override/new").hash == "h2");
  auto regs = led.registrations();
  REQUIRE(regs);
  CHECK(regs->size() == 1);
  CHECK(regs->at("registration/p/d/wf").activated == std::vector<std::string>{"lp"});
  CHECK(*led.converged_revision() == "R1");
  CHECK(led.history(ledger::HistoryQuery{})->size() == 1);
  REQUIRE(led.set_converged_revision("R2"));
  CHECK(*led.converged_revision() == "R2");
}

TEST_CASE("ledger: records that arrive together share one transaction, each returns committed",
          "[ledger]") {
  const auto dir = scratch_dir("group");
  const std::string path = (dir / "ledger.db").string();
  auto l = ledger::Ledger::open(path);
  REQUIRE(l);
  auto& ledger = **l;
  const auto before = ledger.write_groups();
  // Another connection holds the write lock: the first writer waits in SQLite's busy handler
  // while the other seven queue behind it; once the lock is free they go in one transaction.
  auto other = sqlite::Database::open(path, "other");
  REQUIRE(other);
  REQUIRE((*other)->exec("BEGIN IMMEDIATE", "hold the write lock"));
  std::vector<std::thread> writers;
  std::vector<int> ok(8, 0);
  for (int i = 0; i < 8; ++i)
    writers.emplace_back([&, i] {
      ok[static_cast<size_t>(i)] =
          ledger.record("override/p" + std::to_string(i) + "/TASK_RESOURCE", "override",
                        "h" + std::to_string(i), "rev")
              ? 1
              : 0;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE((*other)->exec("COMMIT", "release the write lock"));
  for (auto& t : writers) t.join();
  CHECK(ok == std::vector<int>(8, 1));
  CHECK(ledger.write_groups() - before <= 3);  // 8 calls: the first alone, the rest together
  auto m = ledger.managed();
  REQUIRE(m);
  REQUIRE(m->size() == 8);
  for (int i = 0; i < 8; ++i)
    CHECK(m->at("override/p" + std::to_string(i) + "/TASK_RESOURCE").hash ==
          "h" + std::to_string(i));
  // A forget in a group, and a reopen sees everything committed.
  REQUIRE(ledger.forget("override/p0/TASK_RESOURCE"));
  other->reset();
  l->reset();
  auto again = ledger::Ledger::open(path);
  REQUIRE(again);
  auto m2 = (*again)->managed();
  REQUIRE(m2);
  CHECK(m2->size() == 7);
  again->reset();
  std::filesystem::remove_all(dir);
}

TEST_CASE("ledger: record_all writes its changes in one transaction, forgets among them",
          "[ledger]") {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  auto& ledger = **l;
  REQUIRE(ledger.record("override/gone/TASK_RESOURCE", "override", "h", "r1"));
  const auto before = ledger.write_groups();
  CHECK(ledger.record_all({}));
  CHECK(ledger.write_groups() == before);  // nothing to write: no transaction
  std::vector<ledger::Ledger::ObjectChange> changes;
  for (int i = 0; i < 50; ++i)
    changes.push_back({"override/p" + std::to_string(i) + "/TASK_RESOURCE", "override",
                       "h" + std::to_string(i), "r2", 0, false});
  changes.push_back({"project/p0", "project", "hp", "r2", 0, false});
  changes.push_back({"override/gone/TASK_RESOURCE", {}, {}, {}, 0, true});
  REQUIRE(ledger.record_all(changes));
  CHECK(ledger.write_groups() == before + 1);
  auto m = ledger.managed();
  REQUIRE(m);
  CHECK(m->size() == 51);
  CHECK_FALSE(m->count("override/gone/TASK_RESOURCE"));
  CHECK(m->at("override/p49/TASK_RESOURCE").hash == "h49");
  CHECK(m->at("project/p0").hash == "hp");
  auto applied = ledger.applied();
  REQUIRE(applied);
  CHECK(applied->at("project/p0").revision == "r2");
}

TEST_CASE("ledger: a row the database refuses fails its whole group, and the error names its key",
          "[ledger]") {
  const auto dir = scratch_dir("refused");
  const std::string path = (dir / "ledger.db").string();
  auto l = ledger::Ledger::open(path);
  REQUIRE(l);
  auto& ledger = **l;
  REQUIRE(ledger.record("override/kept/TASK_RESOURCE", "override", "h0", "r1"));
  {
    // Another connection makes SQLite refuse one key, as a full disk or a broken file would.
    auto db = sqlite::Database::open(path, "test");
    REQUIRE(db);
    REQUIRE(
        (*db)->exec("CREATE TRIGGER refuse BEFORE INSERT ON managed WHEN "
                    "NEW.key = 'override/p2/TASK_RESOURCE' BEGIN SELECT RAISE(ABORT, "
                    "'refused by the test'); END",
                    "trigger"));
  }
  std::vector<ledger::Ledger::ObjectChange> changes;
  for (int i = 0; i < 5; ++i)
    changes.push_back({"override/p" + std::to_string(i) + "/TASK_RESOURCE", "override",
                       "h" + std::to_string(i), "r2", 0, false});
  changes.push_back({"override/kept/TASK_RESOURCE", {}, {}, {}, 0, true});
  const Status s = ledger.record_all(changes);
  REQUIRE_FALSE(s);
  INFO(s.error().message);
  // RAISE(ABORT) is a constraint failure to SQLite: the wrapper's "duplicate key (…)".
  CHECK(s.error().message ==
        "ledger: record override/p2/TASK_RESOURCE: duplicate key (refused by the test)");
  auto m = ledger.managed();
  REQUIRE(m);
  CHECK(m->size() == 1);  // rolled back: p0 and p1 are not there, the forget did not happen
  CHECK(m->count("override/kept/TASK_RESOURCE"));
  // The next group, without the refused key, is written.
  changes.erase(changes.begin() + 2);
  REQUIRE(ledger.record_all(changes));
  m = ledger.managed();
  REQUIRE(m);
  CHECK(m->size() == 4);
  CHECK_FALSE(m->count("override/kept/TASK_RESOURCE"));
  l->reset();
  std::filesystem::remove_all(dir);
}

TEST_CASE("ledger: managed counts by kind of key equal a GROUP BY over every key", "[ledger]") {
  const auto dir = scratch_dir("counts");
  const std::string path = (dir / "ledger.db").string();
  auto l = ledger::Ledger::open(path);
  REQUIRE(l);
  auto& ledger = **l;
  auto counts = ledger.managed_counts();
  REQUIRE(counts);
  CHECK(counts->empty());
  std::vector<ledger::Ledger::ObjectChange> changes;
  for (int i = 0; i < 40; ++i)
    changes.push_back({"override/p" + std::to_string(i) + "/development/TASK_RESOURCE", "override",
                       "h", "r1", 0, false});
  for (int i = 0; i < 7; ++i)
    changes.push_back({"project/p" + std::to_string(i), "project", "h", "r1", 0, false});
  // Kinds that sort around others, keys without '/' or starting with it, non-ASCII.
  for (const char* key : {"settings/org/x", "project-x/y", "project.x/y", "project0/y", "project",
                          "/leading", "no-slash", "zz/\xc3\xa9", "a/b/c/d"})
    changes.push_back({key, "object", "h", "r1", 0, false});
  REQUIRE(ledger.record_all(changes));
  counts = ledger.managed_counts();
  REQUIRE(counts);
  std::map<std::string, size_t> grouped;
  {
    auto db = sqlite::Database::open(path, "test");
    REQUIRE(db);
    auto st = (*db)->prepare(
        "SELECT substr(key, 1, instr(key, '/') - 1), COUNT(*) FROM managed GROUP BY 1", "count");
    REQUIRE(st);
    REQUIRE(st->each([&](const sqlite::Statement& row) {
      grouped[row.text(0)] = static_cast<size_t>(row.int64(1));
    }));
  }
  CHECK(*counts == grouped);
  CHECK(counts->at("override") == 40);
  CHECK(counts->at("project") == 7);
  CHECK(counts->at("") == 3);  // "project", "no-slash", "/leading"
  CHECK(counts->at("project-x") == 1);
  CHECK(counts->at("project0") == 1);
  l->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
