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

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

using git_test::eventually;
using git_test::free_port;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The timestamp ("2026-11-29T13:52:23.580Z", the first token) of the last log line containing
// `needle`, or "".
std::string log_time(const std::string& log, const std::string& needle) {
  auto at = log.rfind(needle);
  if (at == std::string::npos) return "";
  auto start = log.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  return log.substr(start, log.find(' ', start) - start);
}

// One `flytecd run` process with its own state directory, HTTP port and API token.
struct Replica {
  std::string name;
  fs::path dir;
  int port = 0;
  pid_t pid = -1;

  void start(const fs::path& config) {
    pid = fork();
    if (pid == 0) {
      int log = open((dir / "daemon.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(log, 1);
      dup2(log, 2);
      execl(FLYTECD_BINARY, FLYTECD_BINARY, "run", "--config", config.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  void kill_hard() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
  void stop() {
    if (pid <= 0) return;
    ::kill(pid, SIGTERM);
    int st = 0;
    if (!eventually([&] { return waitpid(pid, &st, WNOHANG) == pid; }, 15)) kill_hard();
    pid = -1;
  }
  httplib::Result get(const std::string& path) const {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(1);
    c.set_read_timeout(2);
    return c.Get(path);
  }
  nlohmann::json status() const {
    auto r = get("/api/v1/status");
    if (!r || r->status != 200) return nlohmann::json::object();
    return nlohmann::json::parse(r->body, nullptr, false);
  }
  // 1, 0, or -1 when the metric cannot be read.
  int leader_metric() const {
    auto r = get("/metrics");
    if (!r || r->status != 200) return -1;
    if (r->body.find("\nflytecd_leader 1") != std::string::npos) return 1;
    if (r->body.find("\nflytecd_leader 0") != std::string::npos) return 0;
    return -1;
  }
  bool leads() const {
    return status().value("leader", nlohmann::json::object()).value("isLeader", false);
  }
  bool reconciled() const { return status().contains("lastSync"); }
  std::string log() const { return slurp(dir / "daemon.log"); }
};

}  // namespace

TEST_CASE("leader election: one of two replicas reconciles, failover on API loss and SIGKILL",
          "[integration][k8s]") {
  fs::path dir = fs::temp_directory_path() / ("flytecd-leader-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
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
        << "kubernetes:\n"
        << "  apiServer: " << kube.url() << "\n"
        << "  caFile: " << kube.ca_file() << "\n"
        << "  tokenFile: " << kube.token_file(r->name) << "\n"
        << "  namespace: flytecd\n"
        << "  leaderElection: {enabled: true, identity: " << r->name << ", leaseDuration: 3s,"
        << " renewDeadline: 2s, retryPeriod: 250ms}\n";
  }
  a.start(a.dir / "config.yaml");
  b.start(b.dir / "config.yaml");
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
