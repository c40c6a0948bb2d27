// The applied-revision record's ConfigMap store and Kubernetes Events against the local HTTPS
// stand-in of the Kubernetes API (tests/integration/kube_standin.hpp): create, read, update,
// a stale resourceVersion losing with 409 and the stored record unchanged; Events posted by the
// recorder and by `flytecd run` with the expected reasons, and none for a pass with nothing to do.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon/k8s/client.hpp"
#include "daemon/k8s/events.hpp"
#include "daemon/k8s/record_store.hpp"
#include "daemon/pass/pass.hpp"
#include "sinks/emulator/emulator.hpp"
#include "test_paths.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/integration/kube_standin.hpp"
#include "tests/support/daemon.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using flytecd_test::fresh_dir;
using flytecd_test::slurp;
using git_test::eventually;
using git_test::free_port;

std::shared_ptr<flytecd::k8s::Client> client_for(flytecd::testing::KubeStandIn& kube,
                                                 const std::string& token) {
  flytecd::k8s::Settings s;
  s.api_server = kube.url();
  s.ca_file = kube.ca_file();
  s.token_file = kube.token_file(token);
  s.api_namespace = "flytecd";
  auto c = flytecd::k8s::Client::create(s);
  REQUIRE(c);
  return std::shared_ptr<flytecd::k8s::Client>(std::move(*c));
}

flytecd::pass::AppliedRecord record(const std::string& converged, const std::string& writer) {
  flytecd::pass::AppliedRecord r;
  r.converged = converged;
  r.config_fingerprint = "sha256:cfg";
  r.version = "test";
  r.writer = writer;
  r.updated_at = 1764600000;
  return r;
}

}  // namespace

TEST_CASE("record store: ConfigMap create, read, update, and a stale writer gets conflict",
          "[integration][k8s][record]") {
  const fs::path dir = fresh_dir("flytecd-record");
  flytecd::testing::KubeStandIn kube(dir);
  REQUIRE(kube.ok());
  auto store = flytecd::k8s::make_config_map_record_store(client_for(kube, "leader"), "flytecd",
                                                          "flytecd-applied-revision");
  auto stale = flytecd::k8s::make_config_map_record_store(client_for(kube, "old-leader"), "flytecd",
                                                          "flytecd-applied-revision");
  CHECK(store->describe() == "ConfigMap flytecd/flytecd-applied-revision");

  // No record yet.
  auto none = store->read();
  REQUIRE(none);
  CHECK_FALSE(none->has_value());

  // Create: one data key per field, labelled.
  auto t1 = store->write(record("rev-1", "pod-a"), "");
  REQUIRE(t1);
  auto cm = kube.configmap("flytecd", "flytecd-applied-revision");
  REQUIRE(cm.is_object());
  CHECK(cm["data"]["converged"] == "rev-1");
  CHECK(cm["data"]["writer"] == "pod-a");
  CHECK(cm["data"]["updatedAt"] == "1764600000");
  CHECK(cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "flytecd");
  CHECK(cm["metadata"]["resourceVersion"] == *t1);
  auto read = store->read();
  REQUIRE(read);
  REQUIRE(read->has_value());
  CHECK((*read)->token == *t1);
  CHECK((*read)->record.converged == "rev-1");
  CHECK((*read)->record.config_fingerprint == "sha256:cfg");
  CHECK((*read)->record.updated_at == 1764600000);

  // A second create loses (AlreadyExists) and changes nothing.
  auto again = stale->write(record("rev-x", "pod-b"), "");
  REQUIRE_FALSE(again);
  CHECK(again.error().code == flytecd::ErrorCode::conflict);
  CHECK_THAT(again.error().message, Catch::Contains("another writer created it"));
  CHECK(kube.configmap("flytecd", "flytecd-applied-revision")["data"]["converged"] == "rev-1");

  // Update with the token read; the token moves on.
  auto t2 = store->write(record("rev-2", "pod-a"), *t1);
  REQUIRE(t2);
  CHECK(*t2 != *t1);
  // The old leader still holds t1: it loses with 409 and the stored record keeps rev-2.
  const size_t conflicts = kube.conflicts();
  auto lost = stale->write(record("rev-old", "pod-b"), *t1);
  REQUIRE_FALSE(lost);
  CHECK(lost.error().code == flytecd::ErrorCode::conflict);
  CHECK_FALSE(lost.error().retryable());
  CHECK_THAT(lost.error().message, Catch::Contains("ConfigMap flytecd/flytecd-applied-revision"));
  CHECK_THAT(lost.error().message, Catch::Contains("another writer updated it"));
  CHECK(kube.conflicts() == conflicts + 1);
  auto after = stale->read();
  REQUIRE(after);
  REQUIRE(after->has_value());
  CHECK((*after)->record.converged == "rev-2");
  CHECK((*after)->record.writer == "pod-a");
  CHECK((*after)->token == *t2);

  // An API server that cannot be reached is a retryable error, not a conflict; a token the
  // API server refuses is unauthenticated.
  kube.block("leader", true);
  auto down = store->write(record("rev-3", "pod-a"), *t2);
  REQUIRE_FALSE(down);
  CHECK(down.error().code == flytecd::ErrorCode::unavailable);
  CHECK(down.error().retryable());
  auto down_read = store->read();
  REQUIRE_FALSE(down_read);
  CHECK(down_read.error().retryable());
  kube.block("leader", false);
  std::ofstream(dir / "token-leader") << "revoked\n";
  auto unauth = store->read();
  REQUIRE_FALSE(unauth);
  CHECK(unauth.error().code == flytecd::ErrorCode::unauthenticated);
  CHECK(kube.configmap("flytecd", "flytecd-applied-revision")["data"]["converged"] == "rev-2");
  CHECK(kube.configmap_writes() == 2);
  fs::remove_all(dir);
}

