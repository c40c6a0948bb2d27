#include "daemon/common/http/client.hpp"

#include "daemon/common/base64.hpp"
#include "daemon/common/text.hpp"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

namespace flytecd::http {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr uint64_t k_max_error_body = 64u << 10;

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

bool is_retryable_status(long status) { return status == 408 || status == 429 || status >= 500; }

bool is_tls_failure(CURLcode rc) {
  return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
         rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_ISSUER_ERROR ||
         rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH || rc == CURLE_SSL_CONNECT_ERROR;
}

milliseconds backoff(const ClientOptions& o, int failures) {
  thread_local std::mt19937 rng{std::random_device{}()};
  const auto base = o.backoff_base.count() << std::min(failures - 1, 6);
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  return milliseconds(
      std::min<long long>(static_cast<long long>(static_cast<double>(base) * jitter(rng)), 10000));
}

struct Transfer {
  const ClientRequest* request = nullptr;
  ClientResponse* response = nullptr;
  CURL* curl = nullptr;
  bool sink_aborted = false;
  bool error_body_cut = false;      // an error body reached k_max_error_body: stopped reading
  uint64_t sent = 0;                // streamed body bytes so far
  std::optional<Error> read_error;  // why the body reader stopped the transfer
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  std::string_view line(data, bytes);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response->headers.clear();  // a new response (e.g. after 100 Continue)
    return bytes;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos)
    t->response->headers.emplace_back(text::ascii_lower(std::string(line.substr(0, colon))),
                                      std::string(text::trim(line.substr(colon + 1))));
  return bytes;
}

size_t on_data(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  const bool success = status >= 200 && status < 300;
  if (success && t->request->on_body) {
    if (!t->request->on_body(data, bytes)) {
      t->sink_aborted = true;
      return 0;
    }
    return bytes;
  }
  const uint64_t limit = success ? t->request->max_body : k_max_error_body;
  if (t->response->body.size() + bytes > limit) {
    t->response->body_overflow = true;
    if (success) return 0;  // a 2xx body over the bound is an error the caller reports
    // Error bodies are only for messages: keep the head and stop the transfer here (reading on
    // would let an endless body run until the total timeout).
    t->response->body.append(data, static_cast<size_t>(limit - t->response->body.size()));
    t->error_body_cut = true;
    return 0;
  }
  t->response->body.append(data, bytes);
  return bytes;
}

size_t on_read(char* buf, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const uint64_t total = t->request->body_size;
  const size_t want = static_cast<size_t>(std::min<uint64_t>(size * n, total - t->sent));
  if (want == 0) return 0;
  auto got = t->request->read_body(buf, want);
  if (!got) {
    t->read_error = got.error();
    return CURL_READFUNC_ABORT;
  }
  if (*got == 0 || *got > want) {
    t->read_error =
        Error{ErrorCode::internal, "the request body ended after " + std::to_string(t->sent) +
                                       " of " + std::to_string(total) + " bytes"};
    return CURL_READFUNC_ABORT;
  }
  t->sent += *got;
  return *got;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancel = static_cast<const Transfer*>(user)->request->cancel;
  return cancel != nullptr && cancel->load() ? 1 : 0;
}

bool is_authorization(const std::string& h) {
  return text::ascii_lower(h.substr(0, 14)) == "authorization:";
}

// A header that would split into several (CR, LF) or be cut (NUL) is refused: its value may come
// from a server (a token endpoint) and must not inject headers. The error names the header by
// its name only when that is a plain token (the value may be a credential).
std::optional<Error> bad_header(const std::vector<std::string>& headers) {
  for (size_t i = 0; i < headers.size(); ++i) {
    const std::string& h = headers[i];
    if (h.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos) continue;
    const size_t colon = h.find(':');
    std::string name = colon == std::string::npos ? std::string() : h.substr(0, colon);
    const bool plain = !name.empty() && name.size() <= 64 &&
                       std::all_of(name.begin(), name.end(), [](unsigned char ch) {
                         return std::isalnum(ch) || ch == '-' || ch == '_';
                       });
    return Error{ErrorCode::invalid_input,
                 "request header " + (plain ? "'" + name + "'" : "#" + std::to_string(i + 1)) +
                     " holds a CR, LF or NUL character; refused (a header value must be one "
                     "line of text)"};
  }
  return std::nullopt;
}

}  // namespace

