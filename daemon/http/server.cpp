#include "daemon/http/server.hpp"

#include <cctype>
#include <exception>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/common/http/listener.hpp"
#include "daemon/common/log.hpp"
#include "daemon/common/text.hpp"
#include "daemon/http/webhooks.hpp"
#include "daemon/metrics/flytecd_metrics.hpp"

namespace flytecd::http {
namespace {

constexpr size_t k_max_reason_bytes = 500;

// The decoded value of `name` in an application/x-www-form-urlencoded query, or "".
std::string query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) != name) continue;
    if (eq == std::string_view::npos) return {};
    std::string out;
    const auto v = pair.substr(eq + 1);
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '+') {
        out += ' ';
      } else if (v[i] == '%' && i + 2 < v.size() && text::hex_value(v[i + 1]) >= 0 &&
                 text::hex_value(v[i + 2]) >= 0) {
        out += static_cast<char>(text::hex_value(v[i + 1]) * 16 + text::hex_value(v[i + 2]));
        i += 2;
      } else {
        out += v[i];
      }
    }
    return out;
  }
  return {};
}

// Free text from a client, kept in status and the log: UTF-8 (ill-formed bytes become U+FFFD),
// printable, one line, bounded — and cut on a character boundary, so a reason in any script
// stays valid JSON.
std::string clean_text(std::string_view v) {
  std::string out = text::cut_utf8(v, k_max_reason_bytes);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return out;
}

