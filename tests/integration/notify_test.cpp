// Notifications: payload rendering (pure) and delivery against real receivers on loopback.
// Receivers are http::Listener instances (Debian's cpp-httplib is not linked, see
// daemon/common/http/listener.hpp); every wait is a bounded poll or condition-variable wait.

#include <netinet/in.h>
#include <openssl/evp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/common/http/listener.hpp"
#include "daemon/metrics/flytecd_metrics.hpp"
#include "daemon/notify/notifier.hpp"
#include "tests/support/hmac.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace std::chrono_literals;
using notify::EventKind;
using notify::NotifyTarget;

namespace {

using flytecd_test::hmac_hex;

notify::Event sample_event(EventKind kind = EventKind::drift_detected) {
  notify::Event e;
  e.kind = kind;
  e.revision = "0123456789abcdef0123456789abcdef01234567";
  e.summary = "2 objects changed outside Git";
  e.details = {"drifted: TASK_RESOURCE flytesnacks/development",
               "drifted: EXECUTION_QUEUE flytesnacks"};
  e.time = std::chrono::system_clock::time_point(std::chrono::seconds(1714564800));
  return e;
}

// A loopback HTTP receiver that records requests and answers with `reply(n)` for the n-th
// (0-based) request. When `hold` is set, handlers wait until release() (bounded).
struct Receiver {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<http::Request> got;
  std::function<int(size_t)> reply = [](size_t) { return 200; };
  bool hold = false;
  bool released = false;
  size_t in_flight = 0;
  std::unique_ptr<http::Listener> listener;

  Receiver() {
    http::ListenerOptions o;
    o.listen = "127.0.0.1:0";
    http::RequestHandler h;
    h.on_request = [this](const http::Request& req) {
      std::unique_lock<std::mutex> lock(mu);
      const size_t n = got.size();
      got.push_back(req);
      ++in_flight;
      cv.notify_all();
      if (hold) cv.wait_for(lock, 20s, [&] { return released; });
      --in_flight;
      return http::text_response(reply(n), "ok");
    };
    auto l = http::Listener::start(o, h);
    REQUIRE(l.ok());
    listener = std::move(l).value();
  }
  ~Receiver() {
    release();
    listener->stop();
  }
  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(listener->port()) + path;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
  // Waits (bounded) until at least `n` requests arrived.
  bool wait_for_requests(size_t n, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, timeout, [&] { return got.size() >= n; });
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return got.size();
  }
};

struct Metrics {
  metrics::Registry registry;
  metrics::FlytecdMetrics m{registry};
  double get(const char* kind, const char* result) {
    return m.notifications_total.with({kind, result}).value();
  }
};

notify::NotifierOptions fast_options() {
  notify::NotifierOptions o;
  o.attempt_timeout = 5000ms;
  o.retry_backoff = 10ms;
  return o;
}

}  // namespace

TEST_CASE("notify: the generic payload is the event as JSON", "[notify]") {
  CHECK(notify::render_payload(NotifyTarget::Kind::generic, sample_event()) ==
        R"({"event":"drift_detected","revision":"0123456789abcdef0123456789abcdef01234567",)"
        R"("summary":"2 objects changed outside Git","details":["drifted: TASK_RESOURCE )"
        R"(flytesnacks/development","drifted: EXECUTION_QUEUE flytesnacks"],)"
        R"("time":"2024-05-01T12:00:00Z"})");
  auto e = sample_event(EventKind::sync_recovered);
  e.details.clear();
  e.summary = "quote \" and \xff invalid UTF-8";
  const auto j = nlohmann::json::parse(notify::render_payload(NotifyTarget::Kind::generic, e));
  CHECK(j["event"] == "sync_recovered");
  CHECK(j["details"] == nlohmann::json::array());
  CHECK(j["summary"] == "quote \" and \xEF\xBF\xBD invalid UTF-8");  // replaced, not thrown
}

TEST_CASE("notify: the Slack payload has text and blocks with escaped mrkdwn", "[notify]") {
  auto e = sample_event(EventKind::sync_failed);
  e.summary = "apply failed: <script> & co";
  const auto j = nlohmann::json::parse(notify::render_payload(NotifyTarget::Kind::slack, e));
  CHECK(j["text"] ==
        ":x: flytecd: Sync failed at revision 0123456789abcdef0123456789abcdef01234567: apply "
        "failed: &lt;script&gt; &amp; co");
  REQUIRE(j["blocks"].size() == 4);
  CHECK(j["blocks"][0] == nlohmann::json::parse(R"({"type":"header","text":{"type":"plain_text",
        "text":"flytecd: Sync failed","emoji":true}})"));
  CHECK(j["blocks"][1]["text"]["text"] == "apply failed: &lt;script&gt; &amp; co");
  CHECK(j["blocks"][2]["text"]["text"] ==
        "\xE2\x80\xA2 drifted: TASK_RESOURCE flytesnacks/development\n"
        "\xE2\x80\xA2 drifted: EXECUTION_QUEUE flytesnacks");
  CHECK(j["blocks"][3]["type"] == "context");
  CHECK(j["blocks"][3]["elements"][0]["text"] ==
        "revision `0123456789abcdef0123456789abcdef01234567` \xC2\xB7 2024-05-01T12:00:00Z");
}

