#include "sinks/flyteadmin/oauth.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/common/http/client.hpp"
#include "daemon/common/log.hpp"

namespace flytecd::sinks::flyteadmin {
namespace {

// Discovery, client config and token requests: no redirects (a token request must not be
// re-sent elsewhere), no retries (the sink retries the RPC that needed the token), bodies
// bounded to 1 MiB.
Result<http::ClientResponse> send(http::Client& client, const std::string& url,
                                  const std::string* form_body, const std::string& basic_user,
                                  const std::string& basic_password) {
  http::ClientRequest req;
  req.method = form_body != nullptr ? "POST" : "GET";
  req.url = url;
  req.headers.push_back("Accept: application/json");
  if (form_body != nullptr) {
    req.headers.push_back("Content-Type: application/x-www-form-urlencoded");
    req.body = *form_body;
  }
  if (!basic_user.empty()) {
    // RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic encoding.
    req.headers.push_back(
        "Authorization: Basic " +
        http::base64(http::url_encode(basic_user) + ":" + http::url_encode(basic_password)));
  }
  req.max_body = 1u << 20;
  auto r = client.execute(req);
  if (!r) return r.error().wrap("GET/POST " + log::redact_url(url));
  return r;
}

}  // namespace

std::string http_base_from_endpoint(const std::string& endpoint, bool insecure) {
  std::string host = endpoint;
  for (const char* prefix : {"dns:///", "dns:", "passthrough:///", "https://", "http://"})
    if (host.rfind(prefix, 0) == 0) host = host.substr(std::string(prefix).size());
  while (!host.empty() && host.back() == '/') host.pop_back();
  return (insecure ? "http://" : "https://") + host;
}

Status check_token_url(const std::string& token_url, bool insecure, bool* plaintext) {
  *plaintext = false;
  constexpr std::string_view k_http = "http://";
  if (token_url.compare(0, k_http.size(), k_http) != 0) return ok_status();
  std::string host = token_url.substr(k_http.size());
  host = host.substr(0, host.find_first_of("/?#"));
  if (auto at = host.rfind('@'); at != std::string::npos) host = host.substr(at + 1);
  if (!host.empty() && host.front() == '[')
    host = host.substr(1, host.find(']') - 1);
  else
    host = host.substr(0, host.find(':'));
  const bool ipv4_loopback =
      host.rfind("127.", 0) == 0 && host.find_first_not_of("0123456789.") == std::string::npos;
  const bool loopback = host == "localhost" || host == "::1" || ipv4_loopback;
  if (!loopback && !insecure)
    return make_error(ErrorCode::invalid_input,
                      "oauth: token endpoint " + log::redact_url(token_url) +
                          " is plain http: the client secret would cross the network "
                          "unencrypted; expected an https:// token URL (admin.tokenUrl or "
                          "discovery), or admin.insecure: true for a deliberate plaintext setup");
  *plaintext = true;
  return ok_status();
}

namespace {

http::ClientOptions client_options(const AdminConfig& cfg) {
  http::ClientOptions o;
  o.ca_file = cfg.ca_cert_file_path;
  o.total_timeout = std::chrono::milliseconds(cfg.per_rpc_timeout_ms);
  return o;
}

}  // namespace

TokenSource::TokenSource(AdminConfig cfg)
    : m_cfg(std::move(cfg)), m_http(std::make_unique<http::Client>(client_options(m_cfg))) {}

TokenSource::~TokenSource() = default;

Status TokenSource::discover_locked() {
  if (m_discovered) return ok_status();
  const std::string base = m_cfg.http_endpoint.empty()
                               ? http_base_from_endpoint(m_cfg.endpoint, m_cfg.insecure)
                               : m_cfg.http_endpoint;
  m_scopes = m_cfg.scopes;
  m_audience = m_cfg.audience;
  m_metadata_key = m_cfg.authorization_header;
  m_token_url = m_cfg.token_url;
  if (m_token_url.empty()) {
    auto r = send(*m_http, base + "/.well-known/oauth-authorization-server", nullptr, "", "");
    if (!r) return r.error().wrap("oauth: discovery");
    if (r->status != 200)
      return make_error(ErrorCode::unavailable,
                        "oauth: discovery at " + log::redact_url(base) +
                            "/.well-known/oauth-authorization-server returned HTTP " +
                            std::to_string(r->status));
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (!j.is_object() || !j.contains("token_endpoint") || !j["token_endpoint"].is_string())
      return make_error(ErrorCode::invalid_input,
                        "oauth: discovery document has no token_endpoint");
    m_token_url = j["token_endpoint"].get<std::string>();
  }
  bool plaintext = false;
  if (auto s = check_token_url(m_token_url, m_cfg.insecure, &plaintext); !s) return s;
  if (plaintext)
    log::get("oauth")->warn(
        "token endpoint {} is plain http: the client secret is sent unencrypted (allowed: {})",
        log::redact_url(m_token_url), m_cfg.insecure ? "admin.insecure" : "loopback host");
  if (m_metadata_key.empty() || m_scopes.empty()) {
    // Public client config tells which metadata key FlyteAdmin reads and its default scopes.
    auto r = send(*m_http, base + "/config/v1/flyte_client", nullptr, "", "");
    // A transient failure is not cached: defaults would stick for the sink's lifetime. A 404
    // means an admin without the endpoint: use the defaults.
    if (!r) return r.error().wrap("oauth: /config/v1/flyte_client");
    if (r->status == 429 || r->status >= 500)
      return make_error(ErrorCode::unavailable, "oauth: /config/v1/flyte_client returned HTTP " +
                                                    std::to_string(r->status));
    if (r->status == 200) {
      auto j = nlohmann::json::parse(r->body, nullptr, false);
      if (j.is_object()) {
        if (m_metadata_key.empty() && j.contains("authorization_metadata_key") &&
            j["authorization_metadata_key"].is_string())
          m_metadata_key = j["authorization_metadata_key"].get<std::string>();
        if (m_scopes.empty() && j.contains("scopes") && j["scopes"].is_array())
          for (const auto& s : j["scopes"])
            if (s.is_string()) m_scopes.push_back(s.get<std::string>());
        if (m_audience.empty() && j.contains("audience") && j["audience"].is_string())
          m_audience = j["audience"].get<std::string>();
      }
    }
  }
  if (m_metadata_key.empty()) m_metadata_key = "flyte-authorization";
  std::transform(m_metadata_key.begin(), m_metadata_key.end(), m_metadata_key.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  m_discovered = true;
  return ok_status();
}

Result<std::string> TokenSource::metadata_key() {
  std::lock_guard<std::mutex> lock(m_mu);
  if (auto s = discover_locked(); !s) return s.error();
  return m_metadata_key;
}

void TokenSource::invalidate(const std::string& rejected) {
  std::lock_guard<std::mutex> lock(m_mu);
  // Only the token that was rejected: another thread may already hold a fresh one.
  if (!m_token.empty() && "Bearer " + m_token == rejected) m_token.clear();
}

Result<std::string> TokenSource::authorization() {
  std::lock_guard<std::mutex> lock(m_mu);
  if (!m_token.empty() && std::chrono::steady_clock::now() < m_expires) return "Bearer " + m_token;
  if (auto s = discover_locked(); !s) return s.error();
  auto secret = read_client_secret(m_cfg);
  if (!secret) return secret.error();
  std::string scope;
  for (const auto& s : m_scopes) scope += (scope.empty() ? "" : " ") + s;
  std::string body = "grant_type=client_credentials";
  if (!scope.empty()) body += "&scope=" + http::url_encode(scope);
  if (!m_audience.empty()) body += "&audience=" + http::url_encode(m_audience);
  auto r = send(*m_http, m_token_url, &body, m_cfg.client_id, *secret);
  ++m_fetches;
  if (!r) return r.error().wrap("oauth: token request");
  if (r->status != 200) {
    auto code = r->status == 401 || r->status == 400   ? ErrorCode::unauthenticated
                : r->status == 429 || r->status >= 500 ? ErrorCode::unavailable
                                                       : ErrorCode::permission_denied;
    return make_error(code, "oauth: token endpoint " + log::redact_url(m_token_url) +
                                " returned HTTP " + std::to_string(r->status) + " for client '" +
                                m_cfg.client_id + "'");
  }
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object() || !j.contains("access_token") || !j["access_token"].is_string())
    return make_error(ErrorCode::unauthenticated, "oauth: token response has no access_token");
  m_token = j["access_token"].get<std::string>();
  long long expires_in = 3600;
  if (j.contains("expires_in") && j["expires_in"].is_number())
    expires_in = j["expires_in"].get<long long>();
  // Refresh a little early: 10% of the lifetime, at most 60 s.
  long long margin = std::min<long long>(60, expires_in / 10);
  m_expires = std::chrono::steady_clock::now() +
              std::chrono::seconds(std::max<long long>(0, expires_in - margin));
  return "Bearer " + m_token;
}

}  // namespace flytecd::sinks::flyteadmin
