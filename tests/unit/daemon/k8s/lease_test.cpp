// Leader-election rules (pure): who may take or renew a Lease, and what is written.
#include <catch2/catch.hpp>

#include <chrono>

#include "daemon/k8s/lease.hpp"
#include "daemon/k8s/settings.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace std::chrono_literals;
using flytecd::k8s::LeaseRecord;
using flytecd::k8s::next_record;

TEST_CASE("lease: a free lease (no holder) is taken at once and counts a transition", "[k8s]") {
  LeaseRecord free{"", 15, "t0", "t0", 4};
  auto next = next_record(free, "b", 0ms, 15, "t1");
  REQUIRE(next);
  CHECK(next->holder == "b");
  CHECK(next->acquire_time == "t1");
  CHECK(next->renew_time == "t1");
  CHECK(next->transitions == 5);
  CHECK(next->lease_duration_seconds == 15);
}

TEST_CASE("lease: another holder's lease is respected until unchanged for its duration", "[k8s]") {
  LeaseRecord held{"a", 15, "t0", "t0", 1};
  CHECK_FALSE(next_record(held, "b", 0ms, 15, "t1"));
  CHECK_FALSE(next_record(held, "b", 14999ms, 15, "t1"));
  auto taken = next_record(held, "b", 15000ms, 15, "t2");
  REQUIRE(taken);
  CHECK(taken->holder == "b");
  CHECK(taken->acquire_time == "t2");
  CHECK(taken->transitions == 2);
}

TEST_CASE("lease: expiry uses the holder's leaseDurationSeconds, not ours", "[k8s]") {
  LeaseRecord held{"a", 60, "t0", "t0", 0};
  CHECK_FALSE(next_record(held, "b", 20s, 15, "t1"));
  CHECK(next_record(held, "b", 60s, 15, "t1"));
}

TEST_CASE("lease: renewing our own lease keeps acquireTime and transitions", "[k8s]") {
  LeaseRecord mine{"a", 15, "t0", "t5", 3};
  auto next = next_record(mine, "a", 0ms, 15, "t6");
  REQUIRE(next);
  CHECK(next->acquire_time == "t0");
  CHECK(next->renew_time == "t6");
  CHECK(next->transitions == 3);
}

TEST_CASE("lease: objects carry resourceVersion for optimistic concurrency and round-trip",
          "[k8s]") {
  LeaseRecord r{"pod-a", 15, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:02.000000Z", 2};
  auto obj = flytecd::k8s::lease_object("flytecd", "ops", "42", r);
  CHECK(obj["apiVersion"] == "coordination.k8s.io/v1");
  CHECK(obj["metadata"]["resourceVersion"] == "42");
  CHECK(obj["metadata"]["namespace"] == "ops");
  CHECK_FALSE(
      flytecd::k8s::lease_object("flytecd", "ops", "", r)["metadata"].contains("resourceVersion"));
  auto back = flytecd::k8s::parse_lease(obj.dump());
  REQUIRE(back);
  CHECK(back->resource_version == "42");
  CHECK(back->record == r);
  CHECK_FALSE(flytecd::k8s::parse_lease(R"({"kind":"Status","code":404})"));
}

// Issue 27.8: parse_lease read metadata.resourceVersion with value(), which throws type_error
// when the API server (or a proxy) answers with another type.
TEST_CASE("lease: an answer whose fields have the wrong type is an error, not an exception",
          "[k8s]") {
  for (const char* body : {R"({"kind":"Lease","metadata":{"resourceVersion":42}})",
                           R"({"kind":"Lease","metadata":{"resourceVersion":{"a":1}}})",
                           R"({"kind":"Lease","metadata":"x"})", R"({"kind":7,"metadata":{}})",
                           R"({"kind":"Lease","metadata":[1,2]})", R"([1,2])", "not json"}) {
    flytecd::Result<flytecd::k8s::ObservedLease> r =
        flytecd::make_error(flytecd::ErrorCode::internal, "unset");
    REQUIRE_NOTHROW(r = flytecd::k8s::parse_lease(body));
    CHECK_FALSE(r);
  }
  // Optional spec fields of the wrong type read as absent, as before.
  auto odd = flytecd::k8s::parse_lease(
      R"({"kind":"Lease","metadata":{"resourceVersion":"7"},"spec":{"holderIdentity":5}})");
  REQUIRE(odd);
  CHECK(odd->resource_version == "7");
  CHECK(odd->record.holder.empty());
}

// Issue 27.8: lround(NaN) made `retryPeriod: nan` 0 ms.
TEST_CASE("lease: kubernetes durations go through the one duration parser, with ranges",
          "[k8s][duration]") {
  for (const char* bad : {"nan", "inf", "1e10", "0ms", "50ms", "600000h"}) {
    flytecd::k8s::Settings st;
    auto s = flytecd::k8s::parse_settings(
        YAML::Load(std::string("{leaderElection: {retryPeriod: \"") + bad + "\"}}"), "test", st);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("kubernetes.leaderElection.retryPeriod: \"" +
                                                  std::string(bad) + "\""));
    CHECK_THAT(s.error().message, Catch::Contains("between 100ms and 24h"));
  }
  flytecd::k8s::Settings ev;
  auto e = flytecd::k8s::parse_settings(YAML::Load("{events: {interval: nan}}"), "test", ev);
  REQUIRE_FALSE(e);
  CHECK_THAT(e.error().message, Catch::Contains("kubernetes.events.interval: \"nan\" is not a "
                                                "duration"));
}

