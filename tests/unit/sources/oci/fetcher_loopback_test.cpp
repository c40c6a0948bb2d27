// The package fetcher against hostile stand-in registries on loopback (cpp-httplib and a raw
// listener; no docker-registry needed): a registry that never answers, an endless error body, a
// token endpoint whose token would inject a header, and the pass's cancel flag.
#include <httplib.h>

#include <unistd.h>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "sources/oci/fetcher.hpp"
#include "tests/support/http_serve.hpp"
#include "tests/unit/daemon/common/http/silent_server.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace oci = flytecd::sources::oci;
using flytecd::ErrorCode;
using flytecd::sources::PackageRef;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

class StandIn {
 public:
  StandIn() { m_port = m_server.bind_to_any_port("127.0.0.1"); }
  ~StandIn() {
    m_server.stop();
    if (m_thread.joinable()) m_thread.join();
  }
  StandIn(const StandIn&) = delete;
  StandIn& operator=(const StandIn&) = delete;
  httplib::Server& routes() { return m_server; }
  void start() { flytecd_test::start_serving(m_server, m_thread); }
  std::string host() const { return "127.0.0.1:" + std::to_string(m_port); }

 private:
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
};

struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("flytecd-fetch-" + std::to_string(::getpid()) + "-" +
                                std::to_string(Clock::now().time_since_epoch().count()));
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

oci::FetchOptions options(const TempDir& dir, const std::string& plain_host) {
  oci::FetchOptions o;
  o.cache_dir = dir.path / "cache";
  o.docker_config = (dir.path / "no-such-config.json").string();
  o.plain_http_registries = {plain_host};
  return o;
}

PackageRef core_ref(const std::string& host) {
  PackageRef r;
  r.kind = PackageRef::Kind::oci;
  r.registry = host;
  r.repository = "flyte/core";
  r.tag = "v1";
  return r;
}

}  // namespace

// Issue 27 §3: a registry that accepts and never answers held its package (and the pass) for
// 300 s per request, retried.
TEST_CASE("oci fetcher: a registry that never answers fails the package at its deadline, named",
          "[oci]") {
  TempDir dir;
  test_support::SilentServer silent;
  auto o = options(dir, silent.host());
  o.package_timeout = 1500ms;
  oci::PackageFetcher fetcher(o);
  const auto t0 = Clock::now();
  auto r = fetcher.fetch(core_ref(silent.host()));
  const auto took = Clock::now() - t0;
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::timeout);
  CHECK_THAT(r.error().message, Catch::Contains(silent.host() + "/flyte/core:v1"));
  CHECK_THAT(r.error().message, Catch::Contains("packages.fetchTimeout"));
  CHECK(took >= 1400ms);
  CHECK(took < 3s);
}

TEST_CASE("oci fetcher: a stalled transfer is retried within the deadline, then fails", "[oci]") {
  TempDir dir;
  test_support::SilentServer silent;
  auto o = options(dir, silent.host());
  o.stall_timeout = 1s;
  o.package_timeout = 60s;
  o.max_attempts = 2;
  oci::PackageFetcher fetcher(o);
  const auto t0 = Clock::now();
  auto r = fetcher.fetch(core_ref(silent.host()));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::timeout);
  CHECK_THAT(r.error().message, Catch::Contains("stalled"));
  CHECK(silent.accepted() == 2);
  CHECK(Clock::now() - t0 < 6s);
}

TEST_CASE("oci fetcher: the caller's cancel flag aborts a fetch from a registry that hangs",
          "[oci]") {
  TempDir dir;
  test_support::SilentServer silent;
  auto o = options(dir, silent.host());
  o.package_timeout = 60s;
  oci::PackageFetcher fetcher(o);
  std::atomic<bool> cancel{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    cancel = true;
  });
  const auto t0 = Clock::now();
  auto r = fetcher.fetch(core_ref(silent.host()), &cancel);
  stopper.join();
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("cancelled"));
  CHECK(Clock::now() - t0 < 2500ms);
}

// Issue 27 §7: a 404 with an endless chunked body was read until the total timeout.
TEST_CASE("oci fetcher: a 404 with an endless body is not_found at once, the body cut", "[oci]") {
  TempDir dir;
  StandIn reg;
  std::atomic<uint64_t> written{0};
  reg.routes().Get(".*", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_chunked_content_provider("application/json", [&](size_t, httplib::DataSink& sink) {
      const std::string chunk(64u << 10, '[');
      if (!sink.write(chunk.data(), chunk.size())) return false;
      written += chunk.size();
      std::this_thread::sleep_for(10ms);
      return true;
    });
  });
  reg.start();
  auto o = options(dir, reg.host());
  o.total_timeout = 20s;
  oci::PackageFetcher fetcher(o);
  const auto t0 = Clock::now();
  auto r = fetcher.fetch(core_ref(reg.host()));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::not_found);
  CHECK_THAT(r.error().message, Catch::Contains("HTTP 404"));
  CHECK(r.error().message.size() < 1000);
  CHECK(Clock::now() - t0 < 2s);
  CHECK(written.load() < (1u << 20));
}

// Issue 27 §7: {"token":"SECRET\r\nX-Injected: yes"} from the token endpoint reached the registry
// as an X-Injected header on the manifest and blob requests.
TEST_CASE("oci fetcher: a token that would inject a header never reaches the registry", "[oci]") {
  TempDir dir;
  StandIn tokens;
  tokens.routes().Get("/token", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"token":"SECRET\r\nX-Injected: yes","expires_in":300})",
                    "application/json");
  });
  tokens.start();
  StandIn reg;
  std::mutex mu;
  std::vector<std::string> seen;  // every header line the registry received
  reg.routes().Get(".*", [&](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lock(mu);
      for (const auto& [name, value] : req.headers) seen.push_back(name + ": " + value);
    }
    res.status = 401;
    res.set_header("WWW-Authenticate", "Bearer realm=\"http://" + tokens.host() +
                                           "/token\",service=\"svc\",scope=\"repository:flyte/"
                                           "core:pull\"");
    res.set_content(R"({"errors":[{"code":"UNAUTHORIZED"}]})", "application/json");
  });
  reg.start();
  oci::PackageFetcher fetcher(options(dir, reg.host()));
  auto r = fetcher.fetch(core_ref(reg.host()));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::invalid_input);
  CHECK_THAT(r.error().message, Catch::Contains("b64token"));
  CHECK_THAT(r.error().message, !Catch::Contains("SECRET") && !Catch::Contains("Injected"));
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE_FALSE(seen.empty());  // the challenge was asked for
  for (const auto& h : seen) {
    INFO(h);
    CHECK_THAT(
        h, !Catch::Contains("Injected", Catch::CaseSensitive::No) && !Catch::Contains("SECRET"));
  }
}

}  // namespace FLYTECD_UNITY_ID
