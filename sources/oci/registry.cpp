#include "sources/oci/registry.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/log.hpp"
#include "daemon/common/text.hpp"
#include "sources/oci/digest.hpp"
#include "sources/oci/manifest.hpp"

namespace flytecd::sources::oci {
namespace {

std::string registry_error_detail(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("errors") || !j["errors"].is_array() || j["errors"].empty())
    return {};
  const auto& e = j["errors"][0];
  if (!e.is_object()) return {};
  // distribution's spec makes code and message strings, but a registry (or a proxy in front of
  // one) may send anything: a non-string field is shown as its JSON, and the detail is bounded so
  // an error body cannot make the error message large.
  auto field = [&](const char* key) -> std::string {
    auto it = e.find(key);
    if (it == e.end() || it->is_null()) return {};
    return it->is_string() ? it->get<std::string>() : dump_json(*it, -1, true);
  };
  std::string code = field("code"), message = field("message");
  if (code.empty() && message.empty()) return {};
  std::string detail = code + (code.empty() || message.empty() ? "" : ": ") + message;
  constexpr std::size_t k_max_detail = 300;
  // UTF-8, cut on a character boundary: a registry's message may be CJK, or not UTF-8 at all.
  const bool cut = detail.size() > k_max_detail;
  return " (" + text::cut_utf8(detail, k_max_detail) + (cut ? "…" : "") + ")";
}

std::string url_escape_query(const std::string& s) {
  static const char* k_hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out.push_back(static_cast<char>(ch));
    } else {
      out.push_back('%');
      out.push_back(k_hex[ch >> 4]);
      out.push_back(k_hex[ch & 0xf]);
    }
  }
  return out;
}

}  // namespace

Error status_error(long status, const std::string& body, const std::string& what) {
  const std::string msg = what + ": HTTP " + std::to_string(status) + registry_error_detail(body);
  switch (status) {
    case 404:
      return make_error(ErrorCode::not_found, msg);
    case 401:
      return make_error(ErrorCode::unauthenticated, msg);
    case 403:
      return make_error(ErrorCode::permission_denied, msg);
    case 429:
      return make_error(ErrorCode::resource_exhausted, msg + " (rate limited; retries exhausted)");
    case 408:
      return make_error(ErrorCode::timeout, msg);
    default:
      break;
  }
  if (status >= 500) return make_error(ErrorCode::unavailable, msg + " (retries exhausted)");
  return make_error(ErrorCode::invalid_input, msg);
}

Result<std::pair<http::ClientResponse, Download>> download_to_file(
    const Sender& send, http::ClientRequest request, const std::filesystem::path& dest,
    uint64_t max_bytes, const std::string& what) {
  struct Sink {
    std::FILE* file = nullptr;
    Sha256 hash;
    uint64_t size = 0;
    bool too_big = false;
    bool write_failed = false;
    ~Sink() {
      if (file != nullptr) std::fclose(file);
    }
  } sink;
  const std::string path = dest.string();
  request.on_restart = [&] {
    if (sink.file != nullptr) std::fclose(sink.file);
    sink.file = std::fopen(path.c_str(), "wb");
    sink.hash.reset();
    sink.size = 0;
    sink.too_big = false;
    sink.write_failed = sink.file == nullptr;
  };
  request.on_body = [&](const char* data, size_t n) {
    if (sink.file == nullptr) return false;
    if (sink.size + n > max_bytes) {
      sink.too_big = true;
      return false;
    }
    if (std::fwrite(data, 1, n, sink.file) != n) {
      sink.write_failed = true;
      return false;
    }
    sink.hash.update(data, n);
    sink.size += n;
    return true;
  };
  auto r = send(request);
  if (sink.too_big)
    return make_error(ErrorCode::invalid_input, what + ": more than " + std::to_string(max_bytes) +
                                                    " bytes; expected at most that (limit)");
  if (sink.write_failed) return make_error(ErrorCode::internal, what + ": cannot write " + path);
  if (!r) return r.error().wrap(what);
  if (sink.file == nullptr || std::fflush(sink.file) != 0)
    return make_error(ErrorCode::internal, what + ": cannot write " + path);
  std::fclose(sink.file);
  sink.file = nullptr;
  Download d{sink.hash.finish(), sink.size};
  return std::make_pair(std::move(r).value(), d);
}

