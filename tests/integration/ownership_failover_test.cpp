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
#include "tests/support/daemon.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
namespace admin = flyteidl::admin;

namespace {

using flytecd_test::Replica;
using flytecd_test::sh;
using git_test::eventually;
using git_test::free_port;

}  // namespace

TEST_CASE(
    "ownership failover: a new leader with an empty ledger prunes what the killed leader "
    "created and Git no longer declares, and a stale record writer gets 409",
    "[integration][k8s][failover]") {
  const fs::path dir = flytecd_test::fresh_dir("flytecd-failover");
  const std::string& git = flytecd_test::k_git;
  const std::string work = (dir / "work").string();
  flytecd_test::example_remote(dir);
  const std::string first_rev = flytecd_test::git_head(dir / "work");

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
        << kube.config_section(r->name) << "  leaderElection: {enabled: true, identity: " << r->name
        << ", leaseDuration: 3s,"
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
  const std::string second_rev = flytecd_test::git_head(dir / "work");

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