// a=1&b=x%2Fy -> {a: 1, b: x/y}; '+' is a space. Malformed escapes are kept as they are.
std::map<std::string, std::string> query_params(std::string_view q) {
  auto decode = [](std::string_view v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '+') {
        out += ' ';
      } else if (v[i] == '%' && i + 2 < v.size() &&
                 std::isxdigit(static_cast<unsigned char>(v[i + 1])) &&
                 std::isxdigit(static_cast<unsigned char>(v[i + 2]))) {
        out += static_cast<char>(std::stoi(std::string(v.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      } else {
        out += v[i];
      }
    }
    return out;
  };
  std::map<std::string, std::string> out;
  while (!q.empty()) {
    auto amp = q.find('&');
    std::string_view part = q.substr(0, amp);
    auto eq = part.find('=');
    if (!part.empty())
      out[decode(part.substr(0, eq))] =
          eq == std::string_view::npos ? "" : decode(part.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return out;
}

// Header values we echo into logs (event names, delivery ids) are attacker-controlled:
// keep a short run of harmless characters so they cannot forge log lines.
std::string loggable(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (out.size() >= 64) break;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == ':';
    out += ok ? c : '?';
  }
  return out.empty() ? "-" : out;
}

Response with_header(Response r, std::string name, std::string value) {
  r.headers.emplace_back(std::move(name), std::move(value));
  return r;
}

Response method_not_allowed(std::string_view allow) {
  return with_header(text_response(405, "method not allowed\n"), "Allow", std::string(allow));
}

}  // namespace

struct HttpServer::Impl {
  struct Route;
  // Answers from the request's head, or nullopt to read the body and call the route's `body`.
  using Head = std::optional<Response> (Impl::*)(const Route&, const Request&);
  using Body = Response (Impl::*)(const Route&, const Request&);
  // One row per endpoint: the server dispatches by (path, method) and answers 404 for an unknown
  // path, 405 with Allow for a known path asked with another method.
  struct Route {
    std::string_view method, path;
    Head head;
    Body body = nullptr;             // null: the head always answers
    std::string_view provider = {};  // webhooks: "github", "gitlab", "generic"
    bool priority = false;           // answered on the reserved probe thread
  };
  static const std::vector<Route>& routes();

  HttpOptions options;
  HttpHandlers handlers;
  metrics::FlytecdMetrics* metrics = nullptr;
  std::shared_ptr<spdlog::logger> logger;
  std::unique_ptr<Listener> listener;
  DeliveryLog deliveries;  // replayed GitHub deliveries trigger nothing

  static const Route* find(std::string_view path, std::string_view method);
  std::optional<Response> on_head(const Request& req);
  Response on_request(const Request& req);
  std::optional<Response> healthz(const Route&, const Request&);
  std::optional<Response> readyz(const Route&, const Request&);
  std::optional<Response> metrics_text(const Route&, const Request&);
  std::optional<Response> status(const Route&, const Request&);
  std::optional<Response> history(const Route&, const Request&);
  std::optional<Response> page(const Route&, const Request&);
  std::string listener_metrics() const;
  std::optional<Response> webhook_head(const Route& route, const Request& req);
  Response webhook_body(const Route& route, const Request& req);
  std::optional<Response> sync(const Route&, const Request& req);
  std::optional<Response> suspension_head(const Route& route, const Request& req);
  Response suspension(const Route& route, const Request& req);
  void record_webhook(std::string_view provider, std::string_view result, const Request& req);
};

const std::vector<HttpServer::Impl::Route>& HttpServer::Impl::routes() {
  static const std::vector<Route> k_routes = {
      {"GET", "/healthz", &Impl::healthz, nullptr, {}, true},
      {"GET", "/readyz", &Impl::readyz, nullptr, {}, true},
      {"GET", "/metrics", &Impl::metrics_text},
      {"GET", "/api/v1/status", &Impl::status},
      {"GET", "/api/v1/history", &Impl::history},
      {"POST", "/api/v1/webhooks/github", &Impl::webhook_head, &Impl::webhook_body, "github"},
      {"POST", "/api/v1/webhooks/gitlab", &Impl::webhook_head, &Impl::webhook_body, "gitlab"},
      {"POST", "/api/v1/webhooks/generic", &Impl::webhook_head, &Impl::webhook_body, "generic"},
      {"POST", "/api/v1/sync", &Impl::sync},
      {"POST", "/api/v1/suspend", &Impl::suspension_head, &Impl::suspension},
      {"POST", "/api/v1/resume", &Impl::suspension_head, &Impl::suspension},
      {"GET", "/", &Impl::page},
      {"GET", "/ui.css", &Impl::page},
      {"GET", "/ui.js", &Impl::page},
  };
  return k_routes;
}

// The row of (path, method); else the first row of the path (its method is not this one); else
// null.
const HttpServer::Impl::Route* HttpServer::Impl::find(std::string_view path,
                                                      std::string_view method) {
  const Route* of_path = nullptr;
  for (const auto& r : routes()) {
    if (r.path != path) continue;
    if (r.method == method) return &r;
    if (!of_path) of_path = &r;
  }
  return of_path;
}

std::optional<Response> HttpServer::Impl::on_head(const Request& req) {
  const Route* route = find(req.path, req.method);
  if (!route) return text_response(404, "not found\n");
  if (route->method != req.method) {
    if (!route->provider.empty()) record_webhook(route->provider, "method_not_allowed", req);
    return method_not_allowed(route->method);
  }
  try {
    return (this->*route->head)(*route, req);
  } catch (const std::exception& e) {
    logger->error("{} {}: handler failed: {}", req.method, req.path, e.what());
  } catch (...) {
    logger->error("{} {}: handler failed", req.method, req.path);
  }
  return text_response(500, "internal error\n");
}

Response HttpServer::Impl::on_request(const Request& req) {
  // on_head answered every request but those whose route reads the body (a webhook, whose body
  // must be verified, and a suspend with a body).
  const Route* route = find(req.path, req.method);
  if (!route || route->method != req.method || !route->body)
    return text_response(404, "not found\n");
  return (this->*route->body)(*route, req);
}

std::optional<Response> HttpServer::Impl::healthz(const Route&, const Request&) {
  return text_response(200, "ok");
}

std::optional<Response> HttpServer::Impl::readyz(const Route&, const Request&) {
  if (handlers.ready()) return text_response(200, "ready");
  std::string reason = handlers.not_ready_reason ? handlers.not_ready_reason() : "";
  return text_response(503, "not ready" + (reason.empty() ? "" : ": " + reason));
}

std::optional<Response> HttpServer::Impl::metrics_text(const Route&, const Request&) {
  Response r = text_response(200, handlers.metrics_text() + listener_metrics());
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return r;
}

std::optional<Response> HttpServer::Impl::status(const Route&, const Request&) {
  const auto snapshot = handlers.status();
  if (!snapshot) return text_response(503, "status not available yet\n");
  Response r;
  r.body = *snapshot;
  r.content_type = "application/json";
  return r;
}

std::optional<Response> HttpServer::Impl::history(const Route&, const Request& req) {
  if (!handlers.history) return text_response(404, "not found\n");
  auto body = handlers.history(query_params(req.query));
  if (!body)
    return text_response(body.error().code == ErrorCode::invalid_input ? 400 : 503,
                         body.error().message + "\n");
  Response r;
  r.body = std::move(*body);
  r.content_type = "application/json";
  return r;
}

std::optional<Response> HttpServer::Impl::page(const Route&, const Request& req) {
  if (!handlers.page) return text_response(404, "not found (the web page is off: http.ui)\n");
  return handlers.page(req.path, query_params(req.query));
}

// The HTTP server's own counters, appended to /metrics: slow-client defences at work show
// up as drops, not as silent probe failures.
std::string HttpServer::Impl::listener_metrics() const {
  const auto st = listener->stats();
  return "# HELP flytecd_http_connections_open Open HTTP connections.\n"
         "# TYPE flytecd_http_connections_open gauge\n"
         "flytecd_http_connections_open " +
         std::to_string(st.open) +
         "\n# HELP flytecd_http_connections_dropped_total HTTP connections dropped at a "
         "header, body, idle or write deadline (deadline) or to make room at the connection "
         "limit (evicted).\n"
         "# TYPE flytecd_http_connections_dropped_total counter\n"
         "flytecd_http_connections_dropped_total{reason=\"deadline\"} " +
         std::to_string(st.timed_out) +
         "\nflytecd_http_connections_dropped_total{reason=\"evicted\"} " +
         std::to_string(st.evicted) + "\n";
}

std::optional<Response> HttpServer::Impl::webhook_head(const Route& route, const Request& req) {
  const std::string& secret = route.provider == "github"   ? options.github_secret
                              : route.provider == "gitlab" ? options.gitlab_token
                                                           : options.generic_secret;
  if (secret.empty()) {
    record_webhook(route.provider, "disabled", req);
    return text_response(404, "receiver disabled\n");
  }
  if (!req.header("transfer-encoding").empty()) {
    record_webhook(route.provider, "bad_request", req);
    return text_response(411, "a Content-Length body is required\n");
  }
  if (req.content_length.value_or(0) > options.max_body_bytes) {
    record_webhook(route.provider, "too_large", req);
    return text_response(413,
                         "body larger than " + std::to_string(options.max_body_bytes) + " bytes\n");
  }
  return std::nullopt;  // read the body, then verify in webhook_body
}

Response HttpServer::Impl::webhook_body(const Route& route, const Request& req) {
  const bool github = route.provider == "github";
  const WebhookVerdict verdict =
      github ? verify_github(options.github_secret, req.header("x-hub-signature-256"), req.body)
      : route.provider == "gitlab"
          ? verify_gitlab(options.gitlab_token, req.header("x-gitlab-token"))
          : verify_generic_hmac(options.generic_secret, req.header("x-signature"), req.body);
  if (verdict != WebhookVerdict::accepted) {
    record_webhook(route.provider, to_string(verdict), req);
    return with_header(text_response(401, std::string(to_string(verdict)) + "\n"),
                       "WWW-Authenticate", "Signature");
  }
  if (github && !deliveries.first_seen(req.header("x-github-delivery"))) {
    record_webhook(route.provider, "replayed", req);
    return text_response(200, "delivery already received; ignored\n");
  }
  if (github && req.header("x-github-event") == "ping") {
    record_webhook(route.provider, "ping", req);
    return text_response(200, "pong\n");
  }
  record_webhook(route.provider, "accepted", req);
  handlers.trigger_sync("webhook " + std::string(route.provider));
  return text_response(202, "sync triggered\n");
}

std::optional<Response> HttpServer::Impl::sync(const Route&, const Request& req) {
  if (options.sync_token.empty()) return text_response(404, "manual sync disabled\n");
  if (!verify_bearer(options.sync_token, req.header("authorization"))) {
    logger->warn("sync request refused: bad or missing bearer token, remote={}", req.remote);
    return with_header(text_response(401, "unauthorized\n"), "WWW-Authenticate", "Bearer");
  }
  logger->info("sync requested over the API, remote={}", req.remote);
  if (!handlers.request_sync) {
    handlers.trigger_sync("api sync");
    return text_response(202, "sync triggered\n");
  }
  const uint64_t id = handlers.request_sync("api sync");
  Response r = text_response(
      202, "{\"message\":\"sync triggered\",\"request\":" + std::to_string(id) + "}\n");
  r.content_type = "application/json";
  return r;
}

// Authorized like /api/v1/sync; a suspend with a body is answered once the body is in.
std::optional<Response> HttpServer::Impl::suspension_head(const Route& route, const Request& req) {
  if (!handlers.set_suspended) return text_response(404, "not found\n");
  if (options.sync_token.empty())
    return text_response(404, "suspend/resume disabled (no sync token configured)\n");
  const char* what = route.path == "/api/v1/suspend" ? "suspend" : "resume";
  if (!verify_bearer(options.sync_token, req.header("authorization"))) {
    logger->warn("{} request refused: bad or missing bearer token, remote={}", what, req.remote);
    return with_header(text_response(401, "unauthorized\n"), "WWW-Authenticate", "Bearer");
  }
  if (req.content_length.value_or(0) > options.max_body_bytes)
    return text_response(413,
                         "body larger than " + std::to_string(options.max_body_bytes) + " bytes\n");
  if (req.content_length.value_or(0) > 0) return std::nullopt;  // read the body first
  return suspension(route, req);
}

Response HttpServer::Impl::suspension(const Route& route, const Request& req) {
  const bool suspend = route.path == "/api/v1/suspend";
  std::string reason = query_value(req.query, "reason"), client;
  std::string project = query_value(req.query, "project");
  if (!req.body.empty()) {
    const auto body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object())
      return text_response(400, "the body must be a JSON object {\"reason\": \"...\"}\n");
    for (auto [key, out] :
         {std::pair{"reason", &reason}, std::pair{"by", &client}, std::pair{"project", &project}}) {
      auto it = body.find(key);
      if (it == body.end() || it->is_null()) continue;
      if (!it->is_string()) return text_response(400, std::string(key) + " must be a string\n");
      *out = it->get<std::string>();
    }
  }
  reason = clean_text(reason);
  client = clean_text(client);
  const std::string by = (client.empty() ? "api" : client) + " (" + req.remote + ")";
  if (!project.empty() && !handlers.set_project_suspended)
    return text_response(404, "suspending one project is not supported\n");
  Result<std::string> body("");
  try {
    body = project.empty()
               ? handlers.set_suspended(suspend, reason, by)
               : handlers.set_project_suspended(suspend, clean_text(project), reason, by);
  } catch (const std::exception& e) {
    body = make_error(ErrorCode::internal, e.what());
  }
  if (!body && body.error().code == ErrorCode::invalid_input)
    return text_response(400, body.error().message + "\n");
  if (!body) {
    logger->error("{} failed: {}", suspend ? "suspend" : "resume", body.error().message);
    return text_response(500, body.error().message + "\n");
  }
  Response r;
  r.body = *body;
  r.content_type = "application/json";
  return r;
}

