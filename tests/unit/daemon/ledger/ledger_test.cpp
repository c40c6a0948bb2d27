#include <catch2/catch.hpp>

#include <filesystem>

#include "daemon/ledger/ledger.hpp"

using namespace flytecd;

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

TEST_CASE("ledger: survives a reopen; integrity check passes", "[ledger]") {
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