RegistryClient::RegistryClient(std::string registry, bool plain_http,
                               std::shared_ptr<http::Client> http,
                               std::optional<Credentials> credentials,
                               std::shared_ptr<TokenCache> tokens)
    : m_registry(std::move(registry)),
      m_plain_http(plain_http),
      m_http(std::move(http)),
      m_credentials(std::move(credentials)),
      m_tokens(std::move(tokens)) {}

std::string RegistryClient::base() const {
  // Docker Hub's API lives on another host than its registry name.
  const std::string host = m_registry == "docker.io" || m_registry == "index.docker.io"
                               ? "registry-1.docker.io"
                               : m_registry;
  return (m_plain_http ? "http://" : "https://") + host;
}

std::string RegistryClient::api_repository(const std::string& repo) const {
  // Docker Hub's official images ("alpine") live under "library/".
  const bool hub = m_registry == "docker.io" || m_registry == "index.docker.io";
  return hub && repo.find('/') == std::string::npos ? "library/" + repo : repo;
}

uint64_t RegistryClient::requests() const {
  std::lock_guard<std::mutex> g(m_mu);
  return m_requests;
}

Result<std::string> RegistryClient::bearer_token(const std::string& realm,
                                                 const std::string& service,
                                                 const std::string& scope, bool renew,
                                                 const FetchBounds& bounds) {
  // Per registry and identity: a registry naming another's realm and scope gets its own token.
  const std::string key = token_cache_key(m_registry, m_credentials, realm, service, scope);
  if (!renew)
    if (auto t = m_tokens->get(key, std::chrono::steady_clock::now())) return *t;
  const std::string where = "token from " + log::redact_url(realm) + " for " + scope;
  if (realm.rfind("https://", 0) != 0 && realm.rfind("http://", 0) != 0)
    return make_error(ErrorCode::invalid_input, m_registry + " names token realm '" +
                                                    log::redact_url(realm) +
                                                    "'; expected an http(s) URL");
  http::ClientRequest req;
  req.url = realm + (realm.find('?') == std::string::npos ? "?" : "&");
  if (!service.empty()) req.url += "service=" + url_escape_query(service) + "&";
  req.url += "scope=" + url_escape_query(scope);
  req.headers.push_back("Accept: application/json");
  bounds.apply(req);
  if (m_credentials && !m_credentials->empty()) {
    // Credentials go to the realm only over TLS, unless the registry itself is plain http
    // (a loopback test registry): then the realm may be too.
    if (realm.rfind("http://", 0) == 0 && !m_plain_http)
      return make_error(ErrorCode::permission_denied,
                        "refusing to send credentials for " + m_registry +
                            " over plain http to token realm " + log::redact_url(realm));
    if (m_credentials->identity_token) {
      // An identity token (a credential helper's "<token>" answer) is an OAuth2 refresh token:
      // traded at the realm by POST, as Docker does; it never goes out as Basic.
      req.method = "POST";
      req.url = realm;
      req.headers.push_back("Content-Type: application/x-www-form-urlencoded");
      req.body = "grant_type=refresh_token&client_id=flytecd&refresh_token=" +
                 url_escape_query(m_credentials->password) +
                 (service.empty() ? "" : "&service=" + url_escape_query(service)) +
                 "&scope=" + url_escape_query(scope);
    } else {
      req.headers.push_back("Authorization: Basic " +
                            base64_encode(m_credentials->username + ":" + m_credentials->password));
    }
  }
  auto r = m_http->execute(req);
  {
    std::lock_guard<std::mutex> g(m_mu);
    m_requests += r ? static_cast<uint64_t>(r->attempts) : 1;
  }
  if (!r) return r.error().wrap(where);
  if (r->status == 401 && m_credentials)
    return make_error(ErrorCode::unauthenticated,
                      where + ": HTTP 401: the token server rejected the credentials from " +
                          m_credentials->source);
  if (r->status != 200) return status_error(r->status, r->body, where);
  auto token = parse_token_response(r->body, std::chrono::steady_clock::now());
  if (!token) return token.error().wrap(where);
  std::string value = token->value;
  m_tokens->put(key, std::move(token).value());
  return value;
}

