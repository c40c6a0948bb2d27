// Slow, half-open and many clients against the daemon's HTTP server on 127.0.0.1 (issue 10
// item 5): probes keep answering, slow clients are dropped at their deadlines, keep-alive is
// bounded and a burst of status requests is served from one snapshot. Raw sockets, bounded
// waits; the only timing checks are generous "answered within 2 s while attacked" bounds.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/http/json_snapshot.hpp"
#include "daemon/http/server.hpp"
#include "tests/integration/git/git_test_support.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using git_test::eventually;

namespace {

// Raises this process's descriptor limit (soft up to hard) and returns the soft limit.
size_t raise_nofile(size_t want) {
  rlimit rl{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &rl) == 0);
  if (rl.rlim_cur < want) {
    rl.rlim_cur = std::min<rlim_t>(want, rl.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &rl);
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &rl) == 0);
  }
  return static_cast<size_t>(rl.rlim_cur);
}

// A TCP connection to 127.0.0.1:port (blocking connect; loopback completes in the kernel
// even before the server accepts). -1 when it fails.
int connect_loopback(int port, bool nonblocking = false) {
  const int fd =
      ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 &&
      !(nonblocking && errno == EINPROGRESS)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_text(int fd, const std::string& data) {
  return ::send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
}

struct RawResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// Reads one response from `fd` (bytes past it stay in `buf`); nullopt on EOF, error or when
// `deadline` passes first.
std::optional<RawResponse> read_response(int fd, std::string& buf, Clock::time_point deadline) {
  for (;;) {
    const auto end = buf.find("\r\n\r\n");
    if (end != std::string::npos) {
      RawResponse r;
      if (buf.size() < 12 || buf.compare(0, 9, "HTTP/1.1 ") != 0) return std::nullopt;
      r.status = std::stoi(buf.substr(9, 3));
      size_t pos = buf.find("\r\n") + 2;
      while (pos < end) {
        const size_t eol = buf.find("\r\n", pos);
        const std::string line = buf.substr(pos, eol - pos);
        const size_t colon = line.find(':');
        if (colon != std::string::npos) {
          std::string name = line.substr(0, colon);
          for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
        }
        pos = eol + 2;
      }
      const size_t length = std::stoul(r.headers["content-length"]);
      if (buf.size() >= end + 4 + length) {
        r.body = buf.substr(end + 4, length);
        buf.erase(0, end + 4 + length);
        return r;
      }
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
    char chunk[8192];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    buf.append(chunk, static_cast<size_t>(n));
  }
}

// True when the peer closes `fd` (EOF or reset) before `deadline`; other bytes are skipped.
bool closed_by_peer(int fd, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char chunk[4096];
    if (::recv(fd, chunk, sizeof chunk, 0) <= 0) return true;
  }
}

struct Probe {
  int status = 0;  // 0 = no answer
  std::chrono::milliseconds took{0};
};

// GET `path` on a fresh connection, waiting at most `wait`.
Probe probe(int port, const std::string& path, std::chrono::milliseconds wait = 2000ms) {
  Probe p;
  const auto t0 = Clock::now();
  const int fd = connect_loopback(port);
  if (fd < 0) return p;
  std::string buf;
  if (send_text(fd, "GET " + path + " HTTP/1.1\r\nHost: flytecd\r\nConnection: close\r\n\r\n")) {
    if (auto r = read_response(fd, buf, t0 + wait)) p.status = r->status;
  }
  ::close(fd);
  p.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  return p;
}

// A daemon-like server: ready, and /api/v1/status served from a JsonSnapshot.
struct Server {
  std::mutex mu;
  http::JsonSnapshot status;
  std::atomic<int> status_calls{0};
  std::unique_ptr<http::HttpServer> server;

  explicit Server(http::HttpOptions options = {}) {
    options.listen = "127.0.0.1:0";
    status["revision"] = "0123456789abcdef";
    status["objects"] = nlohmann::json::array({"project/a", "project/b", "domain/c"});
    http::HttpHandlers h;
    h.trigger_sync = [](const std::string&) {};
    h.status = [this] {
      ++status_calls;
      std::lock_guard<std::mutex> lock(mu);
      return status.rendered();
    };
    h.ready = [] { return true; };
    h.metrics_text = [] { return std::string("flytecd_up 1\n"); };
    auto s = http::HttpServer::start(std::move(options), std::move(h), nullptr);
    REQUIRE(s.ok());
    server = std::move(s).value();
  }
  int port() const { return server->port(); }
};

struct Sockets {
  std::vector<int> fds;
  ~Sockets() {
    for (int fd : fds) ::close(fd);
  }
};

// Probes /healthz and /readyz `rounds` times; counts 200s answered within 2 s.
struct ProbeTally {
  int sent = 0, ok = 0;
  std::chrono::milliseconds slowest{0};
};
ProbeTally probe_rounds(int port, int rounds, std::chrono::milliseconds pause) {
  ProbeTally t;
  for (int i = 0; i < rounds; ++i) {
    for (const char* path : {"/healthz", "/readyz"}) {
      const auto p = probe(port, path);
      ++t.sent;
      INFO(path << " round " << i << ": status " << p.status << " after " << p.took.count()
                << " ms");
      CHECK(p.status == 200);
      if (p.status == 200) ++t.ok;
      t.slowest = std::max(t.slowest, p.took);
    }
    std::this_thread::sleep_for(pause);
  }
  return t;
}

}  // namespace

