#include "daemon/http/listener.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace flytecd::http {
namespace {

using Clock = std::chrono::steady_clock;

// After answering early (body unread) we keep reading and discarding for a moment so the
// client sees our response instead of a reset; bounded in time and bytes.
constexpr auto k_linger = std::chrono::milliseconds(1000);
constexpr size_t k_linger_bytes = size_t{4} * 1024 * 1024;

std::string errno_text(int err) {
  char buf[256];
  return ::strerror_r(err, buf, sizeof buf);  // GNU variant: returns the message
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

std::string strip_crlf(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '\r' && c != '\n') out += c;
  }
  return out;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void send_response(int fd, const Response& r) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " ";
  head += reason_phrase(r.status);
  head += "\r\nContent-Type: " + strip_crlf(r.content_type);
  head += "\r\nContent-Length: " + std::to_string(r.body.size());
  head += "\r\nConnection: close\r\nCache-Control: no-store\r\n";
  for (const auto& [k, v] : r.headers) head += strip_crlf(k) + ": " + strip_crlf(v) + "\r\n";
  head += "\r\n";
  if (send_all(fd, head)) send_all(fd, r.body);
}

enum class ReadResult { data, eof, timeout, error };

// One recv() that waits at most until `deadline`.
ReadResult read_some(int fd, std::string& buf, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadResult::timeout;
    pollfd p{fd, POLLIN, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return ReadResult::error;
    if (rc == 0) continue;  // re-check the deadline
    char chunk[16 * 1024];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return ReadResult::error;
    if (n == 0) return ReadResult::eof;
    buf.append(chunk, static_cast<size_t>(n));
    return ReadResult::data;
  }
}

void linger_close(int fd, size_t already_read) {
  ::shutdown(fd, SHUT_WR);
  const auto deadline = Clock::now() + k_linger;
  size_t drained = already_read;
  std::string sink;
  while (drained < k_linger_bytes) {
    sink.clear();
    if (read_some(fd, sink, deadline) != ReadResult::data) return;
    drained += sink.size();
  }
}

// A bare CR or LF (or a NUL) inside a line is refused: something in front of us might take it for
// a line break and see other headers than we do.
constexpr std::string_view k_bare_breaks{"\r\n\0", 3};

// Parses the request line and headers (`head` ends before the blank line). False = 400.
bool parse_head(std::string_view head, Request& req) {
  size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  if (line.find_first_of(k_bare_breaks) != std::string_view::npos) return false;
  const auto sp1 = line.find(' ');
  const auto sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return false;
  const auto version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return false;
  req.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (req.method.empty() || target.empty() || target.front() != '/') return false;
  if (const auto q = target.find('?'); q != std::string_view::npos) {
    req.query = std::string(target.substr(q + 1));
    target = target.substr(0, q);
  }
  req.path = std::string(target);
  while (eol != std::string_view::npos) {
    const size_t start = eol + 2;
    eol = head.find("\r\n", start);
    const std::string_view h =
        head.substr(start, eol == std::string_view::npos ? eol : eol - start);
    if (h.empty()) continue;
    const auto colon = h.find(':');
    if (colon == std::string_view::npos) return false;
    // A field name is a token (RFC 9110 5.1): a blank before the colon, an empty name or an
    // obs-fold line (leading blank) is refused, as a proxy in front could read it differently.
    if (!is_token(h.substr(0, colon))) return false;
    const std::string name = lower(h.substr(0, colon));
    const std::string_view value = trim(h.substr(colon + 1));
    if (value.find_first_of(k_bare_breaks) != std::string_view::npos) return false;
    auto [it, inserted] = req.headers.emplace(name, std::string(value));
    if (!inserted) it->second += ", " + std::string(value);
  }
  if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
    // Repeated (now "a, b") or malformed lengths are rejected: no guessing about framing.
    const auto& v = it->second;
    size_t length = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), length);
    if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) return false;
    req.content_length = length;
  }
  return true;
}

std::string peer_string(const sockaddr_storage& ss, socklen_t len) {
  char host[NI_MAXHOST] = {};
  char port[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, host, sizeof host, port,
                    sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "unknown";
  }
  return ss.ss_family == AF_INET6 ? "[" + std::string(host) + "]:" + port
                                  : std::string(host) + ":" + port;
}