Result<http::ClientResponse> RegistryClient::send(const std::string& repo,
                                                  http::ClientRequest request,
                                                  const FetchBounds& bounds) {
  bounds.apply(request);
  const std::string default_scope = "repository:" + api_repository(repo) + ":pull";
  std::string scope = default_scope;
  bool sent_basic = false, fresh_token = false;
  for (int round = 0; round < 3; ++round) {
    http::ClientRequest req = request;
    Scheme scheme;
    std::string realm, service;
    {
      std::lock_guard<std::mutex> g(m_mu);
      scheme = m_scheme;
      realm = m_realm;
      service = m_service;
    }
    if (scheme == Scheme::basic && m_credentials && !m_credentials->identity_token) {
      req.headers.push_back("Authorization: Basic " +
                            base64_encode(m_credentials->username + ":" + m_credentials->password));
      sent_basic = true;
    } else if (scheme == Scheme::bearer) {
      auto token = bearer_token(realm, service, scope, false, bounds);
      if (!token) return token.error();
      req.headers.push_back("Authorization: Bearer " + *token);
    }
    auto r = m_http->execute(req);
    {
      std::lock_guard<std::mutex> g(m_mu);
      m_requests += r ? static_cast<uint64_t>(r->attempts) : 1;
      if (r && r->status != 401 && m_scheme == Scheme::unknown) m_scheme = Scheme::none;
    }
    if (!r || r->status != 401) return r;

    const auto challenges = parse_www_authenticate(r->header("www-authenticate"));
    const Challenge* bearer = nullptr;
    const Challenge* basic = nullptr;
    for (const auto& c : challenges) {
      if (c.scheme == "bearer" && bearer == nullptr) bearer = &c;
      if (c.scheme == "basic" && basic == nullptr) basic = &c;
    }
    const std::string who = m_credentials ? "credentials from " + m_credentials->source
                                          : std::string("anonymous access");
    if (bearer != nullptr) {
      const std::string want =
          bearer->param("scope").empty() ? default_scope : bearer->param("scope");
      if (fresh_token && want == scope) {
        const bool scope_error = bearer->param("error") == "insufficient_scope";
        return make_error(
            scope_error ? ErrorCode::permission_denied : ErrorCode::unauthenticated,
            m_registry + " rejected a fresh bearer token for " + scope + " (" + who + ")" +
                (bearer->param("error").empty() ? "" : ": " + bearer->param("error")));
      }
      scope = want;
      {
        std::lock_guard<std::mutex> g(m_mu);
        m_scheme = Scheme::bearer;
        m_realm = bearer->param("realm");
        m_service = bearer->param("service");
      }
      auto token =
          bearer_token(bearer->param("realm"), bearer->param("service"), scope, true, bounds);
      if (!token) return token.error();
      fresh_token = true;
      continue;
    }
    if (basic != nullptr) {
      if (!m_credentials)
        return make_error(ErrorCode::unauthenticated,
                          m_registry + " requires Basic credentials and none were found (set " +
                              registry_env_var(m_registry) +
                              "=user:password, or add it to a docker config.json / "
                              "REGISTRY_AUTH_FILE)");
      if (m_credentials->identity_token)
        return make_error(ErrorCode::unauthenticated,
                          m_registry + " asks for Basic credentials; the identity token from " +
                              m_credentials->source +
                              " can only be traded at a Bearer token realm");
      if (sent_basic)
        return make_error(ErrorCode::unauthenticated,
                          m_registry + ": HTTP 401: the registry rejected the " + who);
      std::lock_guard<std::mutex> g(m_mu);
      m_scheme = Scheme::basic;
      continue;
    }
    return make_error(ErrorCode::unauthenticated,
                      m_registry + ": HTTP 401 with no Basic or Bearer challenge (" + who + ")");
  }
  return make_error(ErrorCode::unauthenticated, m_registry + ": authentication did not converge");
}