TEST_CASE("notify: Slack payloads stay within Slack's limits", "[notify]") {
  auto e = sample_event();
  e.details.clear();
  for (int i = 0; i < 25; ++i) e.details.push_back("drifted: object " + std::to_string(i));
  e.summary = std::string(2999, 'a') + "\xE2\x9C\x93\xE2\x9C\x93";  // multi-byte at the cut
  e.revision.clear();
  const auto j = nlohmann::json::parse(notify::render_payload(NotifyTarget::Kind::slack, e));
  const std::string details = j["blocks"][2]["text"]["text"];
  CHECK(details.find("object 19") != std::string::npos);
  CHECK(details.find("object 20") == std::string::npos);
  CHECK(details.ends_with("_and 5 more_"));
  const std::string summary = j["blocks"][1]["text"]["text"];
  CHECK(summary.size() <= 3000);
  CHECK(summary.ends_with("a\xE2\x80\xA6"));  // cut on a character boundary
  CHECK(std::string(j["blocks"][3]["elements"][0]["text"]).starts_with("revision `unknown`"));
  // An event without details has no details block.
  e.details.clear();
  const auto k = nlohmann::json::parse(notify::render_payload(NotifyTarget::Kind::slack, e));
  CHECK(k["blocks"].size() == 3);
}

TEST_CASE("notify: a generic receiver gets the payload with a verifiable signature", "[notify]") {
  Receiver rx;
  Metrics mx;
  const std::string secret = "notify-secret";
  auto n = notify::Notifier::start({{NotifyTarget::Kind::generic, rx.url(), secret},
                                    {NotifyTarget::Kind::slack, rx.url("/slack"), ""}},
                                   fast_options(), &mx.m);
  REQUIRE(n.ok());
  CHECK((*n)->notify(sample_event()));
  REQUIRE((*n)->flush(10s));
  REQUIRE(rx.count() == 2);

  const auto& generic = rx.got[0];
  CHECK(generic.method == "POST");
  CHECK(generic.path == "/hook");
  CHECK(generic.body == notify::render_payload(NotifyTarget::Kind::generic, sample_event()));
  CHECK(generic.header("content-type") == "application/json");
  CHECK(generic.header("x-flytecd-event") == "drift_detected");
  CHECK(generic.header("x-flytecd-signature") == "sha256=" + hmac_hex(secret, generic.body));

  const auto& slack = rx.got[1];
  CHECK(slack.path == "/slack");
  CHECK(slack.header("x-flytecd-signature").empty());
  CHECK(nlohmann::json::parse(slack.body).contains("blocks"));
  CHECK(mx.get("generic", "sent") == 1);
  CHECK(mx.get("slack", "sent") == 1);
}

TEST_CASE("notify: a 500 followed by a 200 is retried and sent once", "[notify]") {
  Receiver rx;
  rx.reply = [](size_t n) { return n == 0 ? 500 : 200; };
  Metrics mx;
  auto n =
      notify::Notifier::start({{NotifyTarget::Kind::generic, rx.url(), ""}}, fast_options(), &mx.m);
  REQUIRE(n.ok());
  (*n)->notify(sample_event(EventKind::sync_failed));
  REQUIRE((*n)->flush(10s));
  CHECK(rx.count() == 2);
  CHECK(rx.got[0].body == rx.got[1].body);
  CHECK(mx.get("generic", "sent") == 1);
  CHECK(mx.get("generic", "failed") == 0);
}

TEST_CASE("notify: 5xx gives up after two retries, a 4xx is not retried", "[notify]") {
  Receiver rx;
  rx.reply = [](size_t n) { return n < 10 ? 503 : 400; };
  Metrics mx;
  auto n =
      notify::Notifier::start({{NotifyTarget::Kind::generic, rx.url(), ""}}, fast_options(), &mx.m);
  REQUIRE(n.ok());
  (*n)->notify(sample_event());
  REQUIRE((*n)->flush(10s));
  CHECK(rx.count() == 3);  // 1 attempt + 2 retries
  CHECK(mx.get("generic", "failed") == 1);

  {
    std::lock_guard<std::mutex> lock(rx.mu);
    rx.reply = [](size_t) { return 400; };
  }
  (*n)->notify(sample_event());
  REQUIRE((*n)->flush(10s));
  CHECK(rx.count() == 4);
  CHECK(mx.get("generic", "failed") == 2);
  CHECK(mx.get("generic", "sent") == 0);
}

