// `flytecd run` (the binary) when its peers go away: the Git remote (git http-backend behind
// lighttpd) stops answering and comes back with a new commit; the FlyteAdmin target (the
// standalone emulator) stops and is restarted on the same port.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "test_paths.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/integration/git/lighttpd_git.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/tools.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

using git_test::eventually;

namespace admin = flyteidl::admin;
namespace emulator = flytecd::sinks::emulator;
using flytecd_test::DaemonProcess;
using git_test::git;
using git_test::spit;

// Polls `pred` every 50 ms until it holds or `seconds` pass.
// The value of one sample line of a Prometheus text exposition ("name{labels} value"); 0 when
// the sample is absent.
double sample(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return 0;
  return std::strtod(text.c_str() + at + 1 + series.size() + 1, nullptr);
}

std::string overrides_doc(const std::string& label) {
  return "apiVersion: flytecd/v1\nkind: Overrides\nproject: remote-down\ndomain: development\n"
         "spec:\n  executionClusterLabel: {value: " +
         label + "}\n";
}

}  // namespace

TEST_CASE(
    "daemon: a Git remote that goes away keeps the last revision in force and is reported, and a "
    "target that goes away makes the replica unready until it is back",
    "[daemon][integration]") {
  FLYTECD_REQUIRE_LIGHTTPD();
  git_test::WorkAndRemote repos("served/remote.git");
  const std::string &home = repos.home, &work = repos.work, &remote = repos.remote;
  auto commit_and_push = [&](const std::string& label) {
    spit(git_test::stdfs::path(work) / "flyte/overrides.yaml", overrides_doc(label));
    git(home, work, {"add", "-A"});
    git(home, work, {"commit", "-q", "-m", "label " + label});
    git(home, work, {"push", "-q", remote, "main:main"});
    return git(home, work, {"rev-parse", "HEAD"});
  };
  spit(git_test::stdfs::path(work) / "flyte/project.yaml",
       "apiVersion: flytecd/v1\nkind: Project\nid: remote-down\nname: remote-down\n");
  const std::string first = commit_and_push("first");

  spit(repos.tmp.path() / "www/users", "nobody:unused\n");
  git_test::LighttpdGit server(repos.tmp.str("served"), home, repos.tmp.str("www"),
                               repos.tmp.str("www/users"));
  const bool started = server.start();
  INFO("lighttpd log: " << server.log());
  REQUIRE(started);

  // The emulator on a fixed port, so that a new one can take over the same address.
  const int admin_port = git_test::free_port();
  emulator::Options eo;
  eo.listen = "127.0.0.1:" + std::to_string(admin_port);
  auto emu = emulator::Emulator::start(eo);
  REQUIRE(emu.ok());
  auto raw = flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel((*emu)->address(), grpc::InsecureChannelCredentials()));
  auto label = [&]() -> std::string {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    admin::ProjectDomainAttributesGetRequest req;
    req.set_project("remote-down");
    req.set_domain("development");
    req.set_resource_type(admin::EXECUTION_CLUSTER_LABEL);
    admin::ProjectDomainAttributesGetResponse resp;
    if (!raw->GetProjectDomainAttributes(&ctx, req, &resp).ok()) return "";
    return resp.attributes().matching_attributes().execution_cluster_label().value();
  };

  const int port = git_test::free_port();
  spit(repos.tmp.path() / "sync-token", "sync-T0KEN-remote-down\n");
  spit(repos.tmp.path() / "config.yaml",
       "stateDir: " + repos.tmp.str("state") + "\ninterval: 1h\n" +
           "git: {url: " + server.url("remote.git") + ", ref: main, path: flyte}\n" +
           "admin: {endpoint: " + (*emu)->address() +
           ", insecure: true, maxRetries: 1, perRetryTimeout: 3s}\n" + "http: {listen: 127.0.0.1:" +
           std::to_string(port) + ", syncTokenFile: " + repos.tmp.str("sync-token") + "}\n");
  DaemonProcess daemon(repos.tmp.str("config.yaml"), repos.tmp.str("daemon.log"));
  REQUIRE(daemon.started());
  // A bounded wait that fails the test with the daemon's and lighttpd's logs.
  auto require_eventually = [&](auto pred, double seconds, const char* what) {
    if (!eventually(pred, seconds))
      FAIL(what << "\ndaemon log:\n"
                << git_test::slurp(repos.tmp.path() / "daemon.log") << "\nlighttpd log:\n"
                << server.log());
  };

  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(1);
  http.set_read_timeout(10);
  auto status = [&] { return flytecd_test::get_json(http); };
  auto code_of = [&](const char* path) {
    auto r = http.Get(path);
    return r ? r->status : -1;
  };
  auto metrics = [&] {
    auto r = http.Get("/metrics");
    return r && r->status == 200 ? "\n" + r->body : std::string();
  };
  const std::string poll_errors = "flytecd_source_polls_total{result=\"error\"}";
  auto sync_now = [&] {
    auto r = http.Post("/api/v1/sync", {{"Authorization", "Bearer sync-T0KEN-remote-down"}}, "",
                       "text/plain");
    REQUIRE(r);
    CHECK(r->status == 202);
  };

  // Reconciled once over http.
  require_eventually([&] { return code_of("/readyz") == 200; }, 60, "first reconcile");
  CHECK(status()["revision"] == first);
  CHECK(label() == "first");
  CHECK(sample(metrics(), poll_errors) == 0);

  // ---- the remote goes away -------------------------------------------------------------
  server.stop();
  REQUIRE_FALSE(git_test::port_open(server.port()));
  const std::string second = commit_and_push("second");  // pushed while nobody can fetch it
  sync_now();
  require_eventually([&] { return sample(metrics(), poll_errors) >= 1; }, 30,
                     "a failed poll is counted");
  {
    auto st = status();
    INFO(st.dump(2));
    CHECK(st["revision"] == first);  // the previous revision stays in force
    CHECK(st["lastSync"]["outcome"] == "success");
  }
  CHECK(label() == "first");
  // The daemon reports the remote in its log, naming the revision that stays in force; it
  // stays alive and ready: the target is reachable and the last good revision is applied.
  CHECK(eventually(
      [&] {
        return git_test::slurp(repos.tmp.path() / "daemon.log").find(" stays in force)") !=
               std::string::npos;
      },
      10));
  CHECK(code_of("/healthz") == 200);
  CHECK(code_of("/readyz") == 200);
  // Another poll while it is still down counts another error.
  sync_now();
  CHECK(eventually([&] { return sample(metrics(), poll_errors) >= 2; }, 30));
  CHECK(status()["revision"] == first);

  // ---- the remote comes back, with a commit it did not have before ----------------------
  REQUIRE(server.start());
  const std::string third = commit_and_push("third");
  sync_now();
  require_eventually([&] { return status()["revision"] == third; }, 60,
                     "the new commit is applied once the remote is back");
  CHECK(eventually([&] { return label() == "third"; }, 30));
  CHECK(eventually([&] { return !status().contains("lastError"); }, 30));
  CHECK(code_of("/readyz") == 200);
  (void)second;

  // ---- the target goes away --------------------------------------------------------------
  (*emu)->shutdown();
  emu->reset();
  sync_now();
  std::string not_ready;
  require_eventually(
      [&] {
        auto r = http.Get("/readyz");
        if (!r || r->status != 503) return false;
        not_ready = r->body;
        return true;
      },
      90, "unready while the target is down");
  CHECK_THAT(not_ready, Catch::Contains("target unreachable"));
  CHECK(code_of("/healthz") == 200);
  {
    auto st = status();
    INFO(st.dump(2));
    CHECK(st["revision"] == third);
    CHECK(st["lastSync"]["outcome"] == "failed");
  }
  CHECK(eventually([&] { return status().contains("lastError"); }, 10));
  CHECK(metrics().find("\nflytecd_target_up 0") != std::string::npos);

  // ---- a new (empty) emulator on the same address: ready again, everything re-applied -----
  auto back = emulator::Emulator::start(eo);
  REQUIRE(back.ok());
  raw = flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel((*back)->address(), grpc::InsecureChannelCredentials()));
  require_eventually(
      [&] {
        if (code_of("/readyz") == 200) return true;
        sync_now();  // each nudge is one more reconcile; the daemon coalesces them
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        return false;
      },
      120, "ready again once the target is back");
  CHECK(eventually([&] { return label() == "third"; }, 30));
  CHECK(metrics().find("\nflytecd_target_up 1") != std::string::npos);

  CHECK(daemon.stop() == 0);
}

