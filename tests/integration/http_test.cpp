// The daemon's HTTP surface, started for real on 127.0.0.1 with a free port and called with
// libcurl (and raw sockets for malformed or slow requests).

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/log.hpp"
#include "daemon/common/text.hpp"
#include "daemon/http/server.hpp"
#include "daemon/metrics/flytecd_metrics.hpp"
#include "tests/support/hmac.hpp"
#include "tests/support/raw_tcp.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace std::chrono_literals;

namespace {

using flytecd_test::hmac_hex;

const std::string k_github_secret = "gh-secret-value-123";
const std::string k_gitlab_token = "gl-token-value-456";
const std::string k_generic_secret = "generic-secret-789";
const std::string k_sync_token = "sync-token-abc";

struct Reply {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  curl_off_t uploaded = 0;
  CURLcode rc = CURLE_OK;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  std::string line(data, size * n);
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    value.erase(value.find_last_not_of("\r\n ") + 1);
    (*static_cast<std::map<std::string, std::string>*>(user))[name] = value;
  }
  return size * n;
}

Reply call(const std::string& method, const std::string& url, const std::string& body = "",
           const std::vector<std::string>& headers = {}) {
  Reply r;
  CURL* c = curl_easy_init();
  REQUIRE(c != nullptr);
  curl_slist* hs = nullptr;
  for (const auto& h : headers) hs = curl_slist_append(hs, h.c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "POST" || !body.empty()) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.headers);
  r.rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &r.uploaded);
  curl_slist_free_all(hs);
  curl_easy_cleanup(c);
  return r;
}

// A server with every receiver enabled and callbacks that record what they were asked.
struct Fixture {
  metrics::Registry registry;
  metrics::FlytecdMetrics metrics{registry};
  std::mutex mu;
  std::vector<std::string> reasons;
  std::vector<std::string> suspensions;  // "suspend|<reason>|<by>" or "resume"
  std::atomic<bool> ready{false};
  std::unique_ptr<http::HttpServer> server;
  std::string base;

  explicit Fixture(http::HttpOptions options = defaults()) {
    http::HttpHandlers h;
    h.trigger_sync = [this](const std::string& reason) {
      std::lock_guard<std::mutex> lock(mu);
      reasons.push_back(reason);
    };
    h.status = [] {
      return std::make_shared<const std::string>(R"({"drift":0,"revision":"abc123"})");
    };
    h.ready = [this] { return ready.load(); };
    h.not_ready_reason = [] { return std::string("no successful sync yet"); };
    h.metrics_text = [this] { return registry.render(); };
    h.set_suspended = [this](bool on, const std::string& reason,
                             const std::string& by) -> Result<std::string> {
      std::lock_guard<std::mutex> lock(mu);
      if (reason == "fail") return make_error(ErrorCode::unavailable, "cannot persist");
      suspensions.push_back(on ? "suspend|" + reason + "|" + by : "resume");
      return std::string(on ? R"({"suspended":{"reason":"r"}})" : R"({"suspended":null})");
    };
    auto s = http::HttpServer::start(std::move(options), std::move(h), &metrics);
    REQUIRE(s.ok());
    server = std::move(s).value();
    REQUIRE(server->port() > 0);
    base = "http://127.0.0.1:" + std::to_string(server->port());
  }

  static http::HttpOptions defaults() {
    http::HttpOptions o;
    o.listen = "127.0.0.1:0";
    o.github_secret = k_github_secret;
    o.gitlab_token = k_gitlab_token;
    o.generic_secret = k_generic_secret;
    o.sync_token = k_sync_token;
    return o;
  }

  std::vector<std::string> triggered() {
    std::lock_guard<std::mutex> lock(mu);
    return reasons;
  }
  double webhooks(const std::string& provider, const std::string& result) {
    return metrics.webhook_requests_total.with({provider, result}).value();
  }
};

std::string github_push_body() {
  return R"({"ref":"refs/heads/main","after":"0123456789abcdef0123456789abcdef01234567"})";
}