void HttpServer::Impl::record_webhook(std::string_view provider, std::string_view result,
                                      const Request& req) {
  if (metrics != nullptr) metrics->webhook_requests_total.with({provider, result}).inc();
  std::string_view event = provider == "github"   ? req.header("x-github-event")
                           : provider == "gitlab" ? req.header("x-gitlab-event")
                                                  : std::string_view();
  std::string_view delivery =
      provider == "github" ? req.header("x-github-delivery") : std::string_view();
  const auto level =
      result == "accepted" || result == "ping" ? spdlog::level::info : spdlog::level::warn;
  logger->log(level, "webhook provider={} result={} remote={} event={} delivery={}", provider,
              result, req.remote, loggable(event), loggable(delivery));
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(HttpOptions options, HttpHandlers handlers,
                                                      metrics::FlytecdMetrics* metrics) {
  if (!handlers.trigger_sync || !handlers.status || !handlers.ready || !handlers.metrics_text) {
    return make_error(ErrorCode::invalid_input,
                      "http: trigger_sync, status, ready and metrics_text handlers are required");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->handlers = std::move(handlers);
  impl->metrics = metrics;

  // One server per daemon; the bound address is in the first line it logs.
  impl->logger = log::get("http");

  ListenerOptions lo;
  lo.listen = impl->options.listen;
  lo.max_body_bytes = impl->options.max_body_bytes;
  lo.header_timeout = impl->options.header_timeout;
  lo.body_timeout = impl->options.body_timeout;
  lo.idle_timeout = impl->options.idle_timeout;
  lo.max_requests_per_connection = impl->options.max_requests_per_connection;
  lo.max_connections = impl->options.max_connections;
  RequestHandler rh;
  Impl* self = impl.get();  // the listener is stopped before Impl is destroyed
  rh.on_head = [self](const Request& req) { return self->on_head(req); };
  rh.on_request = [self](const Request& req) { return self->on_request(req); };
  rh.is_priority = [](const Request& req) {
    const Impl::Route* route = Impl::find(req.path, req.method);
    return route && route->priority;
  };
  auto listener = Listener::start(std::move(lo), std::move(rh));
  if (!listener) return listener.error();
  impl->listener = std::move(listener).value();

  const auto& host = impl->listener->host();
  const std::string bound = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                            std::to_string(impl->listener->port());
  const auto on_off = [](const std::string& s) { return s.empty() ? "off" : "on"; };
  impl->logger->info(
      "listening on {} (webhooks: github={} gitlab={} generic={}; api sync, suspend, resume={}; "
      "web page={}; up to {} connections)",
      bound, on_off(impl->options.github_secret), on_off(impl->options.gitlab_token),
      on_off(impl->options.generic_secret), on_off(impl->options.sync_token),
      impl->handlers.page ? "on" : "off", impl->listener->connection_limit());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

HttpServer::~HttpServer() { stop(); }

int HttpServer::port() const { return m_impl->listener->port(); }

void HttpServer::stop() { m_impl->listener->stop(); }

ListenerStats HttpServer::stats() const { return m_impl->listener->stats(); }

}  // namespace flytecd::http