Result<RegistryClient::ManifestBytes> RegistryClient::get_manifest(const std::string& repo,
                                                                   const std::string& reference,
                                                                   uint64_t max_bytes,
                                                                   const FetchBounds& bounds) {
  const std::string what = "manifest " + m_registry + "/" + repo + ":" + reference;
  http::ClientRequest req;
  req.url = base() + "/v2/" + api_repository(repo) + "/manifests/" + reference;
  req.headers.push_back(manifest_accept_header());
  req.max_body = max_bytes;
  auto r = send(repo, req, bounds);
  if (!r) {
    Error e = r.error();
    if (e.message.rfind("response body exceeds", 0) == 0)
      e.message += " (max_manifest_bytes); expected a manifest at most that large";
    return e.wrap(what);
  }
  if (r->status != 200) {
    if (r->status == 404)
      return make_error(ErrorCode::not_found, what + ": not found (HTTP 404" +
                                                  registry_error_detail(r->body) +
                                                  "); check the repository and tag");
    return status_error(r->status, r->body, what);
  }
  ManifestBytes m;
  m.bytes = std::move(r->body);
  m.digest = sha256_digest(m.bytes);
  m.content_type = r->header("content-type");
  const std::string announced = r->header("docker-content-digest");
  if (!announced.empty() && announced.rfind("sha256:", 0) == 0 && announced != m.digest)
    return make_error(ErrorCode::invalid_input,
                      what + ": content hashes to " + m.digest + ", expected " + announced +
                          " (Docker-Content-Digest; registry returned tampered or corrupt data)");
  if (reference.rfind("sha256:", 0) == 0 && reference != m.digest)
    return make_error(ErrorCode::invalid_input,
                      what + ": content hashes to " + m.digest + ", expected " + reference +
                          " (registry returned tampered or corrupt data)");
  return m;
}

Result<std::optional<std::string>> RegistryClient::get_referrers(const std::string& repo,
                                                                 const std::string& digest,
                                                                 uint64_t max_bytes,
                                                                 const FetchBounds& bounds) {
  const std::string what = "referrers of " + m_registry + "/" + repo + "@" + digest;
  http::ClientRequest req;
  req.url = base() + "/v2/" + api_repository(repo) + "/referrers/" + digest;
  req.headers.push_back("Accept: application/vnd.oci.image.index.v1+json");
  req.max_body = max_bytes;
  auto r = send(repo, req, bounds);
  if (!r) return r.error().wrap(what);
  if (r->status == 404) return std::optional<std::string>();
  if (r->status != 200) return status_error(r->status, r->body, what);
  return std::optional<std::string>(std::move(r->body));
}

Status RegistryClient::get_blob(const std::string& repo, const std::string& digest, uint64_t size,
                                const std::filesystem::path& dest, const FetchBounds& bounds) {
  const std::string what = "blob " + digest + " from " + m_registry + "/" + repo;
  http::ClientRequest req;
  req.url = base() + "/v2/" + api_repository(repo) + "/blobs/" + digest;
  Sender sender = [&](const http::ClientRequest& rq) { return send(repo, rq, bounds); };
  auto r = download_to_file(sender, req, dest, size, what);
  if (!r) {
    Error e = r.error();
    if (e.code == ErrorCode::invalid_input && e.message.find("more than") != std::string::npos)
      e.message = what + ": more than the " + std::to_string(size) +
                  " bytes the manifest declares (registry returned tampered or corrupt data)";
    return e;
  }
  const auto& [resp, got] = r.value();
  if (resp.status != 200) {
    if (resp.status == 404)
      return make_error(ErrorCode::not_found,
                        what + ": not found (HTTP 404" + registry_error_detail(resp.body) + ")");
    return status_error(resp.status, resp.body, what);
  }
  if (got.size != size)
    return make_error(ErrorCode::invalid_input,
                      what + ": received " + std::to_string(got.size) + " bytes, expected " +
                          std::to_string(size) + " (registry returned truncated or corrupt data)");
  if (got.digest != digest)
    return make_error(ErrorCode::invalid_input,
                      what + ": content hashes to " + got.digest + ", expected " + digest +
                          " (registry returned tampered or corrupt data)");
  return ok_status();
}

}  // namespace flytecd::sources::oci
