#pragma once

// The daemon's HTTP surface: probes, /metrics, the status API, webhook receivers and the
// manual sync trigger. Served on background threads by http::Listener.
//
//   GET  /healthz                  200 "ok"
//   GET  /readyz                   200 "ready" | 503 "not ready: <reason>"
//   GET  /metrics                  Prometheus text, version 0.0.4
//   GET  /api/v1/status            application/json from HttpHandlers::status
//   POST /api/v1/webhooks/github   X-Hub-Signature-256 HMAC; "ping" => 200, else 202 + sync
//   POST /api/v1/webhooks/gitlab   X-Gitlab-Token
//   POST /api/v1/webhooks/generic  X-Signature: sha256=<hex HMAC>
//   POST /api/v1/sync              Authorization: Bearer <sync token> => 202 + sync
//
// A receiver whose secret is empty is disabled (404). Bad or missing signatures get 401 and
// never trigger a sync; bodies over max_body_bytes get 413 before they are read. Every
// webhook request is counted in flytecd_webhook_requests_total{provider,result} and logged
// as one line (provider, result, remote address) — never the body or a secret.

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "daemon/common/result.hpp"

namespace flytecd::metrics {
struct FlytecdMetrics;
}

namespace flytecd::http {

class Listener;

struct HttpOptions {
  std::string listen = "127.0.0.1:8080";  // "host:port", ":port" (all IPv4), "[v6]:port"
  size_t max_body_bytes = 1 << 20;
  // Already-read secret values (from files or the environment); empty = receiver disabled.
  std::string github_secret, gitlab_token, generic_secret, sync_token;
  // Whole-request deadline (head + body) per connection; slow clients get 408.
  std::chrono::milliseconds request_timeout{10000};
  size_t max_connections = 32;
};

// Callbacks run on server threads, concurrently: they must be thread-safe and must not block
// for long (trigger_sync should only nudge the scheduler).
struct HttpHandlers {
  std::function<void(const std::string& reason)> trigger_sync;  // "webhook github", "api sync"
  std::function<nlohmann::json()> status;                       // body of /api/v1/status
  std::function<bool()> ready;                                  // /readyz
  std::function<std::string()> metrics_text;                    // body of /metrics
  // Optional: why the daemon is not ready, for the 503 body of /readyz.
  std::function<std::string()> not_ready_reason;
};

class HttpServer {
 public:
  // Binds options.listen (port 0 = a free port) and serves until stop(). `metrics` may be
  // null. Errors: invalid_input (address, missing handler), unavailable (cannot listen).
  static Result<std::unique_ptr<HttpServer>> start(HttpOptions options, HttpHandlers handlers,
                                                   metrics::FlytecdMetrics* metrics);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the chosen one when listening on port 0).
  int port() const;
  // Stops accepting, aborts requests in flight and joins the server threads. Idempotent.
  void stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace flytecd::http
