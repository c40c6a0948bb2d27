// The shared libcurl client against real cpp-httplib servers on free loopback ports: retries
// with Retry-After, credentials and redirects, size limits, deadlines, streamed bodies.
#include <httplib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "daemon/common/http/client.hpp"
#include "tests/support/http_serve.hpp"
#include "tests/unit/daemon/common/http/silent_server.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace http = flytecd::http;
using flytecd::ErrorCode;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

class Server {
 public:
  explicit Server(const std::string& host = "127.0.0.1") : m_host(host) {}
  ~Server() {
    m_server.stop();
    if (m_thread.joinable()) m_thread.join();
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  httplib::Server& routes() { return m_server; }
  void start() {
    m_port = flytecd_test::serve_on_free_port(m_server, m_thread, m_host);
    REQUIRE(m_port > 0);
  }
  std::string url(const std::string& path) const {
    return "http://" + m_host + ":" + std::to_string(m_port) + path;
  }

 private:
  std::string m_host;
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
};

}  // namespace

TEST_CASE("http client: a 429 is retried after its Retry-After, then the answer is returned",
          "[http_client]") {
  Server server;
  std::atomic<int> hits{0};
  server.routes().Get("/x", [&](const httplib::Request&, httplib::Response& res) {
    if (hits++ == 0) {
      res.status = 429;
      res.set_header("Retry-After", "1");
      return;
    }
    res.set_content("done", "text/plain");
  });
  server.start();
  http::ClientOptions o;
  o.max_attempts = 3;
  o.backoff_base = 1ms;  // a retry that waited only the backoff would come back at once
  http::Client client(o);
  http::ClientRequest req;
  req.url = server.url("/x");
  const auto t0 = Clock::now();
  auto r = client.execute(req);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == "done");
  CHECK(r->attempts == 2);
  CHECK(Clock::now() - t0 >= 900ms);

  SECTION("without retries the 429 itself is the answer") {
    hits = 0;
    http::Client once(http::ClientOptions{});
    auto first = once.execute(req);
    REQUIRE(first);
    CHECK(first->status == 429);
    CHECK(first->header("retry-after") == "1");
    CHECK(hits == 1);
  }
}

TEST_CASE("http client: 5xx is retried up to max_attempts, the last answer is returned",
          "[http_client]") {
  Server server;
  std::atomic<int> hits{0};
  server.routes().Get("/down", [&](const httplib::Request&, httplib::Response& res) {
    ++hits;
    res.status = 503;
  });
  server.start();
  http::ClientOptions o;
  o.max_attempts = 3;
  o.backoff_base = 1ms;
  http::Client client(o);
  http::ClientRequest req;
  req.url = server.url("/down");
  auto r = client.execute(req);
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(r->attempts == 3);
  CHECK(hits == 3);
}

TEST_CASE("http client: a redirect to another host drops Authorization, the same origin keeps it",
          "[http_client]") {
  Server other("127.0.0.2");  // another host (all of 127/8 is loopback on Linux)
  std::mutex mu;
  std::string seen_auth = "unset";
  other.routes().Get("/blob", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    seen_auth = req.get_header_value("Authorization");
    res.set_content("blob", "application/octet-stream");
  });
  other.start();
  Server origin;
  std::string origin_auth;
  origin.routes().Get("/start", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 307;
    res.set_header("Location", "/same");
  });
  origin.routes().Get("/same", [&](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lock(mu);
      origin_auth = req.get_header_value("Authorization");
    }
    res.status = 302;
    res.set_header("Location", other.url("/blob"));
  });
  origin.start();

  http::ClientOptions o;
  o.max_redirects = 5;
  http::Client client(o);
  http::ClientRequest req;
  req.url = origin.url("/start");
  req.headers = {"Authorization: Bearer s3cr3t-token", "Accept: */*"};
  auto r = client.execute(req);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == "blob");
  CHECK(r->final_url == other.url("/blob"));
  CHECK(r->attempts == 3);
  std::lock_guard<std::mutex> lock(mu);
  CHECK(origin_auth == "Bearer s3cr3t-token");
  CHECK(seen_auth.empty());

  SECTION("with redirects off the 3xx is the answer") {
    http::Client plain(http::ClientOptions{});
    auto first = plain.execute(req);
    REQUIRE(first);
    CHECK(first->status == 307);
  }
}

