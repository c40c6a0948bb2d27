// Ownership across a failover (issue 12), end to end: two `flytecd run` processes against the
// HTTPS stand-in of the Kubernetes API (Lease + the applied-revision record's ConfigMap), one
// FlyteAdmin emulator and a Git remote. The leader applies the example repository and records
// the revision it converged; it is killed with SIGKILL; a file is removed from Git; the survivor
// (empty ledger) rebuilds ownership from the recorded revision and prunes what was removed.
// Then the old leader's stale resourceVersion loses: 409, and the record keeps the new value.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
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
#include "daemon/k8s/record_store.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "test_paths.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/integration/kube_standin.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
namespace admin = flyteidl::admin;

namespace {

using git_test::eventually;
using git_test::free_port;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void sh(const std::string& cmd) {
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

std::string head_of(const fs::path& repo) {
  std::string out;
  FILE* p = popen(("git -C " + repo.string() + " rev-parse HEAD").c_str(), "r");
  char buf[128];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

struct Replica {
  std::string name;
  fs::path dir;
  int port = 0;
  pid_t pid = -1;

  void start() {
    pid = fork();
    if (pid == 0) {
      int log = open((dir / "daemon.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(log, 1);
      dup2(log, 2);
      execl(FLYTECD_BINARY, FLYTECD_BINARY, "run", "--config", (dir / "config.yaml").c_str(),
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
  nlohmann::json status() const {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(1);
    c.set_read_timeout(2);
    auto r = c.Get("/api/v1/status");
    if (!r || r->status != 200) return nlohmann::json::object();
    return nlohmann::json::parse(r->body, nullptr, false);
  }
  bool leads() const {
    return status().value("leader", nlohmann::json::object()).value("isLeader", false);
  }
  std::string log() const { return slurp(dir / "daemon.log"); }
};

}  // namespace

TEST_CASE(
    "ownership failover: a new leader with an empty ledger prunes what the killed leader "
    "created and Git no longer declares, and a stale record writer gets 409",
    "[integration][k8s][failover]") {
  const fs::path dir =
      fs::temp_directory_path() / ("flytecd-failover-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string git =
      "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main";
  const std::string work = (dir / "work").string();
  sh(git + " init -q " + work);
  fs::copy(fs::path(FLYTECD_SOURCE_DIR) / "repo-layout-example", dir / "work/flyte",
           fs::copy_options::recursive);
  sh(git + " -C " + work + " add -A && " + git + " -C " + work + " commit -qm initial");
  sh("git clone -q --bare " + work + " " + (dir / "remote.git").string());
  sh(git + " -C " + work + " remote add origin " + (dir / "remote.git").string());
  const std::string first_rev = head_of(dir / "work");

  flytecd::testing::KubeStandIn kube(dir);
  REQUIRE(kube.ok());
  auto emu = flytecd::sinks::emulator::Emulator::start({});
  REQUIRE(emu.ok());
  Replica a{"replica-a", dir / "a", free_port()}, b{"replica-b", dir / "b", free_port()};
  for (Replica* r : {&a, &b}) {
    fs::create_directories(r->dir);
    std::ofstream cfg(r->dir / "config.yaml");
    cfg << "stateDir: " << (r->dir / "state").string() << "\n"
        << "interval: 2s\n"
        << "git: {url: file://" << (dir / "remote.git").string() << ", ref: main, path: flyte}\n"
        << "admin: {endpoint: " << (*emu)->address() << ", insecure: true}\n"
        << "http: {listen: 127.0.0.1:" << r->port << "}\n"
        << "kubernetes:\n"
        << "  apiServer: " << kube.url() << "\n"
        << "  caFile: " << kube.ca_file() << "\n"
        << "  tokenFile: " << kube.token_file(r->name) << "\n"
        << "  namespace: flytecd\n"
        << "  leaderElection: {enabled: true, identity: " << r->name << ", leaseDuration: 3s,"
        << " renewDeadline: 2s, retryPeriod: 250ms}\n"
        << "  appliedRecord: {enabled: true, name: flytecd-applied-revision}\n";
  }
  a.start();
  b.start();
  auto logs = [&] { return "replica-a log:\n" + a.log() + "\nreplica-b log:\n" + b.log(); };

  auto raw = flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel((*emu)->address(), grpc::InsecureChannelCredentials()));
  auto staging_quota_exists = [&] {
    grpc::ClientContext ctx;
    admin::ProjectDomainAttributesGetRequest req;
    req.set_project("data-eng");
    req.set_domain("staging");
    req.set_resource_type(admin::CLUSTER_RESOURCE);
    admin::ProjectDomainAttributesGetResponse resp;
    return raw->GetProjectDomainAttributes(&ctx, req, &resp).ok();
  };
  auto record = [&]() -> nlohmann::json {
    auto cm = kube.configmap("flytecd", "flytecd-applied-revision");
    return cm.is_object() && cm.contains("data") ? cm["data"] : nlohmann::json::object();
  };

  // The leader converges the first revision, creates data-eng/staging's overrides and records
  // the revision.
  REQUIRE(eventually([&] { return a.leads() || b.leads(); }, 30));
  Replica& leader = a.leads() ? a : b;
  Replica& survivor = &leader == &a ? b : a;
  REQUIRE(eventually([&] { return leader.status()["lastSync"]["outcome"] == "success"; }, 60));
  CHECK(staging_quota_exists());
  if (!eventually([&] { return record().value("converged", "") == first_rev; }, 20))
    FAIL("the leader did not record " << first_rev << ": " << record().dump() << "\n" << logs());
  CHECK(record()["writer"] == leader.name);
  const std::string old_token =
      kube.configmap("flytecd", "flytecd-applied-revision")["metadata"]["resourceVersion"];

  // SIGKILL: no release, no last write. Git then drops data-eng/staging.
  leader.kill_hard();
  sh(git + " -C " + work + " rm -q flyte/projects/data-eng/staging.yaml && " + git + " -C " + work +
     " commit -qm 'drop data-eng staging' && " + git + " -C " + work + " push -q origin HEAD:main");
  const std::string second_rev = head_of(dir / "work");

  // The survivor takes the lease, rebuilds ownership from the record (its ledger is empty) and
  // prunes the two overrides of the deleted file: they were flytecd's, not unmanaged.
  REQUIRE(eventually([&] { return survivor.leads(); }, 15));
  if (!eventually(
          [&] {
            auto s = survivor.status();
            return s["revision"] == second_rev && s["lastSync"]["outcome"] == "success";
          },
          60))
    FAIL("the survivor did not converge " << second_rev << "\n" << logs());
  CHECK_FALSE(staging_quota_exists());
  size_t unmanaged = 0;
  const nlohmann::json objects = survivor.status()["objects"];
  for (const auto& o : objects) unmanaged += o.value("state", "") == "unmanaged";
  CHECK(unmanaged == 0);
  REQUIRE(eventually([&] { return record().value("converged", "") == second_rev; }, 20));
  CHECK(record()["writer"] == survivor.name);

  // The old leader's last write, had it survived, carries the token it read: it loses.
  flytecd::k8s::Settings ks;
  ks.api_server = kube.url();
  ks.ca_file = kube.ca_file();
  ks.token_file = kube.token_file(leader.name);
  auto client = flytecd::k8s::Client::create(ks);
  REQUIRE(client);
  auto stale = flytecd::k8s::make_config_map_record_store(
      std::shared_ptr<flytecd::k8s::Client>(std::move(*client)), "flytecd",
      "flytecd-applied-revision");
  flytecd::pass::AppliedRecord old;
  old.converged = first_rev;
  old.writer = leader.name;
  auto lost = stale->write(old, old_token);
  REQUIRE_FALSE(lost);
  CHECK(lost.error().code == flytecd::ErrorCode::conflict);
  CHECK(record()["converged"] == second_rev);
  CHECK(record()["writer"] == survivor.name);

  survivor.stop();
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
