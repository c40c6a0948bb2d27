#pragma once

// The one libcurl client of flytecd (OCI registries, the Kubernetes API, the fast-registration
// upload, notifications, OAuth). curl headers stay out of this header.
//
// - Timeouts: connect, per attempt, for all attempts together, an absolute deadline a caller
//   shares over several requests (ClientRequest::deadline), and a stall bound (stall_timeout:
//   an attempt that moves no byte for that long is aborted, even if the server keeps it open).
// - Cancel: ClientRequest::cancel aborts the transfer in flight (libcurl looks at it at least
//   once a second) and the waits between attempts.
// - Retries (max_attempts > 1) on transport errors, 408, 429 and 5xx, with jittered backoff;
//   Retry-After (seconds or HTTP-date) is honoured up to max_retry_after.
// - Redirects are followed by hand (max_redirects; 0 = a 3xx is returned as the response). An
//   Authorization header is dropped as soon as a redirect leaves the request's origin.
// - TLS: system CAs or ca_file; verification can be turned off only through insecure_tls.
// - Response size: 2xx bodies are bounded by max_body (collected) or streamed to on_body;
//   an error body is read up to 64 KiB and the transfer stops there (an endless error body
//   costs 64 KiB, not the total timeout): the response is returned with body_overflow set.
// - Headers: a value with CR, LF or NUL is refused before anything is sent (no injection).
// - Request bodies: a string, or streamed from a reader (Content-Length = body_size).
// - Errors never contain the URL, headers or bodies (a URL may carry a signature, headers carry
//   credentials): callers add their own context with a redacted URL.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::http {

struct ClientOptions {
  std::string ca_file;                   // extra PEM CA bundle; empty = system CAs
  bool insecure_tls = false;             // skip certificate verification (tests only)
  std::string protocols = "http,https";  // libcurl protocol list ("https" for Kubernetes)
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds attempt_timeout{0};      // one attempt; 0 = total_timeout
  std::chrono::milliseconds total_timeout{300000};   // all attempts, waits and redirects
  int max_attempts = 1;                              // 1 = no retries
  int max_redirects = 0;                             // 0 = 3xx responses are returned as is
  std::chrono::milliseconds backoff_base{200};       // doubled per attempt, with jitter
  std::chrono::milliseconds max_retry_after{60000};  // longest Retry-After honoured
  // An attempt that receives and sends less than 1 byte/s for this long is aborted (a timeout,
  // retried like one): a server that accepts and never answers. 0 = off; whole seconds.
  std::chrono::milliseconds stall_timeout{0};
};

// Reads up to `n` bytes of a request body into `buf`: the count, 0 at the end, or an error.
using BodyReader = std::function<Result<size_t>(char* buf, size_t n)>;

struct ClientRequest {
  std::string method = "GET";  // any verb; HEAD sends no body and reads none
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; an "Authorization" one is origin-bound
  std::string body;                  // sent when non-empty (and no read_body)
  // A streamed body of exactly body_size bytes. on_restart must rewind the source (every
  // attempt reads from the first byte). A reader error aborts the request with that error,
  // which is not retried; so does a reader that ends early.
  BodyReader read_body;
  uint64_t body_size = 0;
  // Receives the body of 2xx responses; return false to abort the transfer (the sink keeps its
  // own reason). Without a sink, 2xx bodies are collected into ClientResponse::body.
  std::function<bool(const char*, size_t)> on_body;
  // Called before every attempt (retries, redirects) so sources and sinks can start over.
  std::function<void()> on_restart;
  uint64_t max_body = 1u << 20;  // bound for collected 2xx bodies
  // > 0: this request's deadline over all its attempts, instead of ClientOptions::total_timeout.
  std::chrono::milliseconds timeout{0};
  // Set (not the epoch): no attempt runs past it; a deadline shared by several requests (all the
  // requests of one package fetch). Passed: a timeout error before anything is sent.
  std::chrono::steady_clock::time_point deadline{};
  // Optional: when it becomes true the transfer in flight is aborted ("cancelled").
  const std::atomic<bool>* cancel = nullptr;
};

struct ClientResponse {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;            // collected body (not when streamed to a sink)
  std::string final_url;       // after redirects
  int attempts = 0;            // requests sent, over retries and redirects
  bool body_overflow = false;  // an error body was cut at 64 KiB (its transfer stopped there)

  // The last value of a header (name matched case-insensitively), or "".
  std::string header(std::string_view name) const;
};

// Seconds to wait from a Retry-After value (delta-seconds or HTTP-date); -1 when unparseable.
long long parse_retry_after(const std::string& value, std::chrono::system_clock::time_point now);
// "scheme://host:port" of an absolute URL (default ports made explicit), "" if not absolute.
std::string url_origin(const std::string& url);
// Resolves a Location header (absolute, scheme-relative or path) against the request URL.
std::string resolve_location(const std::string& base, const std::string& location);
// Percent-encodes everything but RFC 3986 unreserved characters (form values, Basic auth).
std::string url_encode(std::string_view s);
// Standard base64 with padding.
std::string base64(std::string_view bytes);

// Connection and TLS-session reuse across requests; thread-safe (concurrent execute calls).
class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends the request, following redirects and retrying transient failures as configured.
  // Returns the final response whatever its status (callers map statuses). Errors: timeout
  // (deadline, stall), unavailable (transport, TLS, too many redirects), invalid_input (a 2xx
  // body over max_body, a header value with CR/LF/NUL), internal "aborted by receiver" (on_body
  // said stop), unavailable "cancelled", or the body reader's own error.
  Result<ClientResponse> execute(const ClientRequest& request);

  const ClientOptions& options() const { return m_options; }

 private:
  struct Attempt;
  Attempt send_once(const ClientRequest& request, const std::string& method, const std::string& url,
                    const std::vector<std::string>& headers, std::chrono::milliseconds budget);

  ClientOptions m_options;
  struct Shared;
  std::unique_ptr<Shared> m_shared;
};

}  // namespace flytecd::http