TEST_CASE("events: the recorder posts core/v1 Events about the record's ConfigMap, rate-limited",
          "[integration][k8s][events]") {
  const fs::path dir = fresh_dir("flytecd-events");
  flytecd::testing::KubeStandIn kube(dir);
  REQUIRE(kube.ok());
  auto client = client_for(kube, "leader");
  auto store =
      flytecd::k8s::make_config_map_record_store(client, "flytecd", "flytecd-applied-revision");
  REQUIRE(store->write(record("rev-1", "pod-a"), ""));
  const std::string uid = kube.configmap("flytecd", "flytecd-applied-revision")["metadata"]["uid"];
  auto rec = flytecd::k8s::make_event_recorder(
      client, {"v1", "ConfigMap", "flytecd-applied-revision", "flytecd", ""}, "pod-a", 5min);

  flytecd::pass::Report noop;
  noop.mode = flytecd::pass::Mode::execute;
  noop.revision = "0123456789abcdef0123456789abcdef01234567";
  noop.observed = true;
  noop.applied.converged = true;
  CHECK_FALSE(rec->on_pass(noop));

  auto drift = noop;
  drift.plan.drift.push_back({flytecd::sinks::ObjectKind::override_attr, "o1", "", true, {}});
  CHECK(rec->on_pass(drift));
  CHECK_FALSE(rec->on_pass(drift));  // the same event within the interval
  auto failed = noop;
  failed.outcome = flytecd::pass::Outcome::failed;
  failed.error = flytecd::Error{flytecd::ErrorCode::unavailable, "flyteadmin: unreachable"};
  CHECK(rec->on_pass(failed));
  CHECK_FALSE(rec->on_pass(noop));
  rec->flush(10s);
  auto events = kube.events();
  REQUIRE(events.size() == 2);
  CHECK(events[0]["reason"] == "DriftDetected");
  CHECK(events[0]["type"] == "Warning");
  CHECK(events[0]["metadata"]["namespace"] == "flytecd");
  CHECK(events[0]["involvedObject"]["name"] == "flytecd-applied-revision");
  CHECK(events[0]["involvedObject"]["kind"] == "ConfigMap");
  CHECK(events[0]["involvedObject"]["uid"] == uid);  // looked up so `kubectl describe` lists it
  CHECK(events[0]["source"]["component"] == "flytecd");
  CHECK(events[0]["reportingInstance"] == "pod-a");
  CHECK(events[1]["reason"] == "ReconciliationFailed");
  CHECK_THAT(events[1]["message"].get<std::string>(),
             Catch::Contains("revision 0123456789ab failed: flyteadmin: unreachable"));

  // Best-effort: an API server that refuses the post fails nothing (it is logged).
  kube.block("leader", true);
  auto refused = noop;
  refused.outcome = flytecd::pass::Outcome::refused;
  refused.guard.reason = "would delete everything";
  CHECK(rec->on_pass(refused));
  rec->flush(10s);
  CHECK(kube.events().size() == 2);
  fs::remove_all(dir);
}