struct Client::Attempt {
  Result<ClientResponse> result;
  bool final = false;  // not worth another attempt (the caller's reader or sink, a cancel, TLS)
};

std::string ClientResponse::header(std::string_view name) const {
  const std::string key = text::ascii_lower(std::string(name));
  for (auto it = headers.rbegin(); it != headers.rend(); ++it)
    if (it->first == key) return it->second;
  return {};
}

long long parse_retry_after(const std::string& value, std::chrono::system_clock::time_point now) {
  const std::string v(text::trim(value));
  if (v.empty()) return -1;
  if (std::all_of(v.begin(), v.end(), [](unsigned char ch) { return std::isdigit(ch); }))
    return v.size() > 9 ? -1 : std::stoll(v);
  const time_t when = curl_getdate(v.c_str(), nullptr);
  if (when < 0) return -1;
  const long long delta = static_cast<long long>(when) - std::chrono::system_clock::to_time_t(now);
  return std::max(0LL, delta);
}

std::string url_origin(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return {};
  const std::string scheme = text::ascii_lower(url.substr(0, scheme_end));
  const size_t host_start = scheme_end + 3;
  size_t host_end = url.find_first_of("/?#", host_start);
  if (host_end == std::string::npos) host_end = url.size();
  std::string authority = text::ascii_lower(url.substr(host_start, host_end - host_start));
  if (auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  const auto bracket = authority.rfind(']');
  const auto colon = authority.rfind(':');
  const bool has_port =
      colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
  if (!has_port) authority += scheme == "https" ? ":443" : ":80";
  return scheme + "://" + authority;
}

std::string resolve_location(const std::string& base, const std::string& location) {
  if (location.find("://") != std::string::npos) return location;
  const auto scheme_end = base.find("://");
  if (location.rfind("//", 0) == 0) return base.substr(0, scheme_end + 1) + location;
  const size_t host_end = base.find_first_of("/?#", scheme_end + 3);
  const std::string origin = base.substr(0, host_end);
  if (!location.empty() && location.front() == '/') return origin + location;
  std::string path = host_end == std::string::npos ? "/" : base.substr(host_end);
  path.erase(std::min(path.find_first_of("?#"), path.size()));
  path.erase(path.rfind('/') + 1);
  return origin + path + location;
}

std::string url_encode(std::string_view s) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += k_hex[c >> 4];
      out += k_hex[c & 15];
    }
  }
  return out;
}

std::string base64(std::string_view bytes) { return base64::encode(bytes); }

// Easy handles are pooled so connections (and TLS sessions) are reused across requests; DNS
// and TLS session caches are shared. The connection cache itself is not shared through CURLSH
// because libcurl does not support that between concurrent threads.
struct Client::Shared {
  CURLSH* share = nullptr;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;
  std::mutex pool_mu;
  std::vector<CURL*> pool;

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Shared*>(user)->locks.at(static_cast<size_t>(data)).lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Shared*>(user)->locks.at(static_cast<size_t>(data)).unlock();
  }
  CURL* take() {
    {
      std::lock_guard<std::mutex> g(pool_mu);
      if (!pool.empty()) {
        CURL* c = pool.back();
        pool.pop_back();
        curl_easy_reset(c);
        return c;
      }
    }
    return curl_easy_init();
  }
  void give(CURL* c) {
    std::lock_guard<std::mutex> g(pool_mu);
    if (pool.size() < 8)
      pool.push_back(c);
    else
      curl_easy_cleanup(c);
  }
};

