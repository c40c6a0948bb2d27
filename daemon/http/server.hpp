#pragma once

// The daemon's HTTP surface: probes, /metrics, the status API, webhook receivers and the
// manual sync trigger. Served on background threads by http::Listener.
//
//   GET  /healthz                  200 "ok"
//   GET  /readyz                   200 "ready" | 503 "not ready: <reason>"
//   GET  /metrics                  Prometheus text, version 0.0.4
//   GET  /api/v1/status            application/json, the snapshot from HttpHandlers::status
//   POST /api/v1/webhooks/github   X-Hub-Signature-256 HMAC; "ping" => 200, else 202 + sync
//   POST /api/v1/webhooks/gitlab   X-Gitlab-Token
//   POST /api/v1/webhooks/generic  X-Signature: sha256=<hex HMAC>
//   POST /api/v1/sync              Authorization: Bearer <sync token> => 202 + sync,
//                                  {"message": "sync triggered", "request": N} (the request's
//                                  number: status's syncServed reaches N once a pass served it)
//   POST /api/v1/suspend           same token; reason from ?reason= or a JSON body
//                                  {"reason": "...", "by": "..."} => 200 + the suspension (JSON);
//                                  with ?project=P or {"project": "P"} only that project's writes
//   POST /api/v1/resume            same token => 200 {"suspended": null} + sync; with a project,
//                                  that project's writes
//   GET  /, /ui.css, /ui.js        the read-only web page and its assets (HttpHandlers::page;
//                                  404 when it is off: http.ui false)
//
// /healthz and /readyz run on a reserved handler thread, so they answer while every other
// handler is busy; connections are cheap (one event thread parses them all) and slow ones
// are dropped at their header/body deadline, so slow or half-open clients cannot starve the
// probes. Keep-alive is bounded by max_requests_per_connection and idle_timeout.
//
// A receiver whose secret is empty is disabled (404). Bad or missing signatures get 401 and
// never trigger a sync; bodies over max_body_bytes get 413 before they are read. Every
// webhook request is counted in flytecd_webhook_requests_total{provider,result} and logged
// as one line (provider, result, remote address) — never the body or a secret.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "daemon/common/http/listener.hpp"
#include "daemon/common/result.hpp"

namespace flytecd::metrics {
struct FlytecdMetrics;
}

namespace flytecd::http {

struct HttpOptions {
  std::string listen = "127.0.0.1:8080";  // "host:port", ":port" (all IPv4), "[v6]:port"
  size_t max_body_bytes = 1 << 20;
  // Already-read secret values (from files or the environment); empty = receiver disabled.
  std::string github_secret, gitlab_token, generic_secret, sync_token;
  // Per-connection deadlines (see http::ListenerOptions): the head must arrive within
  // header_timeout, the body within body_timeout; slow clients get 408 and are dropped.
  std::chrono::milliseconds header_timeout{5000};
  std::chrono::milliseconds body_timeout{10000};
  std::chrono::milliseconds idle_timeout{5000};  // keep-alive between requests
  size_t max_requests_per_connection = 100;
  size_t max_connections = 4096;  // past it the oldest unfinished head is dropped, not a 503
};

// Callbacks run on server threads, concurrently: they must be thread-safe and must not block
// for long (trigger_sync should only nudge the scheduler).
struct HttpHandlers {
  std::function<void(const std::string& reason)> trigger_sync;  // "webhook github", "api sync"
  // Optional: POST /api/v1/sync through this one instead, which returns the request's number
  // (answered in the 202 body); trigger_sync when unset.
  std::function<uint64_t(const std::string& reason)> request_sync;
  // The rendered JSON body of /api/v1/status. Return the same snapshot until the status
  // changes (render once per change, not per request): a burst of readers then costs a
  // pointer copy each.
  std::function<std::shared_ptr<const std::string>()> status;
  std::function<bool()> ready;                // /readyz
  std::function<std::string()> metrics_text;  // body of /metrics
  // Optional: why the daemon is not ready, for the 503 body of /readyz.
  std::function<std::string()> not_ready_reason;
  // Optional: GET /api/v1/history?limit=N&object=KEY&project=P, the JSON body (404 when unset).
  // Parameters arrive decoded; unknown ones are ignored.
  std::function<Result<std::string>(const std::map<std::string, std::string>& params)> history;
  // Optional (absent: /api/v1/suspend and /resume are 404). suspend: true to suspend (with the
  // reason and who asked), false to resume. Returns the JSON body of the new state, or an error
  // (e.g. the state could not be persisted: 500).
  std::function<Result<std::string>(bool suspend, const std::string& reason, const std::string& by)>
      set_suspended;
  // Optional (absent: 404): GET of the web page's paths ("/", "/ui.css", "/ui.js") with the decoded
  // query; the response whole, its security headers included (daemon/run/page.hpp).
  std::function<Response(const std::string& path, const std::map<std::string, std::string>& params)>
      page;
  // Optional (absent: a suspend or resume naming a project is 404): one project's writes.
  // Errors: invalid_input (a bad project id: 400), others 500.
  std::function<Result<std::string>(bool suspend, const std::string& project,
                                    const std::string& reason, const std::string& by)>
      set_project_suspended;
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
  // Connection and request counters (open connections, deadline drops, evictions).
  ListenerStats stats() const;

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace flytecd::http
