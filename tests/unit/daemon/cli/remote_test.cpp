#include "daemon/cli/remote.hpp"

#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/cli/commands/status.hpp"
#include "daemon/common/http/listener.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {

// A loopback port nothing listens on (bound, then closed).
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A server answering every request with `status` and `body`.
std::unique_ptr<http::Listener> answering(int status, std::string body) {
  http::RequestHandler h;
  h.on_request = [status, body](http::Request&) { return http::text_response(status, body); };
  auto l = http::Listener::start(http::ListenerOptions{}, std::move(h));
  REQUIRE(l.ok());
  return std::move(l).value();
}

}  // namespace

TEST_CASE("remote: the server URL follows http.listen", "[remote]") {
  CHECK(cli::server_from_listen("127.0.0.1:8080") == "http://127.0.0.1:8080");
  CHECK(cli::server_from_listen("0.0.0.0:9000") == "http://127.0.0.1:9000");
  CHECK(cli::server_from_listen(":9000") == "http://127.0.0.1:9000");
  CHECK(cli::server_from_listen("[::]:9000") == "http://[::1]:9000");
  CHECK(cli::server_from_listen("flytecd.internal:80") == "http://flytecd.internal:80");
  cli::RemoteFlags f;
  f.server = "127.0.0.1:1234/";
  auto r = cli::resolve_remote(f);
  REQUIRE(r.ok());
  CHECK(r->server == "http://127.0.0.1:1234");
  f.token_file = "/nonexistent/token";
  auto bad = cli::resolve_remote(f);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("/nonexistent/token"));
}

TEST_CASE("remote: connection refused names the URL and asks whether flytecd run listens there",
          "[remote]") {
  cli::RemoteOptions o;
  o.server = "http://127.0.0.1:" + std::to_string(closed_port());
  o.token = "s3cr3t-token";
  auto r = cli::daemon_request(o, "GET", "/api/v1/status");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ErrorCode::unavailable);
  CHECK_THAT(r.error().message, Catch::Contains(o.server));
  CHECK_THAT(r.error().message, Catch::Contains("is `flytecd run` listening there? (http.listen"));
  CHECK_THAT(r.error().message, !Catch::Contains("s3cr3t"));
}

TEST_CASE("remote: 401 and 403 say the token is missing or wrong, never print it", "[remote]") {
  auto server = answering(401, "unauthorized\n");
  cli::RemoteOptions o;
  o.server = "http://127.0.0.1:" + std::to_string(server->port());
  auto missing = cli::daemon_request(o, "POST", "/api/v1/suspend", {{"reason", "x"}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::unauthenticated);
  CHECK_THAT(missing.error().message, Catch::Contains("token is missing"));
  CHECK_THAT(missing.error().message, Catch::Contains("/api/v1/suspend"));
  o.token = "s3cr3t-token";
  auto wrong = cli::daemon_request(o, "POST", "/api/v1/sync");
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.error().message, Catch::Contains("token is wrong"));
  CHECK_THAT(wrong.error().message, !Catch::Contains("s3cr3t"));
  server->stop();

  auto forbidden = answering(403, "forbidden\n");
  o.server = "http://127.0.0.1:" + std::to_string(forbidden->port());
  auto f = cli::daemon_request(o, "POST", "/api/v1/resume");
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().code == ErrorCode::permission_denied);
  CHECK_THAT(f.error().message, Catch::Contains("403"));
  CHECK_THAT(f.error().message, !Catch::Contains("s3cr3t"));
}

TEST_CASE("remote: JSON bodies are parsed, text bodies become a message, 5xx keeps its line",
          "[remote]") {
  auto json = answering(200, R"({"suspended":null})");
  cli::RemoteOptions o;
  o.server = "http://127.0.0.1:" + std::to_string(json->port());
  auto j = cli::daemon_request(o, "POST", "/api/v1/resume");
  REQUIRE(j.ok());
  CHECK(j->contains("suspended"));
  auto text = answering(202, "sync triggered\n");
  o.server = "http://127.0.0.1:" + std::to_string(text->port());
  auto t = cli::daemon_request(o, "POST", "/api/v1/sync");
  REQUIRE(t.ok());
  CHECK((*t)["message"] == "sync triggered");
  auto failing = answering(500, "suspension file /x: cannot write\nmore\n");
  o.server = "http://127.0.0.1:" + std::to_string(failing->port());
  auto e = cli::daemon_request(o, "POST", "/api/v1/suspend", {{"reason", "r"}});
  REQUIRE_FALSE(e.ok());
  CHECK_THAT(e.error().message, Catch::Contains("HTTP 500: suspension file /x: cannot write"));
}

TEST_CASE("status: summary and exit code from the status document", "[remote]") {
  auto doc = nlohmann::json::parse(R"({
    "revision": "abc123", "subject": "raise quota",
    "lastSync": {"outcome": "success", "time": "t", "reason": "interval", "mode": "plan",
                 "summary": "overrides: +0 ~1 -0", "error": ""},
    "drift": [{"key": "override/p/d/x", "detail": "changed outside Git",
               "changes": [{"path": "a.b", "live": "64", "git": "8"},
                           {"path": "a.c", "live": null, "git": 4}]}],
    "suspended": {"since": "2026-12-01T10:00:00Z", "reason": "maintenance", "by": "alice"}})");
  const auto text = cli::status_summary(doc);
  CHECK_THAT(text, Catch::Contains("SUSPENDED since 2026-12-01T10:00:00Z by alice: maintenance"));
  CHECK_THAT(text, Catch::Contains("abc123 (raise quota)"));
  CHECK_THAT(text, Catch::Contains("planned only"));
  CHECK_THAT(text, Catch::Contains("1 object(s)"));
  // One labelled notation, as drift prints everywhere (issue 21): not `(none) -> 4`.
  CHECK_THAT(text, Catch::Contains("~ a.b: live \"64\", Git \"8\""));
  CHECK_THAT(text, Catch::Contains("+ a.c: live (unset), Git 4"));
  CHECK(cli::status_exit_code(doc) == 0);
  doc["lastSync"]["outcome"] = "failed";
  CHECK(cli::status_exit_code(doc) == 1);
  CHECK(cli::status_exit_code(nlohmann::json::object()) == 1);  // no sync finished yet
  doc["suspended"] = nullptr;
  CHECK_THAT(cli::status_summary(doc), Catch::Contains("suspended:  no"));
}

}  // namespace FLYTECD_UNITY_ID
