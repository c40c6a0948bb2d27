// Leader election end to end: two real `flytecd run` processes against a local HTTPS stand-in of
// the Lease API (tests/integration/kube_standin.hpp) and one FlyteAdmin emulator. Exactly one
// reconciles; a leader cut off from the API server stops leading before its lease could expire
// and the other takes over; a leader killed with SIGKILL is replaced within the lease duration.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sinks/emulator/emulator.hpp"
#include "test_paths.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/integration/kube_standin.hpp"
#include "tests/support/daemon.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

using flytecd_test::Replica;
using git_test::eventually;
using git_test::free_port;

// The timestamp ("2026-11-29T13:52:23.580Z", the first token) of the last log line containing
// `needle`, or "".
std::string log_time(const std::string& log, const std::string& needle) {
  auto at = log.rfind(needle);
  if (at == std::string::npos) return "";
  auto start = log.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  return log.substr(start, log.find(' ', start) - start);
}

}  // namespace

TEST_CASE("leader election: one of two replicas reconciles, failover on API loss and SIGKILL",
          "[integration][k8s]") {
  fs::path dir = flytecd_test::fresh_dir("flytecd-leader");
  flytecd::testing::KubeStandIn kube(dir);
  REQUIRE(kube.ok());
  auto emu = flytecd::sinks::emulator::Emulator::start({});
  REQUIRE(emu.ok());

  // Short timings (client-go's defaults are 15 s / 10 s / 2 s).
  const double lease_s = 3, renew_s = 2, retry_s = 0.25;
  Replica a{"replica-a", dir / "a", free_port()}, b{"replica-b", dir / "b", free_port()};
  for (Replica* r : {&a, &b}) {
    fs::create_directories(r->dir);
    std::ofstream cfg(r->dir / "config.yaml");
    cfg << "stateDir: " << (r->dir / "state").string() << "\n"
        << "repo: " << FLYTECD_SOURCE_DIR << "/repo-layout-example\n"
        << "interval: 1h\n"
        << "admin: {endpoint: " << (*emu)->address() << ", insecure: true}\n"
        << "http: {listen: 127.0.0.1:" << r->port << "}\n"
        << kube.config_section(r->name) << "  leaderElection: {enabled: true, identity: " << r->name
        << ", leaseDuration: 3s,"
        << " renewDeadline: 2s, retryPeriod: 250ms}\n";
  }
  a.start();
  b.start();
  INFO("replica-a log:\n" << a.log() << "\nreplica-b log:\n" << b.log());

  // Exactly one leads and reconciles; the other serves health, readiness, metrics and status.
  REQUIRE(eventually([&] { return (a.reconciled() || b.reconciled()); }, 60));
  Replica& first = a.leads() ? a : b;
  Replica& second = &first == &a ? b : a;
  CHECK(first.leads());
  CHECK(first.status()["lastSync"]["outcome"] == "success");
  CHECK(kube.lease("flytecd", "flytecd")["spec"]["holderIdentity"] == first.name);
  REQUIRE(eventually(
      [&] {
        return second.status().value("leader", nlohmann::json::object()).value("leader", "") ==
               first.name;
      },
      10));
  auto fs_status = second.status();
  CHECK(fs_status["leader"]["isLeader"] == false);
  CHECK(fs_status["leader"]["leader"] == first.name);
  CHECK(fs_status["leader"]["identity"] == second.name);
  CHECK_FALSE(fs_status.contains("lastSync"));  // a follower never reconciles
  CHECK(second.get("/healthz")->status == 200);
  CHECK(eventually([&] { return second.get("/readyz")->status == 200; }, 5));
  // Over two lease renewals, never two leaders, and the follower still has not reconciled.
  for (int i = 0; i < 20; ++i) {
    CHECK(first.leader_metric() + second.leader_metric() == 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK_FALSE(second.reconciled());

  // The leader loses the API server: it stops leading within the renew deadline, which is before
  // its lease can expire, so the two never lead at once; the other takes over after expiry.
  kube.block(first.name, true);
  const auto cut = Clock::now();
  Clock::time_point stepped_down{}, took_over{};
  REQUIRE(eventually(
      [&] {
        if (stepped_down == Clock::time_point{} && first.leader_metric() == 0)
          stepped_down = Clock::now();
        if (took_over == Clock::time_point{} && second.leader_metric() == 1)
          took_over = Clock::now();
        return stepped_down != Clock::time_point{} && took_over != Clock::time_point{};
      },
      3 * lease_s));
  const double down_after = std::chrono::duration<double>(stepped_down - cut).count();
  const double over_after = std::chrono::duration<double>(took_over - cut).count();
  INFO("stepped down after " << down_after << " s, taken over after " << over_after << " s");
  CHECK(down_after <= renew_s + 2 * retry_s + 1.0);
  CHECK(stepped_down < took_over);
  // The same order from the processes' own logs (one host clock, millisecond timestamps): the
  // old leader logged that it stopped leading before the new one logged its acquisition.
  const std::string stopped_at = log_time(first.log(), "stopped leading");
  const std::string acquired_at = log_time(second.log(), second.name + " acquired lease");
  INFO("stopped leading at " << stopped_at << ", acquired at " << acquired_at);
  REQUIRE_FALSE(stopped_at.empty());
  REQUIRE_FALSE(acquired_at.empty());
  CHECK(stopped_at < acquired_at);
  CHECK(over_after >= lease_s - retry_s);  // nobody takes a lease before it expires
  REQUIRE(eventually([&] { return second.reconciled(); }, 20));
  CHECK(second.status()["lastSync"]["outcome"] == "success");
  CHECK(first.log().find("stopped leading") != std::string::npos);
  kube.block(first.name, false);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  CHECK(first.leader_metric() == 0);  // the lease is the other's now; no flapping back
  CHECK(second.leader_metric() == 1);

  // SIGKILL the leader: no release, so the survivor waits for the lease to expire.
  second.kill_hard();
  const auto killed = Clock::now();
  REQUIRE(eventually([&] { return first.leader_metric() == 1; }, 3 * lease_s));
  const double failover = std::chrono::duration<double>(Clock::now() - killed).count();
  INFO("failover after SIGKILL: " << failover << " s");
  CHECK(failover <= lease_s + 2 * retry_s + 1.0);
  auto lease = kube.lease("flytecd", "flytecd");
  CHECK(lease["spec"]["holderIdentity"] == first.name);
  CHECK(lease["spec"]["leaseTransitions"].get<int>() >= 2);
  CHECK(lease["spec"]["leaseDurationSeconds"] == 3);

  // SIGTERM releases the lease (holderIdentity emptied) for a fast hand-over.
  first.stop();
  CHECK(kube.lease("flytecd", "flytecd")["spec"]["holderIdentity"] == "");
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