TEST_CASE("http: 1,000 half-open connections do not starve /healthz or /readyz",
          "[http][slow-clients]") {
  constexpr int k_attackers = 1000;
  REQUIRE(raise_nofile(2 * k_attackers + 256) >= 2 * k_attackers + 256);

  SECTION("the attackers stay connected and the probes are still answered") {
    http::HttpOptions o;
    o.header_timeout = 30s;  // the attackers are not dropped during the probe window
    Server s(o);
    Sockets attackers;
    for (int i = 0; i < k_attackers; ++i) {
      const int fd = connect_loopback(s.port());
      REQUIRE(fd >= 0);
      if (i % 2 == 1) REQUIRE(send_text(fd, "GET /api/v1/sta"));  // a partial request line
      attackers.fds.push_back(fd);
    }
    REQUIRE(eventually([&] { return s.server->stats().open >= k_attackers; }, 10.0));
    const auto t = probe_rounds(s.port(), 20, 20ms);
    CHECK(t.ok == t.sent);
    CHECK(s.server->stats().open >= k_attackers);  // answered while all were connected
    std::printf("half-open: %d attackers connected, %d/%d probes 200, slowest %lld ms\n",
                k_attackers, t.ok, t.sent, static_cast<long long>(t.slowest.count()));
  }
  SECTION("past max_connections the oldest unfinished heads make room for the probes") {
    http::HttpOptions o;
    o.header_timeout = 30s;
    o.max_connections = 100;
    Server s(o);
    Sockets attackers;
    for (int i = 0; i < k_attackers; ++i) {
      const int fd = connect_loopback(s.port());
      REQUIRE(fd >= 0);
      if (i % 2 == 1) send_text(fd, "GET /api/v1/sta");
      attackers.fds.push_back(fd);
    }
    const auto t = probe_rounds(s.port(), 20, 20ms);
    CHECK(t.ok == t.sent);
    const auto st = s.server->stats();
    CHECK(st.evicted > 0);
    CHECK(st.open <= 100);
    std::printf(
        "half-open, max_connections=100: %d attackers, %llu evicted, %d/%d probes 200, "
        "slowest %lld ms\n",
        k_attackers, static_cast<unsigned long long>(st.evicted), t.ok, t.sent,
        static_cast<long long>(t.slowest.count()));
  }
}

TEST_CASE("http: 40 slowloris clients (one header line a second) do not fail a probe",
          "[http][slow-clients]") {
  constexpr int k_clients = 40;
  http::HttpOptions o;
  o.header_timeout = 30s;  // they trickle the whole window without being dropped
  Server s(o);
  Sockets slow;
  for (int i = 0; i < k_clients; ++i) {
    const int fd = connect_loopback(s.port());
    REQUIRE(fd >= 0);
    REQUIRE(send_text(fd, "GET /api/v1/status HTTP/1.1\r\n"));
    slow.fds.push_back(fd);
  }
  std::atomic<bool> done{false};
  std::atomic<int> lines{0};
  std::thread trickle([&] {
    for (int n = 0; !done; ++n) {
      for (int fd : slow.fds) {
        if (send_text(fd, "X-Slow-" + std::to_string(n) + ": 1\r\n")) ++lines;
      }
      for (int i = 0; i < 20 && !done; ++i) std::this_thread::sleep_for(50ms);  // 1 s
    }
  });
  REQUIRE(eventually([&] { return s.server->stats().open >= k_clients; }, 10.0));
  const auto t0 = Clock::now();
  const auto t = probe_rounds(s.port(), 24, 200ms);  // about 5 s of probing
  const auto window = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  const auto open = s.server->stats().open;
  done = true;
  trickle.join();
  CHECK(t.ok == t.sent);
  CHECK(open >= k_clients);  // the slow clients were connected all along
  CHECK(lines >= 4 * k_clients);
  std::printf(
      "slowloris: %d clients, %d header lines in %lld ms, %d/%d probes 200, slowest %lld ms\n",
      k_clients, lines.load(), static_cast<long long>(window.count()), t.ok, t.sent,
      static_cast<long long>(t.slowest.count()));
}