Response call_guarded(const std::function<Response(const Request&)>& fn, const Request& req) {
  try {
    return fn(req);
  } catch (...) {
    // Handlers are ours, but a throwing callback must not kill the connection thread.
    return text_response(500, "internal error");
  }
}

}  // namespace

std::string_view Request::header(std::string_view name) const {
  const auto it = headers.find(std::string(name));
  return it == headers.end() ? std::string_view() : std::string_view(it->second);
}

bool parse_request_head(std::string_view head, Request& req) { return parse_head(head, req); }

Response text_response(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string_view reason_phrase(int status) {
  static constexpr std::pair<int, std::string_view> k_reasons[] = {
      {100, "Continue"},
      {200, "OK"},
      {202, "Accepted"},
      {204, "No Content"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {408, "Request Timeout"},
      {411, "Length Required"},
      {413, "Payload Too Large"},
      {429, "Too Many Requests"},
      {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"},
      {502, "Bad Gateway"},
      {503, "Service Unavailable"},
  };
  for (const auto& [code, text] : k_reasons) {
    if (code == status) return text;
  }
  return "Unknown";
}

Result<std::pair<std::string, int>> parse_listen_address(std::string_view listen) {
  const auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_input, "http: listen address \"" + std::string(listen) +
                                                    "\": " + why +
                                                    " (expected host:port, :port or [v6]:port)");
  };
  std::string host;
  std::string_view port;
  if (listen.starts_with('[')) {
    const auto close = listen.find("]:");
    if (close == std::string_view::npos) return bad("unterminated IPv6 literal");
    host = std::string(listen.substr(1, close - 1));
    port = listen.substr(close + 2);
  } else {
    const auto colon = listen.rfind(':');
    if (colon == std::string_view::npos) return bad("no port");
    host = std::string(listen.substr(0, colon));
    if (host.find(':') != std::string::npos) return bad("IPv6 literals need brackets");
    port = listen.substr(colon + 1);
  }
  if (host.empty()) host = "0.0.0.0";
  if (host == "localhost") host = "127.0.0.1";  // do not depend on resolver order
  int p = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || p < 0 || p > 65535) {
    return bad("invalid port");
  }
  return std::make_pair(host, p);
}

Result<std::unique_ptr<Listener>> Listener::start(ListenerOptions options, RequestHandler handler) {
  if (!handler.on_request) {
    return make_error(ErrorCode::invalid_input, "http: listener needs an on_request handler");
  }
  auto addr = parse_listen_address(options.listen);
  if (!addr) return addr.error();
  const auto& [host, port] = addr.value();

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port_str = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), port_str.c_str(), &hints, &res); rc != 0) {
    return make_error(ErrorCode::invalid_input,
                      "http: cannot resolve listen host \"" + host + "\": " + gai_strerror(rc));
  }
  const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ::freeaddrinfo(res);
    return make_error(ErrorCode::unavailable, "http: socket: " + errno_text(errno));
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool bound = ::bind(fd, res->ai_addr, res->ai_addrlen) == 0 && ::listen(fd, 128) == 0;
  const int err = errno;
  ::freeaddrinfo(res);
  if (!bound) {
    ::close(fd);
    return make_error(ErrorCode::unavailable,
                      "http: cannot listen on " + options.listen + ": " + errno_text(err));
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  char numeric[NI_MAXHOST] = {};
  char serv[NI_MAXSERV] = {};
  ::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, numeric, sizeof numeric, serv, sizeof serv,
                NI_NUMERICHOST | NI_NUMERICSERV);
  std::unique_ptr<Listener> l(
      new Listener(fd, numeric, std::atoi(serv), std::move(options), std::move(handler)));
  if (::pipe2(l->m_wake, O_CLOEXEC) != 0) {
    return make_error(ErrorCode::unavailable, "http: pipe: " + errno_text(errno));
  }
  l->m_acceptor = std::thread([p = l.get()] { p->accept_loop(); });
  return l;
}

Listener::Listener(int fd, std::string host, int port, ListenerOptions options,
                   RequestHandler handler)
    : m_listen_fd(fd),
      m_host(std::move(host)),
      m_port(port),
      m_options(std::move(options)),
      m_handler(std::move(handler)) {}

Listener::~Listener() {
  stop();
  for (int fd : m_wake) {
    if (fd >= 0) ::close(fd);
  }
}