TEST_CASE("http client: a 2xx body over max_body is an error, error bodies are cut, not failed",
          "[http_client]") {
  Server server;
  const std::string big(3u << 20, 'b');
  server.routes().Get("/big", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(big, "application/octet-stream");
  });
  server.routes().Get("/bigerror", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content(big, "text/plain");
  });
  server.start();
  http::Client client(http::ClientOptions{});
  http::ClientRequest req;
  req.url = server.url("/big");
  req.max_body = 1u << 20;
  auto r = client.execute(req);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::invalid_input);
  CHECK_THAT(r.error().message, Catch::Contains("exceeds 1048576 bytes"));

  req.max_body = 4u << 20;
  auto fits = client.execute(req);
  REQUIRE(fits);
  CHECK(fits->body.size() == big.size());

  req.url = server.url("/bigerror");
  auto error = client.execute(req);
  REQUIRE(error);
  CHECK(error->status == 500);
  CHECK(error->body_overflow);
  CHECK(error->body.size() <= (64u << 10));
}

TEST_CASE("http client: a slow server hits the request deadline as a timeout, URL not named",
          "[http_client]") {
  Server server;
  server.routes().Get("/slow", [&](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(1500ms);
    res.set_content("late", "text/plain");
  });
  server.start();
  http::Client client(http::ClientOptions{});
  http::ClientRequest req;
  req.url = server.url("/slow?X-Amz-Signature=secret");
  req.timeout = 300ms;
  const auto t0 = Clock::now();
  auto r = client.execute(req);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::timeout);
  CHECK(Clock::now() - t0 < 1200ms);
  CHECK_THAT(r.error().message, !Catch::Contains("secret") && !Catch::Contains("/slow"));
}

TEST_CASE("http client: a body streamed from a reader arrives whole, a reader error is final",
          "[http_client]") {
  Server server;
  std::mutex mu;
  std::string got;
  std::atomic<int> puts{0};
  server.routes().Put("/up", [&](const httplib::Request& req, httplib::Response& res) {
    ++puts;
    std::lock_guard<std::mutex> lock(mu);
    got = req.body;
    res.status = 201;
  });
  server.start();
  std::string data(200000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 13);

  http::ClientOptions o;
  o.max_attempts = 3;
  o.backoff_base = 1ms;
  http::Client client(o);
  http::ClientRequest req;
  req.method = "PUT";
  req.url = server.url("/up");
  size_t pos = 0;
  int restarts = 0;
  req.on_restart = [&] {
    pos = 0;
    ++restarts;
  };
  req.read_body = [&](char* buf, size_t n) -> flytecd::Result<size_t> {
    const size_t take = std::min({n, size_t{777}, data.size() - pos});
    std::memcpy(buf, data.data() + pos, take);
    pos += take;
    return take;
  };
  req.body_size = data.size();
  auto r = client.execute(req);
  REQUIRE(r);
  CHECK(r->status == 201);
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(got == data);
  }

  restarts = 0;
  req.read_body = [&](char*, size_t) -> flytecd::Result<size_t> {
    return flytecd::make_error(ErrorCode::unavailable, "source went away");
  };
  auto failed = client.execute(req);
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message == "source went away");
  CHECK(restarts == 1);  // not retried, although unavailable is a retryable code
  CHECK(puts == 1);
}

TEST_CASE("http client: a cancel aborts the request in flight", "[http_client]") {
  Server server;
  server.routes().Get("/hang", [&](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(3000ms);
    res.set_content("late", "text/plain");
  });
  server.start();
  http::Client client(http::ClientOptions{});
  std::atomic<bool> cancel{false};
  http::ClientRequest req;
  req.url = server.url("/hang");
  req.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    cancel = true;
  });
  const auto t0 = Clock::now();
  auto r = client.execute(req);
  stopper.join();
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "cancelled");
  CHECK(Clock::now() - t0 < 2500ms);  // curl looks at the flag at least once a second
}

TEST_CASE("http client: url_encode and base64", "[http_client]") {
  CHECK(http::url_encode("a b&c=d/é~_.-") == "a%20b%26c%3Dd%2F%C3%A9~_.-");
  CHECK(http::base64("") == "");
  CHECK(http::base64("f") == "Zg==");
  CHECK(http::base64("foobar") == "Zm9vYmFy");
}

// Issue 27 §7: a 404 with an endless chunked body (a few MB/s, so no low-speed limit fires) was
// read until the total timeout (1.8 GB in 300 s) although only 64 KiB of it were kept.
TEST_CASE("http client: an endless error body is cut at 64 KiB and its transfer stops there",
          "[http_client]") {
  // Declared before the server: its threads may still call the provider while it stops.
  std::atomic<uint64_t> written{0};
  Server server;
  server.routes().Get("/endless", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_chunked_content_provider("application/json", [&](size_t, httplib::DataSink& sink) {
      const std::string chunk(64u << 10, 'x');
      if (!sink.write(chunk.data(), chunk.size())) return false;
      written += chunk.size();
      std::this_thread::sleep_for(10ms);  // ~6 MB/s: far above any low-speed limit
      return true;
    });
  });
  server.start();
  http::Client client(http::ClientOptions{});
  http::ClientRequest req;
  req.url = server.url("/endless");
  req.timeout = 20s;
  const auto t0 = Clock::now();
  auto r = client.execute(req);
  const auto took = Clock::now() - t0;
  REQUIRE(r);
  CHECK(r->status == 404);
  CHECK(r->body_overflow);
  CHECK(r->body.size() == (64u << 10));
  CHECK(took < 2s);
  // What the server managed to write before the client hung up: the kept head, curl's buffer
  // and a chunk or two in flight, not megabytes.
  CHECK(written.load() < (1u << 20));
}