TEST_CASE("notify: an unreachable receiver is counted as failed", "[notify]") {
  // A bound socket that does not listen: connecting to its port is refused at once.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/hook";

  Metrics mx;
  auto n = notify::Notifier::start({{NotifyTarget::Kind::slack, url, ""}}, fast_options(), &mx.m);
  REQUIRE(n.ok());
  CHECK((*n)->notify(sample_event()));
  REQUIRE((*n)->flush(10s));
  CHECK(mx.get("slack", "failed") == 1);
  CHECK(mx.get("slack", "sent") == 0);
  ::close(fd);
}

TEST_CASE("notify: a slow receiver never blocks the caller, a full queue drops and counts",
          "[notify]") {
  Receiver rx;
  rx.hold = true;
  Metrics mx;
  auto options = fast_options();
  options.attempt_timeout = 20000ms;  // only release() ends the first attempt
  options.queue_capacity = 2;
  auto n = notify::Notifier::start({{NotifyTarget::Kind::generic, rx.url(), ""}}, options, &mx.m);
  REQUIRE(n.ok());

  CHECK((*n)->notify(sample_event()));
  REQUIRE(rx.wait_for_requests(1));  // the worker is now stuck inside the first POST
  CHECK((*n)->notify(sample_event()));
  CHECK((*n)->notify(sample_event()));
  CHECK_FALSE((*n)->notify(sample_event()));  // queue of 2 is full
  CHECK_FALSE((*n)->flush(50ms));
  {
    // Every notify() above returned while the receiver still held the first request.
    std::lock_guard<std::mutex> lock(rx.mu);
    CHECK(rx.in_flight == 1);
  }
  CHECK(mx.get("generic", "dropped") == 1);

  rx.release();
  REQUIRE((*n)->flush(10s));
  CHECK(rx.count() == 3);
  CHECK(mx.get("generic", "sent") == 3);
}

TEST_CASE("notify: each attempt has a deadline", "[notify]") {
  Receiver rx;
  rx.hold = true;  // answers only when released, long after the deadline
  Metrics mx;
  auto options = fast_options();
  options.attempt_timeout = 200ms;
  options.max_retries = 1;
  auto n = notify::Notifier::start({{NotifyTarget::Kind::generic, rx.url(), ""}}, options, &mx.m);
  REQUIRE(n.ok());
  const auto t0 = std::chrono::steady_clock::now();
  (*n)->notify(sample_event());
  REQUIRE((*n)->flush(10s));
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK(mx.get("generic", "failed") == 1);
  CHECK(rx.wait_for_requests(2));
}

TEST_CASE("notify: stop() drops what is queued and aborts the attempt in flight", "[notify]") {
  Receiver rx;
  rx.hold = true;
  Metrics mx;
  auto options = fast_options();
  options.attempt_timeout = 20000ms;
  auto n = notify::Notifier::start({{NotifyTarget::Kind::generic, rx.url(), ""}}, options, &mx.m);
  REQUIRE(n.ok());
  (*n)->notify(sample_event());
  REQUIRE(rx.wait_for_requests(1));
  (*n)->notify(sample_event());
  const auto t0 = std::chrono::steady_clock::now();
  (*n)->stop();
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK(mx.get("generic", "dropped") == 1);
  CHECK(mx.get("generic", "failed") == 1);
  CHECK_FALSE((*n)->notify(sample_event()));  // stopped: dropped and counted
  CHECK(mx.get("generic", "dropped") == 2);
  (*n)->stop();
}

TEST_CASE("notify: targets must be http(s) URLs", "[notify]") {
  for (const char* bad : {"", "ftp://example.com/x", "hooks.slack.com/services/x", "http:///x"}) {
    INFO(bad);
    auto n = notify::Notifier::start({{NotifyTarget::Kind::slack, bad, ""}}, {}, nullptr);
    REQUIRE_FALSE(n.ok());
    CHECK(n.error().code == ErrorCode::invalid_input);
  }
  auto ok = notify::Notifier::start({{NotifyTarget::Kind::slack, "HTTPS://hooks.example/x", ""}},
                                    {}, nullptr);
  CHECK(ok.ok());
  CHECK(notify::format_rfc3339(std::chrono::system_clock::time_point{}) == "1970-01-01T00:00:00Z");
}

}  // namespace FLYTECD_UNITY_ID
