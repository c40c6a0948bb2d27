// `flytecd sync --wait`: the outcome of the pass that served a request, from a status document.
#include "daemon/cli/commands/sync.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {

nlohmann::json status(uint64_t served, uint64_t last_request, int exit_code,
                      const std::string& line) {
  return {{"syncServed", served},
          {"revision", "abc"},
          {"leader", {{"enabled", false}}},
          {"lastSync",
           {{"request", last_request},
            {"revision", "abc"},
            {"outcome", exit_code == 1 ? "failed" : "success"},
            {"reason", "api sync"},
            {"time", "t"},
            {"mode", "execute"},
            {"summary", "projects: +0 ~1 -0"},
            {"plan", {{"exitCode", exit_code}, {"verdictLine", line}, {"verdict", "x"}}}}}};
}

}  // namespace

TEST_CASE("sync --wait: not served yet while syncServed is below the request", "[sync]") {
  CHECK_FALSE(cli::sync_outcome(status(4, 4, 0, "converged"), 5));
  CHECK_FALSE(cli::sync_outcome(nlohmann::json::object(), 1));
}

TEST_CASE("sync --wait: the served pass's verdict line and exit code, as apply gives them",
          "[sync]") {
  auto v = cli::sync_outcome(status(5, 5, 0, "converged"), 5);
  REQUIRE(v);
  CHECK(v->exit_code == 0);
  CHECK(v->line == "converged");
  v = cli::sync_outcome(status(6, 6, 1, "not converged: 1 failed: x"), 5);
  REQUIRE(v);  // a later pass also started after the request
  CHECK(v->exit_code == 1);
  CHECK(v->line == "not converged: 1 failed: x");
  v = cli::sync_outcome(status(5, 5, 2, "changes pending"), 5);  // suspended: plan's verdict
  REQUIRE(v);
  CHECK(v->exit_code == 2);
}

TEST_CASE("sync --wait: served without a pass, an abandoned pass or a rejected head exit 1",
          "[sync]") {
  auto s = status(5, 4, 0, "converged");  // the last pass is an earlier one
  s["sourceError"] = "source x: unreachable";
  auto v = cli::sync_outcome(s, 5);
  REQUIRE(v);
  CHECK(v->exit_code == 1);
  CHECK(v->line == "not converged: no reconcile ran: source x: unreachable");

  s = status(5, 5, 0, "converged");
  s["sourceError"] = "revision def is invalid (1 errors) and was rejected whole";
  s["rejectedRevision"] = {{"revision", "def"}, {"errors", {"a.yaml:3:1: bad"}}};
  v = cli::sync_outcome(s, 5);
  REQUIRE(v);
  CHECK(v->exit_code == 1);
  CHECK(v->line.find("rejected whole; first error: a.yaml:3:1: bad") != std::string::npos);

  s = status(5, 5, 0, "");
  s["lastSync"].erase("plan");
  s["lastSync"]["error"] = "internal error: boom";
  v = cli::sync_outcome(s, 5);
  REQUIRE(v);
  CHECK(v->exit_code == 1);
  CHECK(v->line == "not converged: internal error: boom");

  s = status(5, 4, 0, "converged");
  s["leader"] = {{"enabled", true}, {"isLeader", false}, {"leader", "pod-2"}};
  v = cli::sync_outcome(s, 5);
  REQUIRE(v);
  CHECK(v->line ==
        "not converged: no reconcile ran: this replica is not the leader (pod-2 "
        "reconciles)");
}

TEST_CASE("sync --wait: the report names the pass's revision, trigger and suspension", "[sync]") {
  auto s = status(5, 5, 2, "changes pending");
  s["subject"] = "bump";
  s["lastSync"]["mode"] = "plan";
  const auto text = cli::sync_report(s);
  CHECK(text.find("pass of abc (bump): success at t, trigger api sync, SUSPENDED: planned only") !=
        std::string::npos);
  CHECK(text.find("projects: +0 ~1 -0\n") != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