// Issue 27 §7: a header value with CR/LF (a token from a token endpoint) injected headers.
TEST_CASE("http client: a header value with CR, LF or NUL is refused before anything is sent",
          "[http_client]") {
  Server server;
  std::atomic<int> hits{0};
  server.routes().Get("/x", [&](const httplib::Request&, httplib::Response& res) {
    ++hits;
    res.set_content("ok", "text/plain");
  });
  server.start();
  http::Client client(http::ClientOptions{});
  for (const std::string& bad : {std::string("Authorization: Bearer SECRET\r\nX-Injected: yes"),
                                 std::string("Authorization: Bearer SECRET\nX-Injected: yes"),
                                 std::string("X-Custom: SECRET\rtail"),
                                 std::string("Authorization: Bearer SECRET\0x", 30)}) {
    http::ClientRequest req;
    req.url = server.url("/x");
    req.headers = {"Accept: */*", bad};
    auto r = client.execute(req);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::invalid_input);
    CHECK_THAT(r.error().message, Catch::Contains("CR, LF or NUL"));
    CHECK_THAT(r.error().message, !Catch::Contains("SECRET") && !Catch::Contains("Injected"));
  }
  CHECK(hits == 0);
  http::ClientRequest fine;
  fine.url = server.url("/x");
  fine.headers = {"Authorization: Bearer abc.def"};
  REQUIRE(client.execute(fine));
  CHECK(hits == 1);
}

// Issue 27 §3: a server that accepts the connection and sends nothing held a request for the
// whole total timeout (300 s) with nothing to stop it early.
TEST_CASE("http client: a server that accepts and never answers stalls out after stall_timeout",
          "[http_client]") {
  test_support::SilentServer silent;
  http::ClientOptions o;
  o.stall_timeout = 1s;
  o.total_timeout = 60s;
  http::Client client(o);
  http::ClientRequest req;
  req.url = silent.url("/v2/flyte/core/manifests/v1?sig=secret");
  const auto t0 = Clock::now();
  auto r = client.execute(req);
  const auto took = Clock::now() - t0;
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::timeout);
  CHECK_THAT(r.error().message, Catch::Contains("stalled: no data for 1 s"));
  CHECK_THAT(r.error().message, !Catch::Contains("secret") && !Catch::Contains("/v2"));
  CHECK(took >= 900ms);
  CHECK(took < 4s);
  CHECK(silent.accepted() == 1);
}

TEST_CASE("http client: one deadline bounds several requests, a passed one sends nothing",
          "[http_client]") {
  test_support::SilentServer silent;
  http::ClientOptions o;
  o.max_attempts = 5;
  o.backoff_base = 1ms;
  http::Client client(o);
  http::ClientRequest req;
  req.url = silent.url("/x");
  req.deadline = Clock::now() + 700ms;
  const auto t0 = Clock::now();
  auto first = client.execute(req);
  REQUIRE_FALSE(first);
  CHECK(first.error().code == ErrorCode::timeout);
  CHECK(Clock::now() - t0 < 2s);
  const int accepted = silent.accepted();
  auto second = client.execute(req);  // the same deadline, passed now
  REQUIRE_FALSE(second);
  CHECK(second.error().code == ErrorCode::timeout);
  CHECK_THAT(second.error().message, Catch::Contains("deadline passed before"));
  CHECK(silent.accepted() == accepted);
}

TEST_CASE("http client: a cancel stops a request to a server that never answers", "[http_client]") {
  test_support::SilentServer silent;
  http::Client client(http::ClientOptions{});
  std::atomic<bool> cancel{false};
  http::ClientRequest req;
  req.url = silent.url("/x");
  req.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    cancel = true;
  });
  const auto t0 = Clock::now();
  auto r = client.execute(req);
  stopper.join();
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "cancelled");
  CHECK(Clock::now() - t0 < 2500ms);
  auto again = client.execute(req);  // already cancelled: nothing is sent
  REQUIRE_FALSE(again);
  CHECK(again.error().message == "cancelled");
}

}  // namespace FLYTECD_UNITY_ID
