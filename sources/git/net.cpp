#include "sources/git/net.hpp"

#include <fcntl.h>
#include <git2.h>
#include <git2/sys/stream.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace flytecd::sources::git::net {

using Clock = std::chrono::steady_clock;

// Shared by a Deadline, its watchdog thread and every stream opened under it. Streams may
// outlive the Deadline (libgit2 frees transports lazily), hence shared ownership.
struct OperationState {
  std::mutex mu;
  std::condition_variable cv;
  Clock::time_point deadline;
  std::chrono::milliseconds timeout{0};
  std::vector<int> fds;  // open sockets; guarded by mu so the watchdog never hits a reused fd
  bool done = false;
  std::atomic<bool> expired{false};
  std::thread watchdog;  // started by the first socket: local-only operations cost no thread

  ~OperationState() {
    if (watchdog.joinable()) watchdog.join();
  }

  void start_watchdog_locked() {
    if (done || watchdog.joinable()) return;
    watchdog = std::thread([this] {
      std::unique_lock<std::mutex> lock(mu);
      if (cv.wait_until(lock, deadline, [this] { return done; })) return;
      expired = true;
      for (int fd : fds) ::shutdown(fd, SHUT_RDWR);
    });
  }
};

namespace {

thread_local std::shared_ptr<OperationState> t_current;

constexpr std::chrono::milliseconds k_default_timeout{60000};

// The first members mirror libgit2's private `git_socket_stream` {parent, host, port, s}:
// libgit2 1.5's SSH transport reads the socket descriptor `s` directly to hand it to libssh2.
struct SocketStream {
  git_stream parent;
  char* host;
  char* port;
  int s;
  std::shared_ptr<OperationState>* op;  // never null
};

void set_net_error(const std::string& message) {
  git_error_set_str(GIT_ERROR_NET, message.c_str());
}

int remaining_ms(const OperationState& op) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(op.deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 24LL * 3600 * 1000));
}

std::string timeout_message(const OperationState& op) {
  return "timed out after " + std::to_string(op.timeout.count() / 1000) + "s";
}

// Non-blocking connect bounded by the operation's remaining time; the socket is left blocking.
int connect_with_timeout(const addrinfo* ai, OperationState& op, std::string& error) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      error = std::strerror(errno);
      ::close(fd);
      return -1;
    }
    pollfd pfd{fd, POLLOUT, 0};
    int n = 0;
    do {
      n = ::poll(&pfd, 1, remaining_ms(op));
    } while (n < 0 && errno == EINTR);
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (n == 0) {
      error = "connect " + timeout_message(op);
      ::close(fd);
      return -1;
    }
    if (n < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
      error = std::strerror(soerr != 0 ? soerr : errno);
      ::close(fd);
      return -1;
    }
  }
  int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int stream_connect(git_stream* stream) {
  auto* st = reinterpret_cast<SocketStream*>(stream);
  OperationState& op = **st->op;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string where = std::string(st->host) + ":" + st->port;
  if (int rc = ::getaddrinfo(st->host, st->port, &hints, &list); rc != 0) {
    set_net_error("failed to resolve address for " + where + ": " + ::gai_strerror(rc));
    return -1;
  }
  std::string error = "no addresses";
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    if (op.expired || remaining_ms(op) == 0) {
      error = "connect " + timeout_message(op);
      break;
    }
    int fd = connect_with_timeout(ai, op, error);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(op.mu);
    if (op.expired) {
      ::close(fd);
      error = timeout_message(op);
      break;
    }
    st->s = fd;
    op.fds.push_back(fd);
    op.start_watchdog_locked();
    break;
  }
  ::freeaddrinfo(list);
  if (st->s < 0) {
    set_net_error("failed to connect to " + where + ": " + error);
    return -1;
  }
  return 0;
}

ssize_t stream_read(git_stream* stream, void* data, size_t len) {
  auto* st = reinterpret_cast<SocketStream*>(stream);
  ssize_t n = 0;
  do {
    n = ::recv(st->s, data, len, 0);
  } while (n < 0 && errno == EINTR);
  OperationState& op = **st->op;
  if (op.expired) {
    set_net_error("reading from " + std::string(st->host) + " " + timeout_message(op));
    return -1;
  }
  if (n < 0) set_net_error(std::string("error receiving data: ") + std::strerror(errno));
  return n;
}

ssize_t stream_write(git_stream* stream, const char* data, size_t len, int flags) {
  auto* st = reinterpret_cast<SocketStream*>(stream);
  size_t off = 0;
  while (off < len) {
    ssize_t n = ::send(st->s, data + off, len - off, flags | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      OperationState& op = **st->op;
      set_net_error(op.expired ? "writing to " + std::string(st->host) + " " + timeout_message(op)
                               : std::string("error sending data: ") + std::strerror(errno));
      return -1;
    }
    off += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(len);
}

int stream_close(git_stream* stream) {
  auto* st = reinterpret_cast<SocketStream*>(stream);
  if (st->s < 0) return 0;
  OperationState& op = **st->op;
  std::lock_guard<std::mutex> lock(op.mu);
  op.fds.erase(std::remove(op.fds.begin(), op.fds.end(), st->s), op.fds.end());
  ::close(st->s);
  st->s = -1;
  return 0;
}

void stream_free(git_stream* stream) {
  auto* st = reinterpret_cast<SocketStream*>(stream);
  stream_close(stream);
  std::free(st->host);
  std::free(st->port);
  delete st->op;
  delete st;
}

int stream_init(git_stream** out, const char* host, const char* port) {
  auto* st = new SocketStream{};
  st->parent.version = GIT_STREAM_VERSION;
  st->parent.connect = stream_connect;
  st->parent.read = stream_read;
  st->parent.write = stream_write;
  st->parent.close = stream_close;
  st->parent.free = stream_free;
  st->host = ::strdup(host);
  st->port = ::strdup(port);
  st->s = -1;
  std::shared_ptr<OperationState> op = t_current;
  if (!op) {
    // A connection opened outside any Deadline still gets a connect timeout (no watchdog).
    op = std::make_shared<OperationState>();
    op->timeout = k_default_timeout;
    op->deadline = Clock::now() + k_default_timeout;
    op->done = true;
  }
  st->op = new std::shared_ptr<OperationState>(std::move(op));
  *out = &st->parent;
  return 0;
}

}  // namespace

bool install_stream() {
  static int rc = [] {
    git_stream_registration registration{};
    registration.version = GIT_STREAM_VERSION;
    registration.init = stream_init;
    registration.wrap = nullptr;
    return git_stream_register(GIT_STREAM_STANDARD, &registration);
  }();
  return rc == 0;
}

Deadline::Deadline(std::chrono::milliseconds timeout)
    : m_state(std::make_shared<OperationState>()) {
  m_state->timeout = timeout;
  m_state->deadline = Clock::now() + timeout;
  t_current = m_state;
}

Deadline::~Deadline() {
  if (t_current == m_state) t_current.reset();
  {
    std::lock_guard<std::mutex> lock(m_state->mu);
    m_state->done = true;
  }
  m_state->cv.notify_all();
  if (m_state->watchdog.joinable()) m_state->watchdog.join();
}

bool Deadline::expired() const { return m_state->expired; }

}  // namespace flytecd::sources::git::net
