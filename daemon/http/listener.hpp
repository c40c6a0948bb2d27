#pragma once

// A small, bounded HTTP/1.1 server: one request per connection (`Connection: close`),
// Content-Length bodies only, a size limit checked before the body is read, a whole-request
// deadline, a cap on concurrent connections (503 beyond it), `Expect: 100-continue` honoured.
//
// Debian's cpp-httplib is a compiled library (libcpp-httplib.so; <httplib.h> only declares
// Server's members) and flytecd_core does not link it, so the daemon's HTTP surface and the
// loopback receivers in tests stand on this instead. It is meant for /metrics, probes, the
// status API and webhooks, not for serving large files.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::http {

struct Request {
  std::string method;
  std::string path;                            // request target without the query string
  std::string query;                           // after '?', undecoded
  std::map<std::string, std::string> headers;  // lower-case names; repeats joined with ", "
  std::optional<size_t> content_length;
  std::string body;    // empty in RequestHandler::on_head
  std::string remote;  // peer "ip:port"

  // The header's value, or "" when absent. `name` must be lower-case.
  std::string_view header(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

// A text/plain response with `body` as is.
Response text_response(int status, std::string body);
// The standard reason phrase ("Payload Too Large"), or "Unknown".
std::string_view reason_phrase(int status);

struct ListenerOptions {
  std::string listen = "127.0.0.1:0";  // "host:port", ":port" (all IPv4), "[v6]:port"
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 16 * 1024;
  size_t max_connections = 32;
  std::chrono::milliseconds request_timeout{10000};  // head + body must arrive within this
};

struct RequestHandler {
  // Optional. Called once the head is parsed, before any body byte is read; a response
  // returned here is sent without reading the body (routing, auth, size checks).
  std::function<std::optional<Response>(const Request&)> on_head;
  // Called with the complete body. Runs on a connection thread; must be thread-safe.
  std::function<Response(const Request&)> on_request;
};

// Parses a request head (request line and headers, up to but not including the blank line) into
// `req`. False when it is malformed (the listener answers 400). Pure; also the fuzz target's entry.
bool parse_request_head(std::string_view head, Request& req);

// Splits a listen address into host and port. Errors: invalid_input.
Result<std::pair<std::string, int>> parse_listen_address(std::string_view listen);

class Listener {
 public:
  // Binds and starts serving on background threads (port 0 = a free port).
  // Errors: invalid_input (address, missing on_request), unavailable (bind/listen failed).
  static Result<std::unique_ptr<Listener>> start(ListenerOptions options, RequestHandler handler);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Stops accepting, aborts connections in flight and joins every thread. Idempotent.
  void stop();
  int port() const { return m_port; }
  // The bound host as a numeric address ("127.0.0.1", "::1", "0.0.0.0").
  const std::string& host() const { return m_host; }

 private:
  Listener(int fd, std::string host, int port, ListenerOptions options, RequestHandler handler);
  void accept_loop();
  void serve(int fd, const std::string& remote);
  void reap_finished_locked();

  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  int m_listen_fd;
  std::string m_host;
  int m_port;
  ListenerOptions m_options;
  RequestHandler m_handler;
  int m_wake[2] = {-1, -1};
  std::atomic<bool> m_stopping{false};
  std::thread m_acceptor;
  std::mutex m_mu;
  std::vector<Worker> m_workers;
  std::set<int> m_open_fds;
};

}  // namespace flytecd::http
