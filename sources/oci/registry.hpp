#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "daemon/common/http/client.hpp"
#include "daemon/common/result.hpp"
#include "sources/oci/auth.hpp"

namespace flytecd::sources::oci {

// What a streamed download produced.
struct Download {
  std::string digest;  // sha256 of the bytes received
  uint64_t size = 0;
};

// What bounds every request of one package fetch: one deadline over all of them (manifests,
// tokens, the blob, their retries) and the caller's cancel flag (the pass's: SIGTERM, leadership
// lost), which aborts a transfer in flight.
struct FetchBounds {
  std::chrono::steady_clock::time_point deadline{};  // the epoch: only the client's timeouts
  const std::atomic<bool>* cancel = nullptr;
  void apply(http::ClientRequest& r) const {
    r.deadline = deadline;
    r.cancel = cancel;
  }
};

using Sender = std::function<Result<http::ClientResponse>(const http::ClientRequest&)>;

// Streams a GET of `request.url` into `dest` (truncated on every retry or redirect), hashing as
// it goes and stopping as soon as more than `max_bytes` arrive. `what` prefixes messages.
// Errors: the sender's, invalid_input when the body exceeds max_bytes, internal on disk errors.
// Non-2xx statuses are returned as the response for the caller to map.
Result<std::pair<http::ClientResponse, Download>> download_to_file(
    const Sender& send, http::ClientRequest request, const std::filesystem::path& dest,
    uint64_t max_bytes, const std::string& what);

// The error for a final non-success status: 404 not_found, 401 unauthenticated, 403
// permission_denied, 429 resource_exhausted, 408 timeout, 5xx unavailable, other invalid_input;
// the registry's own error code/message (distribution's {"errors": […]}) is quoted. Pure.
Error status_error(long status, const std::string& body, const std::string& what);

// One registry (host[:port]): the distribution API over http(s) with anonymous, Basic or Bearer
// auth as the registry's WWW-Authenticate challenge asks. Thread-safe.
class RegistryClient {
 public:
  RegistryClient(std::string registry, bool plain_http, std::shared_ptr<http::Client> http,
                 std::optional<Credentials> credentials, std::shared_ptr<TokenCache> tokens);

  struct ManifestBytes {
    std::string bytes;
    std::string digest;  // sha256 of bytes (checked against Docker-Content-Digest and a pin)
    std::string content_type;
  };

  // GET /v2/<repo>/manifests/<tag|digest> with every manifest type accepted. Errors: not_found
  // (missing tag/repository), unauthenticated, permission_denied, retryable codes, and
  // invalid_input for oversized or tampered content.
  Result<ManifestBytes> get_manifest(const std::string& repo, const std::string& reference,
                                     uint64_t max_bytes, const FetchBounds& bounds = {});

  // GET /v2/<repo>/blobs/<digest> into `dest`, verifying size and sha256 while streaming.
  // Errors as get_manifest; invalid_input on any size or digest mismatch.
  Status get_blob(const std::string& repo, const std::string& digest, uint64_t size,
                  const std::filesystem::path& dest, const FetchBounds& bounds = {});

  // GET /v2/<repo>/referrers/<digest> (OCI distribution 1.1): the image index of the manifests
  // whose subject is `digest`, or nullopt when the registry has no referrers API (404; the
  // caller falls back to the "sha256-<hex>" tag). Errors as get_manifest.
  Result<std::optional<std::string>> get_referrers(const std::string& repo,
                                                   const std::string& digest, uint64_t max_bytes,
                                                   const FetchBounds& bounds = {});

  // Requests sent (including retries, redirects and token requests), for tests and figures.
  uint64_t requests() const;
  const std::string& name() const { return m_registry; }

 private:
  // Sends with the current auth and answers one 401 challenge (Basic or Bearer) by retrying.
  Result<http::ClientResponse> send(const std::string& repo, http::ClientRequest request,
                                    const FetchBounds& bounds);
  Result<std::string> bearer_token(const std::string& realm, const std::string& service,
                                   const std::string& scope, bool renew, const FetchBounds& bounds);
  std::string base() const;
  std::string api_repository(const std::string& repo) const;

  std::string m_registry;
  bool m_plain_http;
  std::shared_ptr<http::Client> m_http;
  std::optional<Credentials> m_credentials;
  std::shared_ptr<TokenCache> m_tokens;

  mutable std::mutex m_mu;  // guards the fields below
  enum class Scheme { unknown, none, basic, bearer } m_scheme = Scheme::unknown;
  std::string m_realm, m_service;
  uint64_t m_requests = 0;
};

}  // namespace flytecd::sources::oci