// A source error stays in lastError (and sourceError) while the remote is down, even though the
// reconcile of the revision in force succeeds against the target (it used to be erased).
TEST_CASE(
    "daemon: while the Git remote is down, /api/v1/status keeps the source error in lastError",
    "[daemon][integration]") {
  FLYTECD_REQUIRE_LIGHTTPD();
  git_test::WorkAndRemote repos("served/remote.git");
  const std::string &home = repos.home, &work = repos.work, &remote = repos.remote;
  spit(git_test::stdfs::path(work) / "flyte/project.yaml",
       "apiVersion: flytecd/v1\nkind: Project\nid: remote-down\nname: remote-down\n");
  spit(git_test::stdfs::path(work) / "flyte/overrides.yaml", overrides_doc("first"));
  git(home, work, {"add", "-A"});
  git(home, work, {"commit", "-q", "-m", "first"});
  git(home, work, {"push", "-q", remote, "main:main"});
  spit(repos.tmp.path() / "www/users", "nobody:unused\n");
  git_test::LighttpdGit server(repos.tmp.str("served"), home, repos.tmp.str("www"),
                               repos.tmp.str("www/users"));
  REQUIRE(server.start());
  auto emu = emulator::Emulator::start({});
  REQUIRE(emu.ok());
  const int port = git_test::free_port();
  spit(repos.tmp.path() / "sync-token", "sync-T0KEN-remote-down\n");
  spit(repos.tmp.path() / "config.yaml",
       "stateDir: " + repos.tmp.str("state") + "\ninterval: 1h\n" +
           "git: {url: " + server.url("remote.git") + ", ref: main, path: flyte}\n" +
           "admin: {endpoint: " + (*emu)->address() + ", insecure: true}\n" +
           "http: {listen: 127.0.0.1:" + std::to_string(port) +
           ", syncTokenFile: " + repos.tmp.str("sync-token") + "}\n");
  DaemonProcess daemon(repos.tmp.str("config.yaml"), repos.tmp.str("daemon.log"));
  REQUIRE(daemon.started());
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(1);
  auto status = [&] { return flytecd_test::get_json(http); };
  REQUIRE(eventually(
      [&] {
        auto r = http.Get("/readyz");
        return r && r->status == 200;
      },
      60));
  server.stop();
  auto polls = [&] {
    auto r = http.Get("/metrics");
    return r ? sample("\n" + r->body, "flytecd_source_polls_total{result=\"error\"}") : 0.0;
  };
  REQUIRE(http.Post("/api/v1/sync", {{"Authorization", "Bearer sync-T0KEN-remote-down"}}, "",
                    "text/plain"));
  REQUIRE(eventually([&] { return polls() >= 1; }, 30));
  // After the poll, the reconcile of the revision in force has finished too.
  REQUIRE(eventually(
      [&] {
        return git_test::slurp(repos.tmp.path() / "daemon.log").find("reconcile (api sync)") !=
               std::string::npos;
      },
      30));
  auto st = status();
  INFO(st.dump(2));
  CHECK(st.value("lastError", std::string()).find("remote.git") != std::string::npos);
  CHECK(st.value("sourceError", std::string()).find("remote.git") != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