TEST_CASE("lease: MicroTime has microseconds and a Z", "[k8s]") {
  std::chrono::system_clock::time_point t{std::chrono::microseconds(1764421848123456LL)};
  CHECK(flytecd::k8s::micro_time(t) == "2025-11-29T13:10:48.123456Z");
}

TEST_CASE("kubernetes settings: client-go defaults, durations, and the renew-deadline rule",
          "[k8s]") {
  flytecd::k8s::Settings s;
  CHECK(s.leader_election.lease_duration_ms == 15000);
  CHECK(s.leader_election.renew_deadline_ms == 10000);
  CHECK(s.leader_election.retry_period_ms == 2000);
  auto ok = YAML::Load(
      "{leaderElection: {enabled: true, leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 250ms,"
      " identity: a}, configMap: {enabled: true, namespace: flyte, restartDeployment: "
      "flyteadmin}}");
  REQUIRE(flytecd::k8s::parse_settings(ok, "test", s).ok());
  CHECK(s.leader_election.lease_duration_ms == 3000);
  CHECK(s.leader_election.retry_period_ms == 250);
  CHECK(s.config_map.restart_deployment == "flyteadmin");

  flytecd::k8s::Settings bad;
  auto late = flytecd::k8s::parse_settings(
      YAML::Load("{leaderElection: {leaseDuration: 10s, renewDeadline: 10s}}"), "test", bad);
  REQUIRE_FALSE(late.ok());
  CHECK(late.error().message.find("renewDeadline must be shorter") != std::string::npos);
  flytecd::k8s::Settings frac;
  CHECK_FALSE(flytecd::k8s::parse_settings(YAML::Load("{leaderElection: {leaseDuration: 1500ms}}"),
                                           "test", frac)
                  .ok());
  flytecd::k8s::Settings typo;
  auto unknown =
      flytecd::k8s::parse_settings(YAML::Load("{leaderElection: {leaseDurration: 3s}}"), "t", typo);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message.find("leaseDurration") != std::string::npos);
}

TEST_CASE("kubernetes settings: explicit API settings win over in-cluster defaults", "[k8s]") {
  flytecd::k8s::Settings s;
  s.api_server = "https://127.0.0.1:6443";
  s.token_file = "/tmp/token";
  s.ca_file = "/tmp/ca.crt";
  s.api_namespace = "ops";
  auto r = flytecd::k8s::resolve_in_cluster(s);
  REQUIRE(r);
  CHECK(r->leader_election.lease_namespace == "ops");
  CHECK(r->config_map.cm_namespace == "ops");
}

}  // namespace FLYTECD_UNITY_ID
