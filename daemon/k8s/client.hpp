#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "daemon/common/http/client.hpp"
#include "daemon/common/result.hpp"
#include "daemon/k8s/settings.hpp"

namespace flytecd::k8s {

struct Response {
  long status = 0;
  std::string body;
};

// A minimal Kubernetes REST client over HTTPS (the shared http::Client): bearer token from a file
// (re-read on every request, so projected-token rotation works), server verified against the CA
// file, no redirects, a deadline per call. Thread-safe. The token never reaches logs or error
// messages.
class Client {
 public:
  // `settings` must be resolved (resolve_in_cluster). Errors: the CA file is unreadable.
  static Result<std::unique_ptr<Client>> create(const Settings& settings);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // One request to `path` (e.g. "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x").
  // Any HTTP status is a successful Response; transport failures are unavailable/timeout
  // errors, an unreadable token file is unauthenticated.
  Result<Response> request(std::string_view method, const std::string& path,
                           const std::string& body, const std::string& content_type,
                           int timeout_ms) const;

  const std::string& api_server() const { return m_settings.api_server; }
  const Settings& settings() const { return m_settings; }

 private:
  explicit Client(Settings s);
  Settings m_settings;
  std::unique_ptr<http::Client> m_http;  // thread-safe; pooled connections
};

// A Kubernetes Status body's message (or the raw body, shortened) for error texts.
std::string status_message(const Response& r);

// Maps an HTTP status to an error code (409 conflict, 404 not_found, 401/403, 429/5xx retryable).
ErrorCode code_for_status(long status);

}  // namespace flytecd::k8s
