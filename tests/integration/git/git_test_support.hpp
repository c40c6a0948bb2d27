#pragma once

// Test-only helpers for tests/integration/git_source_test.cpp: temp directories, the `git` CLI,
// background servers (`git daemon`, a loopback HTTP server running `git http-backend` as CGI)
// and free ports. Everything binds 127.0.0.1 and every wait is bounded.
//
// The HTTP server is written here rather than with cpp-httplib: Debian's cpp-httplib is a
// compiled library (libcpp-httplib.so) that flytecd_unit_tests does not link.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sources/git/known_hosts.hpp"
#include "sources/git/subprocess.hpp"

namespace git_test {

namespace stdfs = std::filesystem;
using namespace std::chrono_literals;

inline std::string slurp(const stdfs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const stdfs::path& p, const std::string& text) {
  stdfs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (stdfs::temp_directory_path() / "flytecd-git-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    m_path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    stdfs::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const stdfs::path& path() const { return m_path; }
  std::string str(const std::string& sub = "") const {
    return sub.empty() ? m_path.string() : (m_path / sub).string();
  }

 private:
  stdfs::path m_path;
};

// A hermetic environment for git and its helpers: no user or system config leaks in.
inline std::vector<std::string> tool_env(const std::string& home,
                                         const std::vector<std::string>& extra = {}) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home,
                                  "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0"};
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

inline Run run(const std::vector<std::string>& argv, const std::string& home,
               const std::string& input = "", const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> args = argv;
  if (!args.empty() && args[0].find('/') == std::string::npos) {
    auto found = flytecd::sources::git::find_executable(args[0]);
    if (!found) return Run{127, "", args[0] + ": not found"};
    args[0] = *found;
  }
  auto r = flytecd::sources::git::run_process(args, input, tool_env(home, extra_env), 60s);
  if (!r) return Run{-1, "", r.error().message};
  return Run{r->exit_code, r->out, r->err};
}

inline bool have_tool(const std::string& name) {
  return flytecd::sources::git::find_executable(name).has_value();
}

// `git -C dir <args>` as a fixed test identity; throws with git's stderr on failure.
inline std::string git(const std::string& home, const std::string& dir,
                       const std::vector<std::string>& args,
                       const std::vector<std::string>& config = {}) {
  std::vector<std::string> argv = {"git",
                                   "-C",
                                   dir,
                                   "-c",
                                   "user.name=Flytecd Test",
                                   "-c",
                                   "user.email=test@example.com",
                                   "-c",
                                   "init.defaultBranch=main",
                                   "-c",
                                   "commit.gpgsign=false"};
  for (const auto& c : config) {
    argv.push_back("-c");
    argv.push_back(c);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  Run r = run(argv, home);
  if (r.code != 0) {
    std::string cmd;
    for (const auto& a : args) cmd += " " + a;
    throw std::runtime_error("git" + cmd + " failed: " + r.err);
  }
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// A port that was free a moment ago (the kernel picks it; we release it for the server).
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A socket listening on 127.0.0.1:port that never accepts: connects succeed, nothing answers.
class SilentServer {
 public:
  SilentServer() {
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(m_fd, 16);
    socklen_t len = sizeof addr;
    ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&addr), &len);
    m_port = ntohs(addr.sin_port);
  }
  ~SilentServer() { ::close(m_fd); }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;
  int port() const { return m_port; }

 private:
  int m_fd = -1;
  int m_port = 0;
};

inline bool port_open(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// Waits (bounded) until something listens on the port.
inline bool wait_for_port(int port, std::chrono::milliseconds limit = 10s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (port_open(port)) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

// A background process in its own process group, terminated (group-wide) on destruction.
class Background {
 public:
  Background(const std::vector<std::string>& argv, const std::vector<std::string>& env,
             const std::string& log_file) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    std::vector<char*> args, envp;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    if (::posix_spawn(&m_pid, argv.at(0).c_str(), &actions, &attr, args.data(), envp.data()) != 0)
      m_pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  ~Background() {
    if (m_pid <= 0) return;
    ::kill(-m_pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(m_pid, &status, WNOHANG) == m_pid) return;
      std::this_thread::sleep_for(20ms);
    }
    ::kill(-m_pid, SIGKILL);
    ::waitpid(m_pid, &status, 0);
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  bool started() const { return m_pid > 0; }

 private:
  pid_t m_pid = -1;
};

// ---- a loopback HTTP/1.1 server that runs `git http-backend` as a CGI --------------------

inline std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class GitHttpServer {
 public:
  // Serves the repositories under `project_root`; requires HTTP Basic user:password.
  GitHttpServer(std::string project_root, std::string home, std::string user, std::string password)
      : m_root(std::move(project_root)),
        m_home(std::move(home)),
        m_user(std::move(user)),
        m_password(std::move(password)) {
    m_backend = git(m_home, m_root, {"--exec-path"}) + "/git-http-backend";
    m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(m_listen, 16);
    socklen_t len = sizeof addr;
    ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len);
    m_port = ntohs(addr.sin_port);
    m_thread = std::thread([this] { serve(); });
  }
  ~GitHttpServer() {
    m_stop = true;
    ::shutdown(m_listen, SHUT_RDWR);
    m_thread.join();
    ::close(m_listen);
  }
  GitHttpServer(const GitHttpServer&) = delete;
  GitHttpServer& operator=(const GitHttpServer&) = delete;

  int port() const { return m_port; }
  int authorized_requests() const { return m_authorized; }
  int rejected_requests() const { return m_rejected; }

 private:
  struct Request {
    std::string method, path, query;
    std::map<std::string, std::string> headers;  // lower-cased names
    std::string body;
  };

  void serve() {
    while (!m_stop) {
      pollfd p{m_listen, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      handle(fd);
      ::close(fd);
    }
  }

  // Reads exactly what is needed with a bounded wait per read.
  bool fill(int fd, std::string& buf) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return false;
    char chunk[16384];
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
    return true;
  }

  bool read_request(int fd, Request& req) {
    std::string buf;
    size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos)
      if (!fill(fd, buf) || buf.size() > (1u << 20)) return false;
    std::istringstream head(buf.substr(0, head_end));
    std::string line, target, version;
    std::getline(head, line);
    std::istringstream first(line);
    first >> req.method >> target >> version;
    auto q = target.find('?');
    req.path = target.substr(0, q);
    req.query = q == std::string::npos ? "" : target.substr(q + 1);
    while (std::getline(head, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      req.headers[lower(line.substr(0, colon))] = value;
    }
    std::string rest = buf.substr(head_end + 4);
    if (lower(req.headers["transfer-encoding"]) == "chunked") {
      for (;;) {
        size_t eol;
        while ((eol = rest.find("\r\n")) == std::string::npos)
          if (!fill(fd, rest)) return false;
        size_t size = std::stoul(rest.substr(0, eol), nullptr, 16);
        while (rest.size() < eol + 2 + size + 2)
          if (!fill(fd, rest)) return false;
        req.body += rest.substr(eol + 2, size);
        rest.erase(0, eol + 2 + size + 2);
        if (size == 0) break;
      }
    } else if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
      size_t length = std::stoul(it->second);
      while (rest.size() < length)
        if (!fill(fd, rest)) return false;
      req.body = rest.substr(0, length);
    }
    return true;
  }

  static void send_all(int fd, const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  }

  bool authorized(const Request& req) const {
    auto it = req.headers.find("authorization");
    if (it == req.headers.end() || it->second.rfind("Basic ", 0) != 0) return false;
    auto decoded = flytecd::sources::git::base64_decode(it->second.substr(6));
    return decoded && *decoded == m_user + ":" + m_password;
  }

  void handle(int fd) {
    Request req;
    if (!read_request(fd, req)) return;
    if (!authorized(req)) {
      ++m_rejected;
      send_all(fd,
               "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\n"
               "Content-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    ++m_authorized;
    std::vector<std::string> env = tool_env(
        m_home, {"GIT_PROJECT_ROOT=" + m_root, "GIT_HTTP_EXPORT_ALL=1", "PATH_INFO=" + req.path,
                 "QUERY_STRING=" + req.query, "REQUEST_METHOD=" + req.method,
                 "CONTENT_TYPE=" + req.headers["content-type"],
                 "CONTENT_LENGTH=" + std::to_string(req.body.size()), "REMOTE_USER=" + m_user,
                 "REMOTE_ADDR=127.0.0.1", "GATEWAY_INTERFACE=CGI/1.1", "SERVER_PROTOCOL=HTTP/1.1"});
    if (auto enc = req.headers.find("content-encoding"); enc != req.headers.end())
      env.push_back("HTTP_CONTENT_ENCODING=" + enc->second);
    if (auto proto = req.headers.find("git-protocol"); proto != req.headers.end())
      env.push_back("HTTP_GIT_PROTOCOL=" + proto->second);
    auto out = flytecd::sources::git::run_process({m_backend}, req.body, env, 30s);
    if (!out) {
      send_all(fd, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    // CGI response: headers (with an optional "Status:"), a blank line, the body.
    const std::string& cgi = out->out;
    size_t sep = cgi.find("\r\n\r\n");
    size_t skip = 4;
    if (sep == std::string::npos) {
      sep = cgi.find("\n\n");
      skip = 2;
    }
    std::string status = "200 OK", headers;
    std::istringstream lines(cgi.substr(0, sep == std::string::npos ? 0 : sep));
    std::string line;
    while (std::getline(lines, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.rfind("Status:", 0) == 0)
        status = line.substr(line.find_first_not_of(' ', 7));
      else if (!line.empty())
        headers += line + "\r\n";
    }
    std::string body = sep == std::string::npos ? cgi : cgi.substr(sep + skip);
    send_all(fd, "HTTP/1.1 " + status + "\r\n" + headers + "Content-Length: " +
                     std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  }

  std::string m_root, m_home, m_user, m_password, m_backend;
  int m_listen = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_authorized{0}, m_rejected{0};
  std::thread m_thread;
};

}  // namespace git_test