using flytecd_test::raw_exchange;

}  // namespace

TEST_CASE("http: probes, metrics and status answer on a free loopback port", "[http]") {
  Fixture f;
  auto health = call("GET", f.base + "/healthz");
  CHECK(health.status == 200);
  CHECK(health.body == "ok");

  auto not_ready = call("GET", f.base + "/readyz");
  CHECK(not_ready.status == 503);
  CHECK(not_ready.body == "not ready: no successful sync yet");
  f.ready = true;
  auto ready = call("GET", f.base + "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body == "ready");

  f.metrics.set_revision("abc123");
  auto metrics = call("GET", f.base + "/metrics?ignored=1");
  CHECK(metrics.status == 200);
  CHECK(metrics.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(metrics.body.starts_with(f.registry.render()));
  CHECK(metrics.body.find("\nflytecd_http_connections_open ") != std::string::npos);
  CHECK(metrics.body.find("\nflytecd_http_connections_dropped_total{reason=\"deadline\"} 0\n") !=
        std::string::npos);
  CHECK(metrics.body.find("flytecd_revision_info{revision=\"abc123\"} 1\n") != std::string::npos);

  auto status = call("GET", f.base + "/api/v1/status");
  CHECK(status.status == 200);
  CHECK(status.headers["content-type"] == "application/json");
  CHECK(nlohmann::json::parse(status.body) == nlohmann::json{{"revision", "abc123"}, {"drift", 0}});
  CHECK(f.triggered().empty());
}

TEST_CASE("http: a GitHub push with a valid signature triggers one sync (202)", "[http]") {
  Fixture f;
  const std::string body = github_push_body();
  auto r = call("POST", f.base + "/api/v1/webhooks/github", body,
                {"X-Hub-Signature-256: sha256=" + hmac_hex(k_github_secret, body),
                 "X-GitHub-Event: push", "X-GitHub-Delivery: 72d3162e-cc78-11e3-81ab-4c9367dc0958",
                 "Content-Type: application/json"});
  CHECK(r.status == 202);
  CHECK(f.triggered() == std::vector<std::string>{"webhook github"});
  CHECK(f.webhooks("github", "accepted") == 1);
}

// Issue 10.8: a replayed delivery (same X-GitHub-Delivery, valid signature) synced again.
TEST_CASE("http: a replayed GitHub delivery triggers nothing the second time", "[http]") {
  Fixture f;
  const std::string body = github_push_body();
  const std::vector<std::string> headers = {
      "X-Hub-Signature-256: sha256=" + hmac_hex(k_github_secret, body), "X-GitHub-Event: push",
      "X-GitHub-Delivery: 0b1c2d3e-0000-11ef-8000-000000000001"};
  CHECK(call("POST", f.base + "/api/v1/webhooks/github", body, headers).status == 202);
  auto replay = call("POST", f.base + "/api/v1/webhooks/github", body, headers);
  CHECK(replay.status == 200);
  CHECK(replay.body == "delivery already received; ignored\n");
  CHECK(f.triggered() == std::vector<std::string>{"webhook github"});
  CHECK(f.webhooks("github", "replayed") == 1);
  // A new delivery id is a new event.
  auto next = headers;
  next.back() = "X-GitHub-Delivery: 0b1c2d3e-0000-11ef-8000-000000000002";
  CHECK(call("POST", f.base + "/api/v1/webhooks/github", body, next).status == 202);
  CHECK(f.triggered().size() == 2);
}

TEST_CASE("http: a GitHub ping is answered 200 without a sync", "[http]") {
  Fixture f;
  const std::string body = R"({"zen":"Keep it logically awesome.","hook_id":1})";
  auto r = call(
      "POST", f.base + "/api/v1/webhooks/github", body,
      {"X-Hub-Signature-256: sha256=" + hmac_hex(k_github_secret, body), "X-GitHub-Event: ping"});
  CHECK(r.status == 200);
  CHECK(f.triggered().empty());
  CHECK(f.webhooks("github", "ping") == 1);
}

TEST_CASE("http: GitLab and generic receivers trigger on a valid token or signature", "[http]") {
  Fixture f;
  auto gl = call("POST", f.base + "/api/v1/webhooks/gitlab", R"({"object_kind":"push"})",
                 {"X-Gitlab-Token: " + k_gitlab_token, "X-Gitlab-Event: Push Hook"});
  CHECK(gl.status == 202);
  const std::string body = R"({"repository":"platform/flyte-config"})";
  auto gen = call("POST", f.base + "/api/v1/webhooks/generic", body,
                  {"X-Signature: sha256=" + hmac_hex(k_generic_secret, body)});
  CHECK(gen.status == 202);
  CHECK(f.triggered() == std::vector<std::string>{"webhook gitlab", "webhook generic"});
  CHECK(f.webhooks("gitlab", "accepted") == 1);
  CHECK(f.webhooks("generic", "accepted") == 1);
}

TEST_CASE("http: bad or missing signatures get 401, are counted, and never trigger a sync",
          "[http]") {
  // Capture the server's log lines: one per webhook, without the body or any secret.
  std::ostringstream logs;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(logs);
  auto logger = log::get("http");
  const auto level = logger->level();
  logger->set_level(spdlog::level::info);
  logger->sinks().push_back(sink);
  {
    Fixture f;
    const std::string body = github_push_body();
    const std::string github = f.base + "/api/v1/webhooks/github";
    CHECK(call("POST", github, body,
               {"X-Hub-Signature-256: sha256=" + hmac_hex("wrong-secret", body),
                "X-GitHub-Event: push"})
              .status == 401);
    CHECK(call("POST", github, body + " ",
               {"X-Hub-Signature-256: sha256=" + hmac_hex(k_github_secret, body)})
              .status == 401);
    CHECK(call("POST", github, body, {"X-GitHub-Event: push"}).status == 401);
    CHECK(call("POST", github, body, {"X-Hub-Signature-256: sha1=abc"}).status == 401);

    const std::string gitlab = f.base + "/api/v1/webhooks/gitlab";
    CHECK(call("POST", gitlab, "{}", {"X-Gitlab-Token: " + k_gitlab_token + "x"}).status == 401);
    CHECK(call("POST", gitlab, "{}").status == 401);

    const std::string generic = f.base + "/api/v1/webhooks/generic";
    CHECK(call("POST", generic, "{}", {"X-Signature: sha256=" + hmac_hex(k_github_secret, "{}")})
              .status == 401);
    CHECK(call("POST", generic, "{}").status == 401);

    CHECK(f.triggered().empty());
    CHECK(f.webhooks("github", "bad_signature") == 3);
    CHECK(f.webhooks("github", "missing_signature") == 1);
    CHECK(f.webhooks("gitlab", "bad_signature") == 1);
    CHECK(f.webhooks("gitlab", "missing_signature") == 1);
    CHECK(f.webhooks("generic", "bad_signature") == 1);
    CHECK(f.webhooks("generic", "missing_signature") == 1);
    f.server->stop();
  }
  logger->flush();
  logger->sinks().pop_back();
  logger->set_level(level);
  const std::string text = logs.str();
  CHECK(text.find("webhook provider=github result=bad_signature remote=127.0.0.1:") !=
        std::string::npos);
  CHECK(text.find("webhook provider=gitlab result=missing_signature remote=127.0.0.1:") !=
        std::string::npos);
  for (const auto& secret : {k_github_secret, k_gitlab_token, k_generic_secret, k_sync_token}) {
    CHECK(text.find(secret) == std::string::npos);
  }
  CHECK(text.find("refs/heads/main") == std::string::npos);  // no bodies either
}

TEST_CASE("http: an oversized webhook body gets 413 before it is read", "[http]") {
  auto options = Fixture::defaults();
  options.max_body_bytes = 64 * 1024;
  Fixture f(options);
  const std::string big(3 * 1024 * 1024, 'x');
  const std::string sig = "X-Hub-Signature-256: sha256=" + hmac_hex(k_github_secret, big);

  SECTION("a client that waits for 100-continue never sends the body") {
    auto r = call("POST", f.base + "/api/v1/webhooks/github", big, {sig, "Expect: 100-continue"});
    CHECK(r.status == 413);
    CHECK(r.uploaded == 0);
  }
  SECTION("a client that sends at once still gets the 413") {
    auto r = call("POST", f.base + "/api/v1/webhooks/github", big, {sig, "Expect:"});
    CHECK(r.status == 413);
    CHECK(r.uploaded < static_cast<curl_off_t>(big.size()));
  }
  CHECK(f.triggered().empty());
  CHECK(f.webhooks("github", "too_large") == 1);
  // The server is still healthy afterwards.
  CHECK(call("GET", f.base + "/healthz").status == 200);
}

TEST_CASE("http: disabled receivers and a disabled manual sync answer 404", "[http]") {
  http::HttpOptions options;
  options.listen = "127.0.0.1:0";
  options.github_secret = k_github_secret;  // only GitHub enabled
  Fixture f(options);
  CHECK(
      call("POST", f.base + "/api/v1/webhooks/gitlab", "{}", {"X-Gitlab-Token: " + k_gitlab_token})
          .status == 404);
  CHECK(call("POST", f.base + "/api/v1/webhooks/generic", "{}").status == 404);
  CHECK(
      call("POST", f.base + "/api/v1/sync", "", {"Authorization: Bearer " + k_sync_token}).status ==
      404);
  CHECK(f.triggered().empty());
  CHECK(f.webhooks("gitlab", "disabled") == 1);
  CHECK(f.webhooks("generic", "disabled") == 1);
}

TEST_CASE("http: manual sync needs the bearer token", "[http]") {
  Fixture f;
  const std::string url = f.base + "/api/v1/sync";
  auto none = call("POST", url);
  CHECK(none.status == 401);
  CHECK(none.headers["www-authenticate"] == "Bearer");
  CHECK(call("POST", url, "", {"Authorization: Bearer " + k_sync_token + "0"}).status == 401);
  CHECK(call("POST", url, "", {"Authorization: Basic " + k_sync_token}).status == 401);
  CHECK(f.triggered().empty());
  CHECK(call("POST", url, "", {"Authorization: Bearer " + k_sync_token}).status == 202);
  CHECK(f.triggered() == std::vector<std::string>{"api sync"});
  CHECK(call("GET", url, "", {"Authorization: Bearer " + k_sync_token}).status == 405);
}

TEST_CASE("http: suspend and resume need the sync token, the reason from the query or a body",
          "[http]") {
  Fixture f;
  const std::vector<std::string> auth{"Authorization: Bearer " + k_sync_token};
  CHECK(call("POST", f.base + "/api/v1/suspend").status == 401);
  CHECK(call("POST", f.base + "/api/v1/resume", "", {"Authorization: Bearer " + k_sync_token + "0"})
            .status == 401);
  CHECK(call("GET", f.base + "/api/v1/suspend", "", auth).status == 405);
  auto q = call("POST", f.base + "/api/v1/suspend?reason=db+upgrade%20%231", "", auth);
  CHECK(q.status == 200);
  CHECK(q.headers["content-type"] == "application/json");
  auto b = call("POST", f.base + "/api/v1/suspend", R"({"reason":"maint\nenance","by":"alice"})",
                {auth[0], "Content-Type: application/json"});
  CHECK(b.status == 200);
  CHECK(call("POST", f.base + "/api/v1/suspend", "{bad", auth).status == 400);
  CHECK(call("POST", f.base + "/api/v1/suspend", R"({"reason":5})", auth).status == 400);
  CHECK(call("POST", f.base + "/api/v1/suspend?reason=fail", "", auth).status == 500);
  CHECK(call("POST", f.base + "/api/v1/resume", "", auth).status == 200);
  std::lock_guard<std::mutex> lock(f.mu);
  REQUIRE(f.suspensions.size() == 3);
  CHECK(f.suspensions[0].rfind("suspend|db upgrade #1|api (127.0.0.1:", 0) == 0);
  CHECK(f.suspensions[1].rfind("suspend|maint enance|alice (127.0.0.1:", 0) == 0);  // one line
  CHECK(f.suspensions[2] == "resume");
}

// Issue 27.1: clean_text() cut the reason at 500 bytes mid-character; the handler's JSON then
// threw, the answer was 500 and the daemon was not suspended.
TEST_CASE("http: a long non-ASCII suspend reason is kept whole characters, valid UTF-8",
          "[http][text]") {
  Fixture f;
  const std::vector<std::string> auth{"Authorization: Bearer " + k_sync_token,
                                      "Content-Type: application/json"};
  std::string reason = "x";  // then 500 bytes end mid-character
  for (int i = 0; i < 400; ++i) reason += "\xC3\xA9";
  auto r = call("POST", f.base + "/api/v1/suspend",
                flytecd::dump_json(nlohmann::json{{"reason", reason + "\n"}}), auth);
  CHECK(r.status == 200);
  auto latin1 = call("POST", f.base + "/api/v1/suspend?reason=caf%E9", "", {auth[0]});
  CHECK(latin1.status == 200);
  std::lock_guard<std::mutex> lock(f.mu);
  REQUIRE(f.suspensions.size() == 2);
  const std::string got = f.suspensions[0].substr(8, f.suspensions[0].find('|', 8) - 8);
  CHECK(got == reason.substr(0, 499));  // "x" and 249 whole characters
  CHECK(flytecd::text::valid_utf8(f.suspensions[1]));
  CHECK(f.suspensions[1].rfind("suspend|caf\xEF\xBF\xBD|", 0) == 0);
}

TEST_CASE("http: suspend and resume are 404 without a sync token", "[http]") {
  http::HttpOptions options;
  options.listen = "127.0.0.1:0";
  Fixture f(options);
  CHECK(call("POST", f.base + "/api/v1/suspend", "", {"Authorization: Bearer x"}).status == 404);
  CHECK(call("POST", f.base + "/api/v1/resume", "", {"Authorization: Bearer x"}).status == 404);
}

TEST_CASE("http: unknown paths are 404 and wrong methods 405 with Allow", "[http]") {
  Fixture f;
  CHECK(call("GET", f.base + "/nope").status == 404);
  CHECK(call("GET", f.base + "/api/v1/status/").status == 404);
  auto post_health = call("POST", f.base + "/healthz", "x");
  CHECK(post_health.status == 405);
  CHECK(post_health.headers["allow"] == "GET");
  auto get_hook = call("GET", f.base + "/api/v1/webhooks/github");
  CHECK(get_hook.status == 405);
  CHECK(get_hook.headers["allow"] == "POST");
  CHECK(f.webhooks("github", "method_not_allowed") == 1);
}

TEST_CASE("http: GET / and its assets are the page handler's (404 without one), POST is 405",
          "[http][page]") {
  Fixture off;  // http.ui: false leaves the handler unset
  CHECK(off.server != nullptr);
  for (const char* path : {"/", "/ui.css", "/ui.js"})
    CHECK(call("GET", off.base + path).status == 404);

  http::HttpOptions o = Fixture::defaults();
  http::HttpHandlers h;
  std::mutex mu;
  std::vector<std::string> asked;
  h.trigger_sync = [](const std::string&) {};
  h.status = [] { return std::make_shared<const std::string>("{}"); };
  h.ready = [] { return true; };
  h.metrics_text = [] { return std::string(); };
  h.page = [&](const std::string& path, const std::map<std::string, std::string>& params) {
    std::lock_guard<std::mutex> lock(mu);
    asked.push_back(path + (params.count("project") ? " project=" + params.at("project") : ""));
    http::Response r;
    r.content_type = "text/html; charset=utf-8";
    r.body = "<p>page</p>";
    r.headers = {{"X-Frame-Options", "DENY"}};
    return r;
  };
  auto s = http::HttpServer::start(o, h, nullptr);
  REQUIRE(s.ok());
  const std::string base = "http://127.0.0.1:" + std::to_string((*s)->port());
  auto page = call("GET", base + "/?project=flyte%20snacks&state=drifted");
  CHECK(page.status == 200);
  CHECK(page.body == "<p>page</p>");
  CHECK(page.headers["content-type"] == "text/html; charset=utf-8");
  CHECK(page.headers["x-frame-options"] == "DENY");
  CHECK(call("GET", base + "/ui.js").status == 200);
  auto post = call("POST", base + "/", "x");
  CHECK(post.status == 405);  // the page changes nothing
  CHECK(post.headers["allow"] == "GET");
  std::lock_guard<std::mutex> lock(mu);
  CHECK(asked == std::vector<std::string>{"/ project=flyte snacks", "/ui.js"});
}

TEST_CASE("http: a failing status callback is a 500, not a crash", "[http]") {
  http::HttpHandlers h;
  h.trigger_sync = [](const std::string&) {};
  h.status = []() -> std::shared_ptr<const std::string> {
    throw std::runtime_error("ledger closed");
  };
  h.ready = [] { return true; };
  h.metrics_text = [] { return std::string(); };
  http::HttpOptions o;
  o.listen = "127.0.0.1:0";
  auto s = http::HttpServer::start(o, h, nullptr);
  REQUIRE(s.ok());
  const std::string base = "http://127.0.0.1:" + std::to_string((*s)->port());
  CHECK(call("GET", base + "/api/v1/status").status == 500);
  CHECK(call("GET", base + "/healthz").status == 200);
  // Without metrics the webhook receivers still work (nothing is counted).
  CHECK(call("POST", base + "/api/v1/webhooks/github", "{}").status == 404);
}

TEST_CASE("http: start reports a busy port, a bad address and missing handlers", "[http]") {
  Fixture f;
  http::HttpHandlers h;
  h.trigger_sync = [](const std::string&) {};
  h.status = [] { return std::make_shared<const std::string>("{}"); };
  h.ready = [] { return true; };
  h.metrics_text = [] { return std::string(); };

  http::HttpOptions busy;
  busy.listen = "127.0.0.1:" + std::to_string(f.server->port());
  auto r1 = http::HttpServer::start(busy, h, nullptr);
  REQUIRE_FALSE(r1.ok());
  CHECK(r1.error().code == ErrorCode::unavailable);

  for (const char* bad : {"nonsense", "127.0.0.1:99999", "::1:80", "127.0.0.1:"}) {
    http::HttpOptions o;
    o.listen = bad;
    auto r = http::HttpServer::start(o, h, nullptr);
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::invalid_input);
  }

  http::HttpOptions ok;
  ok.listen = "127.0.0.1:0";
  auto missing = h;
  missing.ready = nullptr;
  auto r2 = http::HttpServer::start(ok, missing, nullptr);
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.error().code == ErrorCode::invalid_input);

  http::HttpOptions v6;
  v6.listen = "[::1]:0";
  if (auto r3 = http::HttpServer::start(v6, h, nullptr); r3.ok()) {  // hosts without IPv6 skip
    CHECK(call("GET", "http://[::1]:" + std::to_string((*r3)->port()) + "/healthz").body == "ok");
  }
}

