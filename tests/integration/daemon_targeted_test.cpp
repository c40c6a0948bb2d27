// `flytecd run` after a one-file Git change: the webhook's pass observes and writes only the
// project the changed file names (lastSync.scope), an out-of-band change in another project is
// left for the whole pass, and the next whole pass finds and reverts it.
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "daemon/common/json_dump.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/hmac.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
namespace admin = flyteidl::admin;

namespace {

// One project with its development label in `file` of the working copy.
void write_project(const fs::path& file, const std::string& project, const std::string& label) {
  std::ofstream(file) << "apiVersion: flytecd/v1\nkind: Project\nid: " << project
                      << "\nname: " << project << "\n---\napiVersion: flytecd/v1\n"
                      << "kind: Overrides\nproject: " << project << "\ndomain: development\n"
                      << "spec:\n  executionClusterLabel: {value: " << label << "}\n";
}

}  // namespace

TEST_CASE(
    "daemon: a pass after a one-file change is targeted, and the whole pass finds drift elsewhere",
    "[integration][daemon][targeted]") {
  const fs::path dir = flytecd_test::fresh_dir("flytecd-daemon-targeted");
  const std::string& git = flytecd_test::k_git;
  const std::string work = (dir / "work").string();
  flytecd_test::sh(git + " init -q " + work);
  write_project(dir / "work/alpha.yaml", "alpha", "a1");
  write_project(dir / "work/beta.yaml", "beta", "b1");
  flytecd_test::sh(git + " -C " + work + " add -A && " + git + " -C " + work + " commit -qm one");
  flytecd_test::sh("git clone -q --bare " + work + " " + (dir / "remote.git").string());
  flytecd_test::sh(git + " -C " + work + " remote add origin " + (dir / "remote.git").string());

  auto emu = flytecd::sinks::emulator::Emulator::start({});
  REQUIRE(emu.ok());
  const int port = git_test::free_port();
  std::ofstream(dir / "hook-secret") << "hook-s3cret\n";
  std::ofstream(dir / "sync-token") << "sync-secret\n";
  std::ofstream(dir / "config.yaml")
      << "stateDir: " << (dir / "state").string() << "\ninterval: 1h\n"
      << "git: {url: file://" << (dir / "remote.git").string() << ", ref: main}\n"
      << "admin: {endpoint: " << (*emu)->address() << ", insecure: true}\n"
      << "policy: {selfHeal: true}\n"
      << "http: {listen: 127.0.0.1:" << port
      << ", genericSecretFile: " << (dir / "hook-secret").string()
      << ", syncTokenFile: " << (dir / "sync-token").string() << "}\n";
  const pid_t pid = flytecd_test::spawn_and_sync(dir, port);
  INFO(flytecd_test::slurp(dir / "daemon.log"));
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(1);
  auto status = [&] { return flytecd_test::get_json(http); };
  REQUIRE(status()["lastSync"]["scope"]["whole"] == true);

  auto raw = flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel((*emu)->address(), grpc::InsecureChannelCredentials()));
  auto label_of = [&](const std::string& project) -> std::string {
    grpc::ClientContext ctx;
    admin::ProjectDomainAttributesGetRequest req;
    req.set_project(project);
    req.set_domain("development");
    req.set_resource_type(admin::EXECUTION_CLUSTER_LABEL);
    admin::ProjectDomainAttributesGetResponse resp;
    if (!raw->GetProjectDomainAttributes(&ctx, req, &resp).ok()) return "";
    return resp.attributes().matching_attributes().execution_cluster_label().value();
  };
  REQUIRE(label_of("alpha") == "a1");

  // Out of band, in alpha: someone runs flytectl.
  {
    grpc::ClientContext ctx;
    admin::ProjectDomainAttributesUpdateRequest req;
    auto* a = req.mutable_attributes();
    a->set_project("alpha");
    a->set_domain("development");
    a->mutable_matching_attributes()->mutable_execution_cluster_label()->set_value("by-hand");
    admin::ProjectDomainAttributesUpdateResponse resp;
    REQUIRE(raw->UpdateProjectDomainAttributes(&ctx, req, &resp).ok());
  }

  // A commit that changes beta only, and its webhook.
  write_project(dir / "work/beta.yaml", "beta", "b2");
  flytecd_test::sh(git + " -C " + work + " commit -qam beta && " + git + " -C " + work +
                   " push -q origin main");
  const std::string second = flytecd_test::git_head(dir / "work");
  const std::string body = R"({"ref":"refs/heads/main"})";
  REQUIRE(http.Post("/api/v1/webhooks/generic",
                    {{"X-Signature", "sha256=" + flytecd_test::hmac_hex("hook-s3cret", body)}},
                    body, "application/json"));
  REQUIRE(git_test::eventually([&] { return status()["lastSync"]["revision"] == second; }, 20));
  auto st = status();
  INFO(flytecd::dump_json(st));
  CHECK(st["lastSync"]["scope"]["whole"] == false);
  CHECK(st["lastSync"]["scope"]["projects"] == nlohmann::json::array({"beta"}));
  CHECK(st["lastSync"]["outcome"] == "success");
  CHECK(st["lastSync"]["summary"].get<std::string>().find("targeted: 1 project (beta)") !=
        std::string::npos);
  CHECK(label_of("beta") == "b2");
  CHECK(label_of("alpha") == "by-hand");  // not observed by the targeted pass
  CHECK(st["drift"].empty());
  // Status still lists alpha's objects (from the whole pass) beside beta's.
  CHECK(flytecd::dump_json(st["objects"])
            .find("override/alpha/development//EXECUTION_CLUSTER_LABEL") != std::string::npos);

  // The whole pass (a sync through the API; the interval's drift scan is the same pass) finds
  // alpha's drift and reverts it.
  REQUIRE(http.Post("/api/v1/sync", {{"Authorization", "Bearer sync-secret"}}, "", ""));
  REQUIRE(git_test::eventually([&] { return label_of("alpha") == "a1"; }, 20));
  REQUIRE(git_test::eventually([&] { return status()["lastSync"]["scope"]["whole"] == true; }, 20));
  st = status();
  CHECK(st["lastSync"]["summary"].get<std::string>().find("drift 1") != std::string::npos);
  CHECK(
      flytecd::dump_json(st["drift"]).find("override/alpha/development//EXECUTION_CLUSTER_LABEL") !=
      std::string::npos);

  int wstatus = 0;
  REQUIRE(flytecd_test::terminate(pid, wstatus, 15));
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
