// `flytecd run` as users run it: the binary, a real Git remote (file://), the FlyteAdmin emulator
// on loopback, HTTP endpoints and a signed webhook.
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/hmac.h>
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

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
namespace admin = flyteidl::admin;

namespace {

using git_test::eventually;
using git_test::free_port;

void sh(const std::string& cmd) {
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

std::string git_head(const fs::path& repo) {
  std::string out;
  FILE* p = popen(("git -C " + repo.string() + " rev-parse HEAD").c_str(), "r");
  char buf[128];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string hmac_hex(const std::string& key, const std::string& body) {
  unsigned char md[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), md, &len);
  static const char* k_hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += k_hex[md[i] >> 4];
    out += k_hex[md[i] & 0xF];
  }
  return out;
}

// Polls `pred` every 50 ms until it holds or `seconds` pass.
}  // namespace

TEST_CASE(
    "daemon: follows a Git remote, rejects an invalid revision whole, reacts to a signed webhook",
    "[integration][daemon]") {
  fs::path dir = fs::temp_directory_path() / ("flytecd-daemon-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string git =
      "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main";
  // A working copy with the example repository under flyte/, pushed to a bare remote.
  sh(git + " init -q " + (dir / "work").string());
  fs::copy(fs::path(FLYTECD_SOURCE_DIR) / "repo-layout-example", dir / "work/flyte",
           fs::copy_options::recursive);
  sh(git + " -C " + (dir / "work").string() + " add -A && " + git + " -C " +
     (dir / "work").string() + " commit -qm initial");
  sh("git clone -q --bare " + (dir / "work").string() + " " + (dir / "remote.git").string());
  sh(git + " -C " + (dir / "work").string() + " remote add origin " +
     (dir / "remote.git").string());

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
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int log = open((dir / "daemon.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(log, 1);
    dup2(log, 2);
    execl(FLYTECD_BINARY, FLYTECD_BINARY, "run", "--config", (dir / "config.yaml").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  auto log_text = [&] {
    std::ifstream in(dir / "daemon.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(1);
  auto status = [&]() -> nlohmann::json {
    auto r = http.Get("/api/v1/status");
    if (!r || r->status != 200) return nlohmann::json::object();
    return nlohmann::json::parse(r->body, nullptr, false);
  };
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
  kill(pid, SIGTERM);
  int wstatus = 0;
  REQUIRE(eventually([&] { return waitpid(pid, &wstatus, WNOHANG) == pid; }, 15));
  CHECK(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) == 0);
  CHECK(log_text().find("stopped") != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
