#include "daemon/common/http/listener.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <unordered_map>

#include "daemon/common/worker_pool.hpp"

namespace flytecd::http {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// After answering early (body unread) or closing, we read and discard for a moment so the
// client sees our response instead of a reset; bounded in time and bytes.
constexpr auto k_linger = 1000ms;
constexpr size_t k_linger_bytes = size_t{4} * 1024 * 1024;
// At the connection limit only connections at least this old may be dropped for a new one:
// a younger one may have sent its request already, we just have not read it yet. (A client
// sends its request right behind the handshake's ACK, so it is normally there at accept.)
// It also bounds how fast a backlog of attackers drains: max_connections per this period.
constexpr auto k_evict_min_age = 25ms;
// While accepting is paused (limit reached, nothing to drop; or out of descriptors).
constexpr auto k_accept_retry = 25ms;
// Bytes read from one connection per readiness event, so one fast sender cannot hog the loop.
constexpr size_t k_read_budget = 64 * 1024;
constexpr uint64_t k_listen_id = 0;
constexpr uint64_t k_wake_id = 1;

std::string errno_text(int err) {
  char buf[256];
  return ::strerror_r(err, buf, sizeof buf);  // GNU variant: returns the message
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

enum class Io { more, again, eof, error };

// Non-blocking reads into `buf`, at most about `budget` bytes.
Io read_into(int fd, std::string& buf, size_t budget) {
  char chunk[16 * 1024];
  size_t got = 0;
  while (got < budget) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      buf.append(chunk, static_cast<size_t>(n));
      got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return Io::eof;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Io::again;
    return Io::error;
  }
  return Io::more;
}

size_t effective_limit(size_t wanted) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return wanted;
  // Leave descriptors for the rest of the process (Git, curl, the ledger).
  const auto soft = static_cast<size_t>(rl.rlim_cur);
  const size_t fd_budget = soft > 256 ? soft - 128 : soft / 2;
  return std::max<size_t>(1, std::min(wanted, fd_budget));
}

enum class Phase { head, handler, body, write, linger };

struct Conn {
  uint64_t id = 0;
  int fd = -1;
  std::string remote;
  Phase phase = Phase::head;
  bool dead = false;
  bool idle = false;      // keep-alive: no byte of the next request yet
  bool peer_eof = false;  // the client shut down its sending side
  bool priority = false;
  bool close_after = false;  // close once `out` is written
  uint32_t interest = EPOLLIN;
  std::string in;
  std::string out;
  size_t out_off = 0;
  Request req;  // while its body is read
  size_t served = 0;
  size_t drained = 0;
  Clock::time_point since;  // when the current head started (eviction picks the oldest)
  std::optional<Clock::time_point> deadline;
};

struct Job {
  uint64_t id = 0;
  bool body = false;  // on_request; otherwise on_head
  Request req;
  std::optional<Response> response;  // filled by the handler thread
};

}  // namespace

struct Listener::Loop {
  ListenerOptions options;
  RequestHandler handler;
  size_t limit = 0;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::thread thread;
  std::unique_ptr<WorkerPool> general, priority;  // handler threads

  std::mutex done_mu;
  std::vector<Job> done;  // answered jobs, handed back to the event thread

  // Event-thread state.
  std::unordered_map<uint64_t, Conn> conns;  // node-based: references survive inserts
  std::set<std::pair<Clock::time_point, uint64_t>> timers;
  std::vector<uint64_t> graveyard;  // killed this iteration, erased at its end
  uint64_t next_id = 2;
  size_t open = 0;
  bool accept_paused = false;
  Clock::time_point paused_at;

  std::atomic<uint64_t> n_accepted{0}, n_requests{0}, n_timed_out{0}, n_evicted{0}, n_open{0};

  ~Loop() { shutdown(); }

