#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/common/http/client.hpp"
#include "daemon/common/result.hpp"
#include "sinks/flyteadmin/config.hpp"

namespace flytecd::sinks::flyteadmin {

// OAuth2 client-credentials tokens for FlyteAdmin, as flytectl's ClientSecret flow gets them:
// token URL from config or discovery (/.well-known/oauth-authorization-server), scopes/audience
// and the gRPC metadata key from /config/v1/flyte_client. Tokens are cached until shortly
// before expiry. Thread-safe. The client secret never appears in errors or logs.
class TokenSource {
 public:
  explicit TokenSource(AdminConfig cfg);
  ~TokenSource();

  // "Bearer <token>" for the authorization metadata; fetches or refreshes as needed.
  Result<std::string> authorization();
  // The metadata key to send it in (lower-case; default "flyte-authorization").
  Result<std::string> metadata_key();
  // Forget the cached token if it is the one FlyteAdmin rejected (after UNAUTHENTICATED).
  void invalidate(const std::string& rejected_authorization);
  int fetch_count() const { return m_fetches; }

 private:
  Status discover_locked();
  AdminConfig m_cfg;
  std::unique_ptr<http::Client> m_http;
  std::mutex m_mu;
  bool m_discovered = false;
  std::string m_token_url, m_metadata_key, m_audience;
  std::vector<std::string> m_scopes;
  std::string m_token;
  std::chrono::steady_clock::time_point m_expires{};
  std::atomic<int> m_fetches{0};
};

// The HTTPS base URL for discovery derived from a gRPC endpoint ("dns:///h:p" -> "https://h:p").
std::string http_base_from_endpoint(const std::string& endpoint, bool insecure);

// Whether the client secret may be sent to `token_url`. https:// always; plain http:// only to
// a loopback host (a sidecar or a test) or with admin.insecure (a deliberate plaintext setup) —
// *plaintext is set so the caller can warn. Errors: invalid_input for any other http:// URL,
// naming the URL (redacted) and what to change. Pure.
Status check_token_url(const std::string& token_url, bool insecure, bool* plaintext);

}  // namespace flytecd::sinks::flyteadmin