TEST_CASE("http: 2,000 concurrent GET /api/v1/status are all 200 from one snapshot",
          "[http][slow-clients]") {
  const size_t limit = raise_nofile(4500);
  // Client and server ends both live in this process.
  const size_t n = std::min<size_t>(2000, (limit - 300) / 2);
  if (n < 2000) WARN("RLIMIT_NOFILE " << limit << " allows only " << n << " clients");
  Server s;
  const std::string expected = *s.status.rendered();

  struct Client {
    int fd = -1;
    bool sent = false;
    std::string in;
    bool eof = false;
  };
  std::vector<Client> clients(n);
  for (auto& c : clients) {
    c.fd = connect_loopback(s.port(), true);
    REQUIRE(c.fd >= 0);
  }
  const std::string request = "GET /api/v1/status HTTP/1.1\r\nHost: flytecd\r\n\r\n";
  const auto t0 = Clock::now();
  const auto deadline = t0 + 20s;
  size_t finished = 0;
  while (finished < n && Clock::now() < deadline) {
    std::vector<pollfd> fds;
    std::vector<size_t> index;
    for (size_t i = 0; i < n; ++i) {
      if (clients[i].eof) continue;
      fds.push_back({clients[i].fd, static_cast<short>(clients[i].sent ? POLLIN : POLLOUT), 0});
      index.push_back(i);
    }
    if (::poll(fds.data(), fds.size(), 500) < 0) break;
    for (size_t k = 0; k < fds.size(); ++k) {
      Client& c = clients[index[k]];
      if (fds[k].revents == 0) continue;
      if (!c.sent) {
        REQUIRE(send_text(c.fd, request));  // connected: the whole request in one write
        c.sent = true;
        continue;
      }
      char chunk[8192];
      const ssize_t got = ::recv(c.fd, chunk, sizeof chunk, 0);
      if (got > 0) {
        c.in.append(chunk, static_cast<size_t>(got));
      }
      // Each response is complete once its body is in (the connection may stay open).
      const auto end = c.in.find("\r\n\r\n");
      if (got <= 0 || (end != std::string::npos && c.in.size() >= end + 4 + expected.size())) {
        c.eof = true;
        ++finished;
      }
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  std::map<int, int> by_status;
  size_t same_body = 0;
  for (auto& c : clients) {
    int status = 0;
    if (c.in.starts_with("HTTP/1.1 ") && c.in.size() >= 12) status = std::stoi(c.in.substr(9, 3));
    ++by_status[status];
    const auto end = c.in.find("\r\n\r\n");
    if (end != std::string::npos && c.in.substr(end + 4) == expected) ++same_body;
    ::close(c.fd);
  }
  INFO("responses by status (0 = none): " << nlohmann::json(by_status).dump());
  CHECK(by_status[200] == static_cast<int>(n));
  CHECK(by_status[503] == 0);
  CHECK(same_body == n);
  // Rendered once (the Server constructor's edits), however many requests read it.
  {
    std::lock_guard<std::mutex> lock(s.mu);
    CHECK(s.status.renders() == 1);
  }
  CHECK(s.status_calls == static_cast<int>(n));
  std::printf(
      "status burst: %zu concurrent clients, %d x 200, %d x 503, %zu same body, %llu "
      "renders, %lld ms\n",
      n, by_status[200], by_status[503], same_body,
      static_cast<unsigned long long>(s.status.renders()), static_cast<long long>(took.count()));
}

TEST_CASE("http: a slow client is dropped at the header or body deadline, however it trickles",
          "[http][slow-clients]") {
  http::HttpOptions o;
  o.header_timeout = 1s;
  o.body_timeout = 1s;
  o.generic_secret = "generic-secret";  // an enabled receiver reads the body
  Server s(o);
  const auto trickle_until_dropped = [&](const std::string& start, const std::string& drip) {
    const int fd = connect_loopback(s.port());
    REQUIRE(fd >= 0);
    REQUIRE(send_text(fd, start));
    const auto t0 = Clock::now();
    std::string buf;
    std::optional<RawResponse> r;
    int sent = 0;
    // A byte every 200 ms: a per-read timeout of 1 s would never fire.
    while (!r && Clock::now() - t0 < 6s) {
      if (!send_text(fd, drip)) break;
      ++sent;
      r = read_response(fd, buf, Clock::now() + 200ms);
    }
    if (!r) r = read_response(fd, buf, Clock::now() + 1s);
    const auto took = Clock::now() - t0;
    REQUIRE(r);
    CHECK(r->status == 408);
    CHECK(r->headers["connection"] == "close");
    CHECK(closed_by_peer(fd, Clock::now() + 3s));
    CHECK(took < 3s);  // deadline 1 s; generous bound
    CHECK(sent >= 3);  // it really was trickling when it was cut off
    ::close(fd);
  };
  SECTION("head") { trickle_until_dropped("GET /healthz HTTP/1.1\r\n", "X: y\r\n"); }
  SECTION("body") {
    trickle_until_dropped("POST /api/v1/webhooks/generic HTTP/1.1\r\nContent-Length: 1000\r\n\r\n",
                          "x");
  }
  CHECK(s.server->stats().timed_out == 1);
  CHECK(probe(s.port(), "/healthz").status == 200);
  // Visible to operators, not only to this test.
  const int fd = connect_loopback(s.port());
  REQUIRE(fd >= 0);
  REQUIRE(send_text(fd, "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n"));
  std::string buf;
  const auto m = read_response(fd, buf, Clock::now() + 2s);
  ::close(fd);
  REQUIRE(m);
  CHECK(m->body.find("flytecd_http_connections_dropped_total{reason=\"deadline\"} 1\n") !=
        std::string::npos);
}

TEST_CASE("http: keep-alive serves several requests per connection, within bounds",
          "[http][slow-clients]") {
  http::HttpOptions o;
  o.max_requests_per_connection = 3;
  o.idle_timeout = 500ms;
  Server s(o);
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: flytecd\r\n\r\n";

  SECTION("the last allowed request is answered with Connection: close, then EOF") {
    const int fd = connect_loopback(s.port());
    REQUIRE(fd >= 0);
    std::string buf;
    for (int i = 1; i <= 3; ++i) {
      INFO("request " << i);
      REQUIRE(send_text(fd, get));
      auto r = read_response(fd, buf, Clock::now() + 2s);
      REQUIRE(r);
      CHECK(r->status == 200);
      CHECK(r->body == "ok");
      CHECK(r->headers["connection"] == (i < 3 ? "keep-alive" : "close"));
    }
    CHECK(closed_by_peer(fd, Clock::now() + 3s));
    ::close(fd);
  }
  SECTION("pipelined requests are answered in order") {
    const int fd = connect_loopback(s.port());
    REQUIRE(fd >= 0);
    REQUIRE(send_text(fd, get + "GET /readyz HTTP/1.1\r\nHost: flytecd\r\n\r\n"));
    std::string buf;
    auto a = read_response(fd, buf, Clock::now() + 2s);
    auto b = read_response(fd, buf, Clock::now() + 2s);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->body == "ok");
    CHECK(b->body == "ready");
    ::close(fd);
  }
  SECTION("an idle keep-alive connection is closed after idle_timeout") {
    const int fd = connect_loopback(s.port());
    REQUIRE(fd >= 0);
    REQUIRE(send_text(fd, get));
    std::string buf;
    auto r = read_response(fd, buf, Clock::now() + 2s);
    REQUIRE(r);
    CHECK(r->headers["connection"] == "keep-alive");
    CHECK(closed_by_peer(fd, Clock::now() + 3s));  // idle_timeout 500 ms; generous bound
    ::close(fd);
    CHECK(s.server->stats().timed_out == 1);
  }
  SECTION("Connection: close and HTTP/1.0 get one request") {
    for (const std::string req :
         {"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", "GET /healthz HTTP/1.0\r\n\r\n"}) {
      const int fd = connect_loopback(s.port());
      REQUIRE(fd >= 0);
      REQUIRE(send_text(fd, req));
      std::string buf;
      auto r = read_response(fd, buf, Clock::now() + 2s);
      REQUIRE(r);
      CHECK(r->headers["connection"] == "close");
      CHECK(closed_by_peer(fd, Clock::now() + 3s));
      ::close(fd);
    }
  }
}

}  // namespace FLYTECD_UNITY_ID