TEST_CASE(
    "events: flytecd run posts ReconciliationSucceeded for its first pass and none for a "
    "pass with nothing to do",
    "[integration][k8s][events]") {
  const fs::path dir = fresh_dir("flytecd-run-events");
  flytecd::testing::KubeStandIn kube(dir);
  REQUIRE(kube.ok());
  auto emu = flytecd::sinks::emulator::Emulator::start({});
  REQUIRE(emu.ok());
  const int port = free_port();
  {
    std::ofstream cfg(dir / "config.yaml");
    cfg << flytecd_test::daemon_config(dir,
                                       std::string(FLYTECD_SOURCE_DIR) + "/repo-layout-example",
                                       (*emu)->address(), port)
        << kube.config_section("replica")
        << "  leaderElection: {enabled: true, identity: replica-a, leaseDuration: 3s,"
        << " renewDeadline: 2s, retryPeriod: 250ms}\n"
        << "  events: {enabled: true, interval: 5m}\n";
  }
  pid_t pid = flytecd_test::spawn_and_sync(dir, port);
  INFO(slurp(dir / "daemon.log"));
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(1);
  auto status = [&] { return flytecd_test::get_json(http); };
  CHECK(status()["lastSync"]["outcome"] == "success");
  REQUIRE(eventually([&] { return !kube.events().empty(); }, 10));
  auto first = kube.events();
  REQUIRE(first.size() == 1);
  CHECK(first[0]["reason"] == "ReconciliationSucceeded");
  CHECK(first[0]["type"] == "Normal");
  CHECK(first[0]["reportingInstance"] == "replica-a");
  CHECK_THAT(first[0]["message"].get<std::string>(), Catch::Contains("applied: projects +"));

  // Two more passes of the same revision with nothing to do: no event.
  auto passes = [&]() -> long {
    auto r = http.Get("/metrics");
    if (!r || r->status != 200) return -1;
    const std::string k = "flytecd_reconcile_total{result=\"success\"} ";
    auto at = r->body.find(k);
    return at == std::string::npos ? -1 : std::atol(r->body.c_str() + at + k.size());
  };
  const long done = passes();
  REQUIRE(done >= 1);
  for (long i = 1; i <= 2; ++i) {
    auto sync = http.Post("/api/v1/sync", {{"Authorization", "Bearer sync-secret"}}, "", "");
    REQUIRE(sync);
    CHECK(sync->status == 202);
    REQUIRE(eventually([&] { return passes() >= done + i; }, 20));
  }
  CHECK(status()["lastSync"]["outcome"] == "success");
  int wstatus = 0;
  REQUIRE(flytecd_test::terminate(pid, wstatus, 15));
  CHECK(WEXITSTATUS(wstatus) == 0);
  // Shutdown sent whatever was queued: still the one event.
  CHECK(kube.events().size() == 1);
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