Client::Client(ClientOptions options)
    : m_options(std::move(options)), m_shared(std::make_unique<Shared>()) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  m_shared->share = curl_share_init();
  if (m_shared->share != nullptr) {
    curl_share_setopt(m_shared->share, CURLSHOPT_LOCKFUNC, &Shared::lock);
    curl_share_setopt(m_shared->share, CURLSHOPT_UNLOCKFUNC, &Shared::unlock);
    curl_share_setopt(m_shared->share, CURLSHOPT_USERDATA, m_shared.get());
    curl_share_setopt(m_shared->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(m_shared->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
}

Client::~Client() {
  for (CURL* c : m_shared->pool) curl_easy_cleanup(c);
  if (m_shared->share != nullptr) curl_share_cleanup(m_shared->share);
}

Client::Attempt Client::send_once(const ClientRequest& request, const std::string& method,
                                  const std::string& url, const std::vector<std::string>& headers,
                                  milliseconds budget) {
  CURL* c = m_shared->take();
  if (c == nullptr) return {make_error(ErrorCode::internal, "curl_easy_init failed"), true};
  ClientResponse response;
  Transfer t{&request, &response, c, false, false, 0, std::nullopt};
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, m_options.protocols.c_str());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "flytecd/" FLYTECD_VERSION);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::max<long long>(
                       1, std::min(m_options.connect_timeout, budget).count())));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::max<long long>(1, budget.count())));
  const long stall_seconds = m_options.stall_timeout.count() > 0
                                 ? static_cast<long>(std::max<long long>(
                                       1, (m_options.stall_timeout.count() + 999) / 1000))
                                 : 0L;
  if (stall_seconds > 0) {
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stall_seconds);
  }
  std::array<char, CURL_ERROR_SIZE> curl_error{};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_error.data());
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  // Larger receive buffer: fewer callbacks (hash + write) per blob; measurably faster on 50 MiB.
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 256L * 1024L);
  if (m_shared->share != nullptr) curl_easy_setopt(c, CURLOPT_SHARE, m_shared->share);
  if (!m_options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, m_options.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, m_options.insecure_tls ? 0L : 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, m_options.insecure_tls ? 0L : 2L);
  if (request.cancel != nullptr) {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  }
  if (method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (request.read_body) {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(c, CURLOPT_READDATA, &t);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body_size));
    if (method != "PUT") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  } else if (!request.body.empty() || method == "POST") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    if (method != "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  } else if (method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  const CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);  // the buffer ends with this call
  curl_slist_free_all(list);
  m_shared->give(c);
  if (t.read_error) return {*t.read_error, true};
  if (t.sink_aborted) return {make_error(ErrorCode::internal, "aborted by receiver"), true};
  if (rc == CURLE_ABORTED_BY_CALLBACK && request.cancel != nullptr && request.cancel->load())
    return {make_error(ErrorCode::unavailable, "cancelled"), true};
  if (rc == CURLE_WRITE_ERROR && t.error_body_cut) {
    // The status and the head of the error body are the answer; the rest was not read.
    response.final_url = url;
    return {std::move(response), false};
  }
  if (rc == CURLE_WRITE_ERROR && response.body_overflow)
    return {make_error(ErrorCode::invalid_input,
                       "response body exceeds " + std::to_string(request.max_body) + " bytes"),
            true};
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    // libcurl's own text may name the host; these name neither the URL nor the headers.
    const bool stalled =
        stall_seconds > 0 &&
        std::string_view(curl_error.data()).find("too slow") != std::string_view::npos;
    return {make_error(ErrorCode::timeout,
                       stalled ? "stalled: no data for " + std::to_string(stall_seconds) + " s"
                               : "no answer within " + std::to_string(budget.count()) + " ms"),
            false};
  }
  if (rc != CURLE_OK) {
    std::string what = curl_easy_strerror(rc);
    const bool tls = is_tls_failure(rc);
    if (tls) what += " (TLS: is the server's CA in the CA file or the system store?)";
    return {make_error(rc == CURLE_OPERATION_TIMEDOUT ? ErrorCode::timeout : ErrorCode::unavailable,
                       what),
            tls};
  }
  response.final_url = url;
  return {std::move(response), false};
}

