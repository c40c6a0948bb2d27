#include "daemon/common/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace flytecd {
namespace {

constexpr size_t k_max_output = 1u << 20;

// Closes a descriptor once, on every path.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::vector<char*> c_strings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

bool set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::optional<std::string> find_executable(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    auto end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || dir.front() != '/') continue;  // never resolve relative to the cwd
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const std::string& input,
                                  const std::vector<std::string>& env,
                                  std::chrono::milliseconds timeout) {
  // stdin is a socket pair rather than a pipe so writes can use MSG_NOSIGNAL: a child that exits
  // early must not raise SIGPIPE in the daemon.
  int in_pair[2], out_pipe[2], err_pipe[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0)
    return make_error(ErrorCode::internal, std::string("socketpair: ") + std::strerror(errno));
  Fd in_parent(in_pair[0]), in_child(in_pair[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return make_error(ErrorCode::internal, std::string("pipe: ") + std::strerror(errno));
  Fd out_parent(out_pipe[0]), out_child(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0)
    return make_error(ErrorCode::internal, std::string("pipe: ") + std::strerror(errno));
  Fd err_parent(err_pipe[0]), err_child(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_child.fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_child.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_child.fd, 2);
  // The child starts with default signal handling and an empty mask whatever the daemon uses.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  auto args = c_strings(argv);
  auto envp = c_strings(env);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv.at(0).c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return make_error(ErrorCode::internal, "cannot start " + argv.at(0) + ": " + std::strerror(rc));
  in_child.reset();
  out_child.reset();
  err_child.reset();
  set_nonblocking(in_parent.fd);
  set_nonblocking(out_parent.fd);
  set_nonblocking(err_parent.fd);
  if (input.empty()) in_parent.reset();

  ProcessOutput result;
  size_t written = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  while (out_parent.fd >= 0 || err_parent.fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    std::array<pollfd, 3> fds{
        {{in_parent.fd, POLLOUT, 0}, {out_parent.fd, POLLIN, 0}, {err_parent.fd, POLLIN, 0}}};
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (in_parent.fd >= 0 && fds[0].revents != 0) {
      ssize_t w =
          ::send(in_parent.fd, input.data() + written, input.size() - written, MSG_NOSIGNAL);
      if (w > 0) written += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size())
        in_parent.reset();  // EOF for the child (or it stopped reading)
    }
    Fd* readers[2] = {&out_parent, &err_parent};
    std::string* sinks[2] = {&result.out, &result.err};
    for (int i = 0; i < 2; ++i) {
      if (readers[i]->fd < 0 || fds[static_cast<size_t>(i) + 1].revents == 0) continue;
      char buf[4096];
      ssize_t r = ::read(readers[i]->fd, buf, sizeof buf);
      if (r > 0) {
        if (sinks[i]->size() < k_max_output) sinks[i]->append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        readers[i]->reset();
      }
    }
  }
  if (timed_out) ::kill(pid, SIGKILL);
  result.exit_code = wait_child(pid);
  if (timed_out)
    return make_error(ErrorCode::timeout, argv.at(0) + " did not finish within " +
                                              std::to_string(timeout.count()) + " ms");
  return result;
}

}  // namespace flytecd
