// Ledger::registered_versions (daemon/ledger/versions.cpp): the versions a registration's history
// shows, from which a version change back to one of them is called a rollback.
#include <catch2/catch.hpp>

#include "daemon/ledger/ledger.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {

ledger::PassRecord pass_with(const std::string& key, const std::string& changes,
                             const std::string& outcome = "ok") {
  ledger::PassRecord p;
  p.revision = "c";
  p.trigger = "test";
  p.outcome = "success";
  p.steps.push_back(ledger::HistoryStep{"registered", key, outcome, "", changes});
  return p;
}

}  // namespace

TEST_CASE("ledger: registered versions come from the history's version changes", "[ledger]") {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  auto& ledger = **l;
  const std::string key = "registration/p/d/core";
  auto none = ledger.registered_versions(key);
  REQUIRE(none);
  CHECK(none->empty());
  REQUIRE(ledger.record_pass(
      pass_with(key, R"([{"path":"version","live":"v1","desired":"v2"},{"path":"digest"}])")));
  REQUIRE(ledger.record_pass(pass_with(key, R"([{"path":"version","live":"v2","desired":"v3"}])")));
  // Another key, a failed step, and a row that is not JSON do not count.
  REQUIRE(ledger.record_pass(
      pass_with("registration/p/d/other", R"([{"path":"version","live":"v7","desired":"v8"}])")));
  REQUIRE(ledger.record_pass(
      pass_with(key, R"([{"path":"version","live":"v3","desired":"v9"}])", "failed")));
  REQUIRE(ledger.record_pass(pass_with(key, "not json")));
  auto v = ledger.registered_versions(key);
  REQUIRE(v);
  CHECK(*v == std::set<std::string>{"v1", "v2", "v3"});
}

}  // namespace FLYTECD_UNITY_ID