Result<ClientResponse> Client::execute(const ClientRequest& request) {
  if (auto bad = bad_header(request.headers)) return *bad;
  if (request.cancel != nullptr && request.cancel->load())
    return make_error(ErrorCode::unavailable, "cancelled");
  const auto total = request.timeout.count() > 0 ? request.timeout : m_options.total_timeout;
  auto deadline = Clock::now() + total;
  const bool shared_deadline = request.deadline != Clock::time_point{};
  if (shared_deadline) deadline = std::min(deadline, request.deadline);
  const std::string origin = url_origin(request.url);
  const int max_attempts = std::max(1, m_options.max_attempts);
  int failures = 0, sent = 0, redirects = 0;
  std::string url = request.url;
  std::string method = request.method;
  std::vector<std::string> headers = request.headers;
  for (;;) {
    auto budget = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (budget.count() <= 0) {
      if (shared_deadline && sent == 0)
        return make_error(ErrorCode::timeout, "the deadline passed before the request was sent");
      if (shared_deadline && Clock::now() >= request.deadline)
        return make_error(ErrorCode::timeout,
                          "the deadline passed (" + std::to_string(sent) + " requests)");
      return make_error(ErrorCode::timeout, "gave up after " + std::to_string(total.count()) +
                                                " ms (" + std::to_string(sent) + " requests)");
    }
    if (m_options.attempt_timeout.count() > 0) budget = std::min(budget, m_options.attempt_timeout);
    if (request.on_restart) request.on_restart();
    ++sent;
    auto attempt = send_once(request, method, url, headers, budget);
    auto& r = attempt.result;
    milliseconds wait{0};
    if (!r) {
      const bool transient =
          r.error().code == ErrorCode::unavailable || r.error().code == ErrorCode::timeout;
      if (attempt.final || !transient || failures + 1 >= max_attempts) {
        Error e = r.error();
        if (failures > 0) e.message += " (after " + std::to_string(sent) + " requests)";
        return e;
      }
      wait = backoff(m_options, ++failures);
    } else if (m_options.max_redirects > 0 && is_redirect(r->status) &&
               !r->header("location").empty()) {
      if (++redirects > m_options.max_redirects)
        return make_error(ErrorCode::unavailable,
                          "more than " + std::to_string(m_options.max_redirects) + " redirects");
      const std::string next = resolve_location(url, r->header("location"));
      if (url_origin(next) != origin) {
        // Credentials are for the origin only: never forward them to storage or a CDN.
        std::erase_if(headers, is_authorization);
      }
      if (r->status == 303 && method != "HEAD") method = "GET";
      url = next;
      continue;
    } else if (is_retryable_status(r->status) && failures + 1 < max_attempts) {
      ++failures;
      const long long after =
          parse_retry_after(r->header("retry-after"), std::chrono::system_clock::now());
      wait = after >= 0 ? std::min(milliseconds(after * 1000), m_options.max_retry_after)
                        : backoff(m_options, failures);
      if (Clock::now() + wait >= deadline) {
        r->attempts = sent;
        return std::move(r);
      }
    } else {
      r->attempts = sent;
      return std::move(r);
    }
    // Waits are cut short by a cancel.
    const auto until = std::min(Clock::now() + wait, deadline);
    while (Clock::now() < until) {
      if (request.cancel != nullptr && request.cancel->load())
        return make_error(ErrorCode::unavailable, "cancelled");
      std::this_thread::sleep_for(
          std::min<Clock::duration>(until - Clock::now(), milliseconds(50)));
    }
    url = request.url;  // retries start over: a redirect target may have expired
    method = request.method;
    headers = request.headers;
    redirects = 0;
  }
}

}  // namespace flytecd::http
