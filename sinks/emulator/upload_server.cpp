#include "sinks/emulator/upload_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
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
#include <system_error>

namespace flytecd::sinks::emulator {
namespace {

constexpr size_t k_max_header_bytes = size_t{16} * 1024;
constexpr size_t k_max_body_bytes = 512ull * 1024 * 1024;
constexpr size_t k_max_connections = 32;
constexpr int k_io_timeout_s = 30;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

const char* reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Internal Server Error";
  }
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

void send_reply(int fd, const UploadReply& r) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
  head += "Content-Length: " + std::to_string(r.body.size()) + "\r\nConnection: close\r\n";
  for (const auto& [k, v] : r.headers) head.append(k).append(": ").append(v).append("\r\n");
  head += "\r\n";
  if (send_all(fd, head)) send_all(fd, r.body);
}

UploadReply simple(int status) {
  UploadReply r;
  r.status = status;
  r.body = std::string(reason(status)) + "\n";
  return r;
}

// Reads into `buf` until it holds at least `want` bytes. False on EOF, error or timeout.
bool read_until(int fd, std::string& buf, size_t want) {
  char chunk[64 * 1024];
  while (buf.size() < want) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
  }
  return true;
}

// Parses the request head; returns the status to reply with on a malformed request.
std::optional<int> parse_head(const std::string& head, UploadRequest& req) {
  size_t pos = head.find("\r\n");
  const std::string line = head.substr(0, pos);
  const auto sp1 = line.find(' ');
  const auto sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1 || !line.substr(sp2 + 1).starts_with("HTTP/1.")) {
    return 400;
  }
  req.method = line.substr(0, sp1);
  req.path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (const auto q = req.path.find('?'); q != std::string::npos) req.path.resize(q);
  while (pos != std::string::npos && pos + 2 < head.size()) {
    const size_t next = head.find("\r\n", pos + 2);
    const std::string h =
        head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    pos = next;
    if (h.empty()) break;
    const auto colon = h.find(':');
    if (colon == std::string::npos) return 400;
    req.headers[lower(trim(h.substr(0, colon)))] = trim(h.substr(colon + 1));
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<UploadServer>> UploadServer::start(const std::string& host, int port,
                                                          Handler handler) {
  std::string bind_host = host;
  if (bind_host == "localhost" || bind_host == "::1") bind_host = "127.0.0.1";  // IPv4-only server
  if (bind_host.empty() || bind_host == "::" || bind_host == "[::]") bind_host = "0.0.0.0";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, bind_host.c_str(), &addr.sin_addr) != 1) {
    return make_error(ErrorCode::invalid_input,
                      "emulator: upload server: cannot bind \"" + host +
                          "\" (expected an IPv4 literal, localhost or 0.0.0.0)");
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(ErrorCode::unavailable, "emulator: upload server: socket failed");
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    const std::string err = std::error_code(errno, std::generic_category()).message();
    ::close(fd);
    return make_error(ErrorCode::unavailable, "emulator: upload server: cannot listen on " +
                                                  bind_host + ":" + std::to_string(port) + ": " +
                                                  err);
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string public_host = bind_host == "0.0.0.0" ? "127.0.0.1" : bind_host;
  std::unique_ptr<UploadServer> server(
      new UploadServer(fd, ntohs(addr.sin_port), public_host, std::move(handler)));
  if (::pipe2(server->m_wake, O_CLOEXEC) != 0) {
    return make_error(ErrorCode::unavailable, "emulator: upload server: pipe failed");
  }
  server->m_acceptor = std::thread([s = server.get()] { s->accept_loop(); });
  return server;
}

UploadServer::UploadServer(int fd, int port, std::string public_host, Handler handler)
    : m_listen_fd(fd),
      m_port(port),
      m_public_host(std::move(public_host)),
      m_handler(std::move(handler)) {}

UploadServer::~UploadServer() {
  stop();
  ::close(m_listen_fd);
  for (int fd : m_wake) {
    if (fd >= 0) ::close(fd);
  }
}

void UploadServer::stop() {
  if (m_stopping.exchange(true)) return;
  if (m_wake[1] >= 0) {
    const char c = 'x';
    (void)!::write(m_wake[1], &c, 1);
  }
  if (m_acceptor.joinable()) m_acceptor.join();
  std::vector<Worker> workers;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    for (int fd : m_open_fds) ::shutdown(fd, SHUT_RDWR);  // unblock reads in flight
    workers.swap(m_workers);
  }
  for (auto& w : workers) w.thread.join();
}

void UploadServer::accept_loop() {
  while (!m_stopping) {
    pollfd fds[2] = {{m_listen_fd, POLLIN, 0}, {m_wake[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0 || m_stopping) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(m_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    timeval tv{k_io_timeout_s, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);

    std::lock_guard<std::mutex> lock(m_mu);
    // Reap finished workers so the list stays bounded.
    for (auto it = m_workers.begin(); it != m_workers.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = m_workers.erase(it);
      } else {
        ++it;
      }
    }
    if (m_workers.size() >= k_max_connections) {
      send_reply(fd, simple(503));
      ::close(fd);
      continue;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    m_open_fds.insert(fd);
    m_workers.push_back(Worker{std::thread([this, fd, done] {
                                 serve(fd);
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

void UploadServer::serve(int fd) {
  std::string buf;
  size_t head_end = std::string::npos;
  while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > k_max_header_bytes) return send_reply(fd, simple(431));
    if (!read_until(fd, buf, buf.size() + 1)) return;
  }
  UploadRequest req;
  if (auto bad = parse_head(buf.substr(0, head_end + 2), req)) return send_reply(fd, simple(*bad));
  buf.erase(0, head_end + 4);

  size_t length = 0;
  if (req.headers.count("transfer-encoding")) return send_reply(fd, simple(411));
  if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
    const auto& v = it->second;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), length);
    if (ec != std::errc() || ptr != v.data() + v.size()) return send_reply(fd, simple(400));
  } else if (req.method == "PUT") {
    return send_reply(fd, simple(411));
  }
  if (length > k_max_body_bytes) return send_reply(fd, simple(413));
  if (auto it = req.headers.find("expect"); it != req.headers.end()) {
    if (lower(it->second) == "100-continue" && !send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n"))
      return;
  }
  if (!read_until(fd, buf, length)) return;
  buf.resize(length);
  req.body = std::move(buf);
  send_reply(fd, m_handler(req));
}

}  // namespace flytecd::sinks::emulator
