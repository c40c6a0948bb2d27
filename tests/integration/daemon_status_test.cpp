// `flytecd run` (the binary): /api/v1/status says what FlyteAdmin answered in this reconcile,
// never what the plan alone would make of Git. While every reconcile fails at OAuth (the token
// endpoint refuses the client), no object is "synced" and FlyteAdmin has none of them; once the
// token endpoint recovers, objects are "synced" only after they were written and observed.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "test_paths.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/support/daemon.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
namespace admin = flyteidl::admin;
using git_test::eventually;
using git_test::free_port;

namespace {

// A token endpoint that refuses (HTTP 401) until `accept` is set.
class TokenServer {
 public:
  std::atomic<bool> accept{false};
  std::atomic<int> requests{0};
  TokenServer() {
    m_server.Post("/oauth2/token", [this](const httplib::Request&, httplib::Response& res) {
      ++requests;
      if (!accept) {
        res.status = 401;
        res.set_content(R"({"error":"invalid_client"})", "application/json");
        return;
      }
      res.set_content(R"({"access_token":"tok-1","token_type":"bearer","expires_in":3600})",
                      "application/json");
    });
    m_port = m_server.bind_to_any_port("127.0.0.1");
    m_thread = std::thread([this] { m_server.listen_after_bind(); });
  }
  ~TokenServer() {
    m_server.stop();
    m_thread.join();
  }
  int port() const { return m_port; }

 private:
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
};

}  // namespace

TEST_CASE(
    "daemon: while every reconcile fails at OAuth no object is synced, after recovery "
    "objects are synced only once observed",
    "[integration][daemon][oauth]") {
  const fs::path dir = flytecd_test::fresh_dir("flytecd-status-truth");
  fs::create_directories(dir / "repo");
  {
    std::ofstream f(dir / "repo/p1.yaml");
    f << "apiVersion: flytecd/v1\nkind: Project\nid: p1\nname: P1\n---\n"
         "apiVersion: flytecd/v1\nkind: Overrides\nproject: p1\ndomain: development\n"
         "spec:\n  executionClusterLabel: {value: c1}\n";
  }
  std::ofstream(dir / "client-secret") << "status-test-oauth-SECRET\n";
  TokenServer tokens;
  auto emu = flytecd::sinks::emulator::Emulator::start({});
  REQUIRE(emu.ok());
  const int port = free_port();
  {
    std::ofstream cfg(dir / "config.yaml");
    cfg << "repo: " << (dir / "repo").string() << "\n"
        << "stateDir: " << (dir / "state").string() << "\n"
        << "interval: 1s\n"
        << "admin: {endpoint: " << (*emu)->address()
        << ", insecure: true, authType: ClientSecret, clientId: flytecd, clientSecretLocation: "
        << (dir / "client-secret").string() << ", tokenUrl: 'http://127.0.0.1:" << tokens.port()
        << "/oauth2/token', authorizationHeader: flyte-authorization, scopes: [all],\n"
        << "  maxRetries: 1}\n"
        << "http: {listen: 127.0.0.1:" << port << "}\n";
  }
  pid_t pid =
      flytecd_test::spawn_run((dir / "config.yaml").string(), (dir / "daemon.log").string());
  REQUIRE(pid >= 0);
  // A failing REQUIRE must not leave the daemon running.
  flytecd_test::Reaper reaper{pid};
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(1);
  auto status = [&] { return flytecd_test::get_json(http); };
  auto raw = flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel((*emu)->address(), grpc::InsecureChannelCredentials()));
  auto live_projects = [&] {
    std::set<std::string> out;
    grpc::ClientContext ctx;
    admin::ProjectListRequest req;
    admin::Projects resp;
    if (raw->ListProjects(&ctx, req, &resp).ok())
      for (const auto& p : resp.projects()) out.insert(p.id());
    return out;
  };
  auto fail_with_log = [&](const char* what) {
    FAIL(what << "\n" << flytecd_test::slurp(dir / "daemon.log"));
  };

  // Reconciles fail at the token endpoint (two of them, so this is not a first-pass artefact).
  if (!eventually([&] { return tokens.requests.load() >= 2 && status().contains("lastSync"); }, 30))
    fail_with_log("no failed reconcile reported");
  {
    const nlohmann::json st = status();
    INFO(st.dump(2));
    CHECK(st["lastSync"]["outcome"] == "failed");
    CHECK(st["lastSync"]["errorCode"] == "unauthenticated");
    const nlohmann::json objects = st["objects"];
    REQUIRE(objects.size() == 2);
    for (const auto& o : objects) {
      CHECK(o["state"] == "unknown");
      CHECK(o["error"].get<std::string>().find("HTTP 401") != std::string::npos);
    }
    CHECK(st.dump().find("status-test-oauth-SECRET") == std::string::npos);
  }
  CHECK(live_projects().count("p1") == 0);
  auto ready = http.Get("/readyz");
  REQUIRE(ready);
  CHECK(ready->status != 200);

  // The token endpoint recovers: synced once FlyteAdmin has them and a reconcile observed so.
  tokens.accept = true;
  nlohmann::json synced;
  if (!eventually(
          [&] {
            synced = status();
            if (!synced.contains("objects") || synced["objects"].size() != 2) return false;
            for (const auto& o : synced["objects"])
              if (o["state"] != "synced") return false;
            return true;
          },
          30))
    fail_with_log("objects never became synced");
  INFO(synced.dump(2));
  CHECK(synced["lastSync"]["outcome"] == "success");
  CHECK(live_projects().count("p1") == 1);  // and FlyteAdmin has it
  CHECK(eventually(
      [&] {
        auto r = http.Get("/readyz");
        return r && r->status == 200;
      },
      10));

  int wstatus = 0;
  REQUIRE(flytecd_test::terminate(pid, wstatus, 15));
  reaper.pid = 0;
  CHECK(WIFEXITED(wstatus));
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