TEST_CASE("http: malformed, oversized-head and slow requests are answered and bounded", "[http]") {
  auto options = Fixture::defaults();
  options.header_timeout = 300ms;
  Fixture f(options);

  const auto garbage = raw_exchange(f.server->port(), "hello there\r\n\r\n", 5s);
  CHECK(garbage.starts_with("HTTP/1.1 400 "));

  const auto huge_head = raw_exchange(
      f.server->port(),
      "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n", 5s);
  CHECK(huge_head.starts_with("HTTP/1.1 431 "));

  // A client that stops mid-head is cut off at the request deadline with 408.
  const auto t0 = std::chrono::steady_clock::now();
  const auto slow = raw_exchange(f.server->port(), "GET /healthz HTTP/1.1\r\nHost: x", 5s);
  CHECK(slow.starts_with("HTTP/1.1 408 "));
  CHECK(std::chrono::steady_clock::now() - t0 < 4s);

  // Conflicting Content-Length headers are refused rather than guessed.
  const auto smuggle = raw_exchange(
      f.server->port(),
      "POST /api/v1/webhooks/gitlab HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 5\r\n"
      "X-Gitlab-Token: " +
          k_gitlab_token + "\r\n\r\n{}",
      5s);
  CHECK(smuggle.starts_with("HTTP/1.1 400 "));

  const auto chunked = raw_exchange(f.server->port(),
                                    "POST /api/v1/webhooks/gitlab HTTP/1.1\r\nTransfer-Encoding: "
                                    "chunked\r\nX-Gitlab-Token: " +
                                        k_gitlab_token + "\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                                    5s);
  CHECK(chunked.starts_with("HTTP/1.1 411 "));
  CHECK(f.triggered().empty());
}

TEST_CASE("http: stop() is idempotent and closes the port", "[http]") {
  Fixture f;
  const std::string url = f.base + "/healthz";
  CHECK(call("GET", url).status == 200);
  f.server->stop();
  f.server->stop();
  auto after = call("GET", url);
  CHECK(after.rc == CURLE_COULDNT_CONNECT);
}

TEST_CASE("http: sync answers the request's number, and suspend and resume may name one project",
          "[http]") {
  std::mutex mu;
  std::vector<std::string> calls;
  uint64_t next = 0;
  http::HttpHandlers h;
  h.trigger_sync = [](const std::string&) {};
  h.request_sync = [&](const std::string&) {
    std::lock_guard<std::mutex> lock(mu);
    return ++next;
  };
  h.status = [] { return std::make_shared<const std::string>("{}"); };
  h.ready = [] { return true; };
  h.metrics_text = [] { return std::string(); };
  h.set_suspended = [&](bool on, const std::string&, const std::string&) -> Result<std::string> {
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back(on ? "suspend" : "resume");
    return std::string("{}");
  };
  h.set_project_suspended = [&](bool on, const std::string& project, const std::string& reason,
                                const std::string&) -> Result<std::string> {
    if (project == "bad id") return make_error(ErrorCode::invalid_input, "not a project id");
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back((on ? "suspend " : "resume ") + project + "|" + reason);
    return std::string(R"({"project":")" + project + R"("})");
  };
  auto started = http::HttpServer::start(Fixture::defaults(), std::move(h), nullptr);
  REQUIRE(started.ok());
  auto server = std::move(started).value();
  const std::string base = "http://127.0.0.1:" + std::to_string(server->port());
  const std::vector<std::string> auth{"Authorization: Bearer " + k_sync_token};
  auto first = call("POST", base + "/api/v1/sync", "", auth);
  CHECK(first.status == 202);
  CHECK(first.headers["content-type"] == "application/json");
  CHECK(nlohmann::json::parse(first.body)["request"] == 1);
  CHECK(nlohmann::json::parse(call("POST", base + "/api/v1/sync", "", auth).body)["request"] == 2);
  const std::vector<std::string> json_auth{auth[0], "Content-Type: application/json"};
  CHECK(call("POST", base + "/api/v1/suspend", R"({"project":"a","reason":"review"})", json_auth)
            .status == 200);
  CHECK(call("POST", base + "/api/v1/resume?project=a", "", auth).status == 200);
  CHECK(call("POST", base + "/api/v1/resume", R"({"project":"b"})", json_auth).status == 200);
  CHECK(call("POST", base + "/api/v1/suspend?project=bad+id", "", auth).status == 400);
  CHECK(call("POST", base + "/api/v1/suspend", "", auth).status == 200);  // everything
  std::lock_guard<std::mutex> lock(mu);
  CHECK(calls == std::vector<std::string>{"suspend a|review", "resume a|", "resume b|", "suspend"});
}

}  // namespace FLYTECD_UNITY_ID
