#pragma once

// The one HTTP/1.1 server of flytecd: the daemon's /metrics, probes, status API and webhooks
// (daemon/http/server.cpp) and the emulator's signed-URL upload endpoint
// (sinks/emulator/upload_server.cpp). Content-Length bodies only, held in memory up to
// max_body_bytes (checked before the body is read: 413), `Expect: 100-continue` honoured,
// bounded keep-alive.
//
// One event thread (epoll) accepts every connection and reads and parses every request, so
// a connection costs a buffer, not a thread: half-open or slow clients cannot use up
// "slots". Each connection has deadlines for its head, its body, its keep-alive idle time
// and for taking the response; past one it is dropped (408 when a request was started).
// Complete requests run on a small pool of handler threads, and requests the handler marks
// as priority (the probes) on a thread of their own, so /healthz answers even while every
// general handler is busy. At max_connections the oldest connection that has not finished
// sending its head is dropped to make room (never one whose request is being served).
//
// cpp-httplib (Debian's libcpp-httplib-dev) is not used: it holds a pool thread for every
// connection and its read timeout applies per read, so trickling clients can hold them all.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/common/http/wire.hpp"
#include "daemon/common/result.hpp"

namespace flytecd::http {

struct ListenerOptions {
  std::string listen = "127.0.0.1:0";  // "host:port", ":port" (all IPv4), "[v6]:port"
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 16 * 1024;
  // Open connections; also capped by RLIMIT_NOFILE (the soft limit less 128).
  size_t max_connections = 4096;
  size_t handler_threads = 4;  // general handlers; priority requests have one more
  // Request line and headers must arrive within this of the first byte (of the accept for a
  // connection's first request). Total, not per read: trickling bytes does not extend it.
  std::chrono::milliseconds header_timeout{5000};
  std::chrono::milliseconds body_timeout{10000};   // the body, once the head is in
  std::chrono::milliseconds idle_timeout{5000};    // keep-alive: wait for the next request
  std::chrono::milliseconds write_timeout{10000};  // the client must take the response
  size_t max_requests_per_connection = 100;        // then "Connection: close"
};

struct RequestHandler {
  // Optional. Called once the head is parsed, before any body byte is read; a response
  // returned here is sent without reading the body (routing, auth, size checks).
  std::function<std::optional<Response>(const Request&)> on_head;
  // Called with the complete body. Runs on a handler thread; must be thread-safe. The request
  // is the handler's to consume (it may move the body out).
  std::function<Response(Request&)> on_request;
  // Optional, called on the event thread, so it must be cheap (look at the path): true runs
  // this request's handlers on the reserved priority thread.
  std::function<bool(const Request&)> is_priority;
};

// What the listener has done since start(); read from any thread.
struct ListenerStats {
  uint64_t accepted = 0;
  uint64_t requests = 0;   // responses queued, including 4xx from the listener itself
  uint64_t timed_out = 0;  // dropped at a header, body, idle or write deadline
  uint64_t evicted = 0;    // dropped at max_connections to make room for a new one
  uint64_t open = 0;       // connections open now
};

class Listener {
 public:
  // Binds and starts serving on background threads (port 0 = a free port).
  // Errors: invalid_input (address, missing on_request), unavailable (bind/listen failed).
  static Result<std::unique_ptr<Listener>> start(ListenerOptions options, RequestHandler handler);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Stops accepting, drops connections, waits for running handlers and joins every thread.
  // Idempotent.
  void stop();
  int port() const { return m_port; }
  // The bound host as a numeric address ("127.0.0.1", "::1", "0.0.0.0").
  const std::string& host() const { return m_host; }
  // Connections actually allowed open (max_connections capped by RLIMIT_NOFILE).
  size_t connection_limit() const;
  ListenerStats stats() const;

  struct Loop;  // the event loop and handler pools, in listener.cpp

 private:
  explicit Listener(std::unique_ptr<Loop> loop);
  std::unique_ptr<Loop> m_loop;
  std::string m_host;
  int m_port = 0;
};

}  // namespace flytecd::http