  void shutdown() {
    if (!stopping.exchange(true)) {
      wake();
    }
    if (thread.joinable()) thread.join();
    // Handler threads may still be finishing a job; they write to wake_fd, closed after.
    if (general) general->stop();
    if (priority) priority->stop();
    for (int* fd : {&listen_fd, &epoll_fd, &wake_fd}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }

  void wake() const {
    const uint64_t one = 1;
    (void)!::write(wake_fd, &one, sizeof one);
  }

  void run_job(Job& job) {
    try {
      job.response = job.body ? std::optional<Response>(handler.on_request(job.req))
                              : handler.on_head(job.req);
    } catch (...) {
      // Handlers are ours, but a throwing callback must not kill a handler thread.
      job.response = text_response(500, "internal error");
    }
    {
      std::lock_guard<std::mutex> lock(done_mu);
      done.push_back(std::move(job));
    }
    wake();
  }

  void run() {
    epoll_event events[256];
    while (!stopping) {
      int timeout = -1;
      const auto now = Clock::now();
      if (!timers.empty()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(timers.begin()->first - now);
        timeout = static_cast<int>(std::clamp<long long>(left.count(), 0, 60'000));
      }
      if (accept_paused) {
        timeout = timeout < 0 ? static_cast<int>(k_accept_retry.count())
                              : std::min(timeout, static_cast<int>(k_accept_retry.count()));
      }
      const int n = ::epoll_wait(epoll_fd, events, 256, timeout);
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[i].data.u64;
        if (id == k_listen_id) {
          accept_ready();
        } else if (id == k_wake_id) {
          uint64_t count = 0;
          (void)!::read(wake_fd, &count, sizeof count);
        } else if (auto it = conns.find(id); it != conns.end() && !it->second.dead) {
          on_event(it->second, events[i].events);
        }
      }
      if (stopping) break;
      take_done();
      expire(Clock::now());
      if (accept_paused && (open < limit || Clock::now() - paused_at >= k_accept_retry)) {
        set_accepting(true);
      }
      bury();
    }
    for (auto& [id, c] : conns) kill(c);
    bury();
  }

  void bury() {
    if (graveyard.empty()) return;
    for (uint64_t id : graveyard) conns.erase(id);
    graveyard.clear();
    if (accept_paused && open < limit) set_accepting(true);
  }

  void set_accepting(bool on) {
    epoll_event ev{};
    ev.events = on ? static_cast<uint32_t>(EPOLLIN) : 0U;
    ev.data.u64 = k_listen_id;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
    accept_paused = !on;
    if (!on) paused_at = Clock::now();
  }

  void accept_ready() {
    for (int round = 0; round < 64; ++round) {
      if (open >= limit && !evict_one()) return set_accepting(false);
      sockaddr_storage ss{};
      socklen_t len = sizeof ss;
      const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len,
                               SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          if (evict_one()) continue;
          return set_accepting(false);  // back off instead of spinning
        }
        return;  // EAGAIN: the backlog is empty
      }
      const uint64_t id = next_id++;
      Conn& c = conns[id];
      c.id = id;
      c.fd = fd;
      c.remote = peer_string(ss, len);
      c.since = Clock::now();
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = id;
      if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        ::close(fd);
        conns.erase(id);
        continue;
      }
      ++open;
      n_open = open;
      ++n_accepted;
      arm(c, c.since + options.header_timeout);
      on_event(c, EPOLLIN);  // the request is usually there already: no epoll round trip
    }
  }

  // Drops the connection that is cheapest to lose: one lingering after its response, else
  // the one that has been sending its head the longest. False when there is none.
  bool evict_one() {
    const auto old_enough = Clock::now() - k_evict_min_age;
    Conn* victim = nullptr;
    for (auto& [id, c] : conns) {
      if (c.dead) continue;
      if (c.phase == Phase::linger) {
        victim = &c;
        break;
      }
      if (c.phase == Phase::head && c.since <= old_enough &&
          (victim == nullptr || c.since < victim->since)) {
        victim = &c;
      }
    }
    if (victim == nullptr) return false;
    if (victim->phase != Phase::linger) ++n_evicted;
    kill(*victim);
    return true;
  }

  void kill(Conn& c) {
    if (c.dead) return;
    c.dead = true;
    disarm(c);
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
    graveyard.push_back(c.id);
    --open;
    n_open = open;
  }

  void arm(Conn& c, Clock::time_point when) {
    disarm(c);
    c.deadline = when;
    timers.emplace(when, c.id);
  }
  void disarm(Conn& c) {
    if (c.deadline) timers.erase({*c.deadline, c.id});
    c.deadline.reset();
  }

  void want(Conn& c, uint32_t events) {
    if (c.interest == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
    c.interest = events;
  }

  void expire(Clock::time_point now) {
    while (!timers.empty() && timers.begin()->first <= now) {
      const uint64_t id = timers.begin()->second;
      timers.erase(timers.begin());
      auto it = conns.find(id);
      if (it == conns.end() || it->second.dead) continue;
      Conn& c = it->second;
      c.deadline.reset();
      if (c.phase == Phase::linger) {
        kill(c);
        continue;
      }
      ++n_timed_out;
      if ((c.phase == Phase::head && !c.in.empty()) || c.phase == Phase::body) {
        answer_and_close(c, text_response(408, "request timeout"));
      } else {
        kill(c);  // idle, or a client that does not take its response
      }
    }
  }

  void on_event(Conn& c, uint32_t events) {
    if ((events & (EPOLLERR | EPOLLHUP)) != 0) return kill(c);
    switch (c.phase) {
      case Phase::head:
      case Phase::body: {
        const Io io = read_into(c.fd, c.in, k_read_budget);
        if (io == Io::error) return kill(c);
        if (io == Io::eof) c.peer_eof = true;
        if (c.idle && !c.in.empty()) {
          c.idle = false;
          c.since = Clock::now();
          arm(c, c.since + options.header_timeout);
        }
        if (c.phase == Phase::head) {
          try_head(c);
        } else {
          try_body(c);
        }
        // A client that stopped sending before its request was complete gets no answer.
        if (!c.dead && c.peer_eof && (c.phase == Phase::head || c.phase == Phase::body)) {
          kill(c);
        }
        return;
      }
      case Phase::write:
        return flush(c);
      case Phase::linger: {
        std::string sink;
        const Io io = read_into(c.fd, sink, k_read_budget);
        c.drained += sink.size();
        if (io == Io::eof || io == Io::error || c.drained >= k_linger_bytes) kill(c);
        return;
      }
      case Phase::handler:
        return;
    }
  }

  void try_head(Conn& c) {
    // RFC 9112 2.2: ignore empty lines before a request line (some clients add one after
    // a body).
    while (c.in.starts_with("\r\n")) c.in.erase(0, 2);
    const size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (c.in.size() > options.max_header_bytes) {
        answer_and_close(c, text_response(431, "request head too large"));
      }
      return;
    }
    if (end > options.max_header_bytes) {
      return answer_and_close(c, text_response(431, "request head too large"));
    }
    Request req;
    req.remote = c.remote;
    if (!parse_request_head(std::string_view(c.in).substr(0, end), req)) {
      return answer_and_close(c, text_response(400, "malformed request"));
    }
    c.in.erase(0, end + 4);
    c.priority = false;
    if (handler.is_priority) {
      try {
        c.priority = handler.is_priority(req);
      } catch (...) {
      }
    }
    if (handler.on_head) return dispatch(c, std::move(req), false);
    after_head(c, std::move(req));
  }

  void after_head(Conn& c, Request req) {
    if (req.headers.count("transfer-encoding") != 0) {
      return answer_and_close(c, text_response(411, "chunked bodies are not accepted"));
    }
    const size_t length = req.content_length.value_or(0);
    if (length > options.max_body_bytes) {
      return answer_and_close(
          c, text_response(
                 413, "body larger than " + std::to_string(options.max_body_bytes) + " bytes"));
    }
    std::string expect(req.header("expect"));
    for (auto& ch : expect) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const bool continue_wanted = c.in.size() < length && expect == "100-continue";
    c.req = std::move(req);
    c.phase = Phase::body;
    arm(c, Clock::now() + options.body_timeout);
    want(c, EPOLLIN);
    if (continue_wanted) {
      // Nothing else is queued on this socket now, so a short send fits its buffer.
      constexpr std::string_view k_continue = "HTTP/1.1 100 Continue\r\n\r\n";
      if (::send(c.fd, k_continue.data(), k_continue.size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
          static_cast<ssize_t>(k_continue.size())) {
        return kill(c);
      }
    }
    try_body(c);
  }

  void try_body(Conn& c) {
    const size_t length = c.req.content_length.value_or(0);
    if (c.in.size() < length) return;
    if (c.in.size() == length) {
      c.req.body = std::move(c.in);  // the usual case: no copy of a large body
      c.in.clear();
    } else {
      c.req.body = c.in.substr(0, length);  // pipelined bytes follow the body
      c.in.erase(0, length);
    }
    dispatch(c, std::move(c.req), true);
  }

  void dispatch(Conn& c, Request req, bool body) {
    c.phase = Phase::handler;
    disarm(c);
    want(c, 0);  // pipelined bytes wait in the kernel until this request is answered
    Job job;
    job.id = c.id;
    job.body = body;
    job.req = std::move(req);
    (c.priority ? priority : general)->post([this, j = std::move(job)]() mutable { run_job(j); });
  }

  void take_done() {
    std::vector<Job> jobs;
    {
      std::lock_guard<std::mutex> lock(done_mu);
      jobs.swap(done);
    }
    for (auto& job : jobs) {
      auto it = conns.find(job.id);
      if (it == conns.end() || it->second.dead) continue;  // dropped meanwhile
      Conn& c = it->second;
      if (job.body) {
        respond(c, *job.response, job.req.keep_alive);
      } else if (!job.response) {
        after_head(c, std::move(job.req));
      } else {
        // Answered from the head: the connection survives only if no body was announced.
        const bool bodyless = job.req.content_length.value_or(0) == 0 &&
                              job.req.headers.count("transfer-encoding") == 0;
        if (bodyless) {
          respond(c, *job.response, job.req.keep_alive);
        } else {
          answer_and_close(c, *job.response);
        }
      }
    }
  }

  void answer_and_close(Conn& c, const Response& r) { respond(c, r, false); }

  void respond(Conn& c, const Response& r, bool keep_alive_wanted) {
    ++c.served;
    ++n_requests;
    const bool keep = keep_alive_wanted && !c.peer_eof && !stopping &&
                      c.served < options.max_requests_per_connection;
    c.out = render_response_head(r, keep);
    c.out += r.body;
    c.out_off = 0;
    c.close_after = !keep;
    c.phase = Phase::write;
    arm(c, Clock::now() + options.write_timeout);
    flush(c);
  }

  void flush(Conn& c) {
    while (c.out_off < c.out.size()) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out_off += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return want(c, EPOLLOUT);
      } else {
        return kill(c);
      }
    }
    c.out.clear();
    c.out.shrink_to_fit();
    if (c.close_after) {
      ::shutdown(c.fd, SHUT_WR);
      c.phase = Phase::linger;
      c.drained = c.in.size();
      c.in.clear();
      arm(c, Clock::now() + k_linger);
      return want(c, EPOLLIN);
    }
    // Keep-alive: the next request may already be buffered (pipelining).
    c.phase = Phase::head;
    c.since = Clock::now();
    c.idle = c.in.empty();
    arm(c, c.since + (c.idle ? options.idle_timeout : options.header_timeout));
    want(c, EPOLLIN);
    if (!c.idle) try_head(c);
  }
};

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
  auto loop = std::make_unique<Loop>();
  loop->listen_fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (loop->listen_fd < 0) {
    ::freeaddrinfo(res);
    return make_error(ErrorCode::unavailable, "http: socket: " + errno_text(errno));
  }
  const int one = 1;
  ::setsockopt(loop->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // A full backlog drops SYNs (clients retry after a second); let bursts queue instead.
  const bool bound = ::bind(loop->listen_fd, res->ai_addr, res->ai_addrlen) == 0 &&
                     ::listen(loop->listen_fd, SOMAXCONN) == 0;
  const int err = errno;
  ::freeaddrinfo(res);
  if (!bound) {
    return make_error(ErrorCode::unavailable,
                      "http: cannot listen on " + options.listen + ": " + errno_text(err));
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(loop->listen_fd, reinterpret_cast<sockaddr*>(&ss), &len);
  char numeric[NI_MAXHOST] = {};
  char serv[NI_MAXSERV] = {};
  ::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, numeric, sizeof numeric, serv, sizeof serv,
                NI_NUMERICHOST | NI_NUMERICSERV);

  loop->epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  loop->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (loop->epoll_fd < 0 || loop->wake_fd < 0) {
    return make_error(ErrorCode::unavailable, "http: epoll/eventfd: " + errno_text(errno));
  }
  for (auto [fd, id] : {std::pair{loop->listen_fd, k_listen_id}, {loop->wake_fd, k_wake_id}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    if (::epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      return make_error(ErrorCode::unavailable, "http: epoll_ctl: " + errno_text(errno));
    }
  }
  loop->limit = effective_limit(options.max_connections);
  const size_t threads = std::max<size_t>(1, options.handler_threads);
  loop->options = std::move(options);
  loop->handler = std::move(handler);
  Loop* self = loop.get();
  loop->general = std::make_unique<WorkerPool>(threads);
  loop->priority = std::make_unique<WorkerPool>(1);
  loop->thread = std::thread([self] { self->run(); });

  std::unique_ptr<Listener> l(new Listener(std::move(loop)));
  l->m_host = numeric;
  l->m_port = std::atoi(serv);
  return l;
}

Listener::Listener(std::unique_ptr<Loop> loop) : m_loop(std::move(loop)) {}

Listener::~Listener() { stop(); }

void Listener::stop() { m_loop->shutdown(); }

size_t Listener::connection_limit() const { return m_loop->limit; }

ListenerStats Listener::stats() const {
  ListenerStats s;
  s.accepted = m_loop->n_accepted;
  s.requests = m_loop->n_requests;
  s.timed_out = m_loop->n_timed_out;
  s.evicted = m_loop->n_evicted;
  s.open = m_loop->n_open;
  return s;
}

}  // namespace flytecd::http
