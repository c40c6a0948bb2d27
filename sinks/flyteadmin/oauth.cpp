#include "sinks/flyteadmin/oauth.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/common/log.hpp"

namespace flytecd::sinks::flyteadmin {
namespace {

size_t write_cb(char* ptr, size_t size, size_t n, void* user) {
  auto* out = static_cast<std::string*>(user);
  size_t bytes = size * n;
  if (out->size() + bytes > (1u << 20)) return 0;  // bound responses to 1 MiB
  out->append(ptr, bytes);
  return bytes;
}

struct HttpResponse {
  long status = 0;
  std::string body;
};

std::string url_encode(CURL* c, const std::string& s) {
  char* e = curl_easy_escape(c, s.c_str(), static_cast<int>(s.size()));
  std::string out = e ? e : "";
  curl_free(e);
  return out;
}

Result<HttpResponse> http(const AdminConfig& cfg, const std::string& url,
                          const std::string* form_body, const std::string& basic_user,
                          const std::string& basic_password) {
  CURL* c = curl_easy_init();
  if (!c) return make_error(ErrorCode::internal, "oauth: curl init failed");
  HttpResponse resp;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp.body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(cfg.per_rpc_timeout_ms));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!cfg.ca_cert_file_path.empty())
    curl_easy_setopt(c, CURLOPT_CAINFO, cfg.ca_cert_file_path.c_str());
  if (form_body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, form_body->c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(form_body->size()));
  }
  if (!basic_user.empty()) {
    // RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic encoding.
    std::string user = url_encode(c, basic_user), pass = url_encode(c, basic_password);
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, user.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, pass.c_str());
  }
  struct curl_slist* headers = curl_slist_append(nullptr, "Accept: application/json");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK)
    return make_error(rc == CURLE_OPERATION_TIMEDOUT ? ErrorCode::timeout : ErrorCode::unavailable,
                      "GET/POST " + log::redact_url(url) + ": " + curl_easy_strerror(rc));
  return resp;
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

TokenSource::TokenSource(AdminConfig cfg) : m_cfg(std::move(cfg)) {}

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
    auto r = http(m_cfg, base + "/.well-known/oauth-authorization-server", nullptr, "", "");
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
    auto r = http(m_cfg, base + "/config/v1/flyte_client", nullptr, "", "");
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
  CURL* enc = curl_easy_init();
  std::string body = "grant_type=client_credentials";
  if (!scope.empty()) body += "&scope=" + url_encode(enc, scope);
  if (!m_audience.empty()) body += "&audience=" + url_encode(enc, m_audience);
  curl_easy_cleanup(enc);
  auto r = http(m_cfg, m_token_url, &body, m_cfg.client_id, *secret);
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
