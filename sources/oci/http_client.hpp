#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::sources::oci {

struct HttpOptions {
  std::string ca_file;  // extra PEM CA bundle; empty = system CAs
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds total_timeout{300000};  // per attempt and for all attempts together
  int max_attempts = 4;                             // 429, 5xx and transport errors
  int max_redirects = 5;
  std::chrono::milliseconds backoff_base{200};       // doubled per attempt, with jitter
  std::chrono::milliseconds max_retry_after{60000};  // longest Retry-After honoured
};

struct HttpRequest {
  std::string method = "GET";  // GET or HEAD
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; an "Authorization" one is origin-bound
  // Receives the body of 2xx responses; return false to abort the transfer (the sink keeps its
  // own reason). Without a sink, 2xx bodies are collected into HttpResponse::body.
  std::function<bool(const char*, size_t)> on_body;
  // Called before every attempt (retries, redirects) so the sink can start over.
  std::function<void()> on_restart;
  uint64_t max_body = 1u << 20;  // bound for collected bodies (error bodies: 64 KiB)
};

struct HttpResponse {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;       // collected body (not when streamed to a sink)
  std::string final_url;  // after redirects
  int attempts = 0;       // requests sent, over retries and redirects
  bool body_overflow = false;

  // The last value of a header (name matched case-insensitively), or "".
  std::string header(std::string_view name) const;
};

// Seconds to wait from a Retry-After value (delta-seconds or HTTP-date); -1 when unparseable.
long long parse_retry_after(const std::string& value, std::chrono::system_clock::time_point now);

// "scheme://host:port" of an absolute URL (default ports made explicit), "" if not absolute.
std::string url_origin(const std::string& url);
// Resolves a Location header (absolute, scheme-relative or path) against the request URL.
std::string resolve_location(const std::string& base, const std::string& location);

// A small libcurl client: connection reuse, TLS with system or custom CAs, manual redirects
// (the origin-bound Authorization header is dropped when a redirect leaves the origin), and
// retries with backoff on transport errors, 429 (Retry-After honoured) and 5xx. Thread-safe.
class HttpClient {
 public:
  explicit HttpClient(HttpOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends the request, following redirects and retrying transient failures. Returns the final
  // response whatever its status (the caller maps statuses); errors: unavailable (transport,
  // too many redirects), timeout, or the sink's abort as internal "aborted by receiver".
  Result<HttpResponse> execute(const HttpRequest& request);

  const HttpOptions& options() const { return m_options; }

 private:
  Result<HttpResponse> send_once(const HttpRequest& request, const std::string& url,
                                 const std::vector<std::string>& headers,
                                 std::chrono::milliseconds budget);

  HttpOptions m_options;
  struct Shared;
  std::unique_ptr<Shared> m_shared;
};

}  // namespace flytecd::sources::oci