void Listener::stop() {
  if (m_stopping.exchange(true)) return;
  if (m_wake[1] >= 0) {
    const char c = 'x';
    (void)!::write(m_wake[1], &c, 1);
  }
  if (m_acceptor.joinable()) m_acceptor.join();
  ::close(m_listen_fd);  // new connections are refused from here on
  std::vector<Worker> workers;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    for (int fd : m_open_fds) ::shutdown(fd, SHUT_RDWR);  // wakes reads in flight
    workers.swap(m_workers);
  }
  for (auto& w : workers) w.thread.join();
}

void Listener::reap_finished_locked() {
  for (auto it = m_workers.begin(); it != m_workers.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = m_workers.erase(it);
    } else {
      ++it;
    }
  }
}

void Listener::accept_loop() {
  while (!m_stopping) {
    pollfd fds[2] = {{m_listen_fd, POLLIN, 0}, {m_wake[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0 || m_stopping) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    const int fd = ::accept4(m_listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        pollfd wake{m_wake[0], POLLIN, 0};  // back off instead of spinning, stay stoppable
        ::poll(&wake, 1, 100);
      }
      continue;
    }
    // Bounds every send; reads are bounded by the request deadline (poll in read_some).
    timeval tv{static_cast<time_t>(m_options.request_timeout.count() / 1000 + 1), 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const std::string remote = peer_string(ss, len);

    std::lock_guard<std::mutex> lock(m_mu);
    reap_finished_locked();
    if (m_workers.size() >= m_options.max_connections) {
      auto busy = text_response(503, "too many connections");
      busy.headers.emplace_back("Retry-After", "1");
      send_response(fd, busy);
      ::close(fd);
      continue;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    m_open_fds.insert(fd);
    m_workers.push_back(Worker{std::thread([this, fd, done, remote] {
                                 serve(fd, remote);
                                 {
                                   std::lock_guard<std::mutex> l(m_mu);
                                   m_open_fds.erase(fd);
                                 }
                                 ::close(fd);
                                 done->store(true);
                               }),
                               done});
  }
}

void Listener::serve(int fd, const std::string& remote) {
  const auto deadline = Clock::now() + m_options.request_timeout;
  const auto answer_early = [&](const Response& r, size_t read) {
    send_response(fd, r);
    linger_close(fd, read);
  };
  std::string buf;
  size_t head_end = std::string::npos;
  while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > m_options.max_header_bytes) {
      return answer_early(text_response(431, "request head too large"), buf.size());
    }
    const auto rr = read_some(fd, buf, deadline);
    if (rr == ReadResult::timeout && !buf.empty()) {
      return answer_early(text_response(408, "request timeout"), buf.size());
    }
    if (rr != ReadResult::data) return;
  }
  if (head_end > m_options.max_header_bytes) {
    return answer_early(text_response(431, "request head too large"), buf.size());
  }
  Request req;
  req.remote = remote;
  if (!parse_head(std::string_view(buf).substr(0, head_end), req)) {
    return answer_early(text_response(400, "malformed request"), buf.size());
  }
  buf.erase(0, head_end + 4);

  if (m_handler.on_head) {
    std::optional<Response> early;
    try {
      early = m_handler.on_head(req);
    } catch (...) {
      early = text_response(500, "internal error");
    }
    if (early) return answer_early(*early, buf.size());
  }
  if (req.headers.count("transfer-encoding") != 0) {
    return answer_early(text_response(411, "chunked bodies are not accepted"), buf.size());
  }
  const size_t length = req.content_length.value_or(0);
  if (length > m_options.max_body_bytes) {
    return answer_early(text_response(413, "body larger than " +
                                               std::to_string(m_options.max_body_bytes) + " bytes"),
                        buf.size());
  }
  if (buf.size() < length && lower(req.header("expect")) == "100-continue") {
    if (!send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return;
  }
  while (buf.size() < length) {
    const auto rr = read_some(fd, buf, deadline);
    if (rr == ReadResult::timeout) {
      return answer_early(text_response(408, "request timeout"), buf.size());
    }
    if (rr != ReadResult::data) return;
  }
  buf.resize(length);  // anything past the body (pipelining) is not served
  req.body = std::move(buf);
  send_response(fd, call_guarded(m_handler.on_request, req));
  ::shutdown(fd, SHUT_WR);
}

}  // namespace flytecd::http
