// `flytecd run` as users run it: the binary, a real Git remote (file://), the FlyteAdmin emulator
// on loopback, HTTP endpoints and a signed webhook.
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "test_paths.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/hmac.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
namespace admin = flyteidl::admin;

namespace {

using flytecd_test::hmac_hex;

using flytecd_test::git_head;
using flytecd_test::sh;
using git_test::eventually;
using git_test::free_port;

// Polls `pred` every 50 ms until it holds or `seconds` pass.
}  // namespace

TEST_CASE(
    "daemon: follows a Git remote, rejects an invalid revision whole, reacts to a signed webhook",
    "[integration][daemon]") {
  fs::path dir = flytecd_test::fresh_dir("flytecd-daemon");
  const std::string& git = flytecd_test::k_git;
  // A working copy with the example repository under flyte/, pushed to a bare remote.
  flytecd_test::example_remote(dir);

  auto emu = flytecd::sinks::emulator::Emulator::start({});
  REQUIRE(emu.ok());
  const int port = free_port();
  {
    std::ofstream(dir / "hook-secret") << "s3cret-hook\n";
    std::ofstream cfg(dir / "config.yaml");
    cfg << "stateDir: " << (dir / "state").string() << "\n"
        << "interval: 1h\n"
        << "git: {url: file://" << (dir / "remote.git").string() << ", ref: main, path: flyte}\n"
        << "admin: {endpoint: " << (*emu)->address() << ", insecure: true}\n"
        << "http: {listen: 127.0.0.1:" << port
        << ", genericSecretFile: " << (dir / "hook-secret").string() << "}\n";
  }
  pid_t pid =
      flytecd_test::spawn_run((dir / "config.yaml").string(), (dir / "daemon.log").string());
  REQUIRE(pid >= 0);
  auto log_text = [&] { return flytecd_test::slurp(dir / "daemon.log"); };
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(1);
  auto status = [&] { return flytecd_test::get_json(http); };
  INFO(log_text());
  REQUIRE(eventually(
      [&] {
        auto r = http.Get("/readyz");
        return r && r->status == 200;
      },
      30));
  const std::string first = git_head(dir / "work");
  CHECK(status()["revision"] == first);
  auto h = http.Get("/healthz");
  REQUIRE(h);
  CHECK(h->status == 200);
  auto metrics = http.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->body.find("flytecd_revision_info{revision=\"" + first + "\"} 1") !=
        std::string::npos);
  CHECK(metrics->body.find("flytecd_target_is_emulator 0") != std::string::npos);

  // Registrations: the packages are read from the Git revision (they live under flyte/packages).
  REQUIRE(eventually([&] { return status()["registrations"].size() == 6; }, 20));
  const nlohmann::json with_registrations = status();  // the loop must not iterate a temporary
  for (const auto& r : with_registrations["registrations"]) {
    INFO(r.dump());
    CHECK((r["state"] == "registered" || r["state"] == "in-sync"));
    CHECK(r["digest"].get<std::string>().rfind("sha256:", 0) == 0);
    if (r["name"] == "flytesnacks-core-development") {
      CHECK(r["counts"]["tasks"] == 39);
      CHECK(r["counts"]["launchPlans"] == 24);
      CHECK(r["active"].size() == 24);
    }
  }
  // /readyz turns ready once overrides are applied, before packages finish: read the metrics
  // again now that the registrations are reported.
  metrics = http.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->body.find("flytecd_registrations{state=\"failed\"} 0") != std::string::npos);

  auto raw = flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel((*emu)->address(), grpc::InsecureChannelCredentials()));
  auto label_of = [&](const std::string& project, const std::string& domain) -> std::string {
    grpc::ClientContext ctx;
    admin::ProjectDomainAttributesGetRequest req;
    req.set_project(project);
    req.set_domain(domain);
    req.set_resource_type(admin::EXECUTION_CLUSTER_LABEL);
    admin::ProjectDomainAttributesGetResponse resp;
    if (!raw->GetProjectDomainAttributes(&ctx, req, &resp).ok()) return "";
    return resp.attributes().matching_attributes().execution_cluster_label().value();
  };

  // A new commit + a webhook with a bad signature: 401, nothing happens.
  {
    std::ofstream f(dir / "work/flyte/zz-new.yaml");
    f << "apiVersion: flytecd/v1\nkind: Overrides\nproject: flytesnacks\ndomain: staging\n"
         "spec:\n  executionClusterLabel: {value: from-the-webhook-commit}\n";
  }
  sh(git + " -C " + (dir / "work").string() + " add -A && " + git + " -C " +
     (dir / "work").string() + " commit -qm change && git -C " + (dir / "work").string() +
     " push -q origin main");
  const std::string second = git_head(dir / "work");
  const std::string body = R"({"ref":"refs/heads/main"})";
  auto bad =
      http.Post("/api/v1/webhooks/generic", {{"X-Signature", "sha256=" + hmac_hex("wrong", body)}},
                body, "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 401);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(status()["revision"] == first);

  // A good signature triggers an immediate poll (the interval is an hour).
  auto good = http.Post("/api/v1/webhooks/generic",
                        {{"X-Signature", "sha256=" + hmac_hex("s3cret-hook", body)}}, body,
                        "application/json");
  REQUIRE(good);
  CHECK(good->status == 202);
  REQUIRE(eventually([&] { return status()["revision"] == second; }, 20));
  REQUIRE(eventually(
      [&] { return label_of("flytesnacks", "staging") == "from-the-webhook-commit"; }, 10));

  // An invalid revision is rejected whole: the valid part of it is not applied either.
  {
    std::ofstream f(dir / "work/flyte/zz-new.yaml");
    f << "apiVersion: flytecd/v1\nkind: Overrides\nproject: flytesnacks\ndomain: staging\n"
         "spec:\n  executionClusterLabel: {value: must-not-be-applied}\n";
    std::ofstream b(dir / "work/flyte/zz-broken.yaml");
    b << "apiVersion: flytecd/v1\nkind: Overrides\nproject: flytesnacks\nworkflow: no-domain\n"
         "spec:\n  executionClusterLabel: {value: x}\n";
  }
  sh(git + " -C " + (dir / "work").string() + " add -A && " + git + " -C " +
     (dir / "work").string() + " commit -qm broken && git -C " + (dir / "work").string() +
     " push -q origin main");
  const std::string third = git_head(dir / "work");
  auto again = http.Post("/api/v1/webhooks/generic",
                         {{"X-Signature", "sha256=" + hmac_hex("s3cret-hook", body)}}, body,
                         "application/json");
  REQUIRE(again);
  REQUIRE(eventually(
      [&] {
        return status().value("rejectedRevision", nlohmann::json::object()).value("revision", "") ==
               third;
      },
      20));
  auto st = status();
  CHECK(st["revision"] == second);
  CHECK(st["rejectedRevision"]["errors"].dump().find("zz-broken.yaml:4") != std::string::npos);
  CHECK(label_of("flytesnacks", "staging") == "from-the-webhook-commit");
  auto m2 = http.Get("/metrics");
  REQUIRE(m2);
  CHECK(m2->body.find("flytecd_reconcile_total{result=\"invalid\"} 1") != std::string::npos);

  // SIGTERM stops cleanly.
  int wstatus = 0;
  REQUIRE(flytecd_test::terminate(pid, wstatus, 15));
  CHECK(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) == 0);
  CHECK(log_text().find("stopped") != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
