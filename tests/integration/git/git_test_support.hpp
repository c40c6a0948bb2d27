#pragma once

// Test-only helpers for tests/integration/git_source_test.cpp: temp directories, the `git` CLI,
// background servers (`git daemon`, a loopback HTTP server running `git http-backend` as CGI)
// and free ports. Everything binds 127.0.0.1 and every wait is bounded.
//

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "daemon/common/subprocess.hpp"
#include "sources/git/known_hosts.hpp"

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
    auto found = flytecd::find_executable(args[0]);
    if (!found) return Run{127, "", args[0] + ": not found"};
    args[0] = *found;
  }
  auto r = flytecd::run_process(args, input, tool_env(home, extra_env), 60s);
  if (!r) return Run{-1, "", r.error().message};
  return Run{r->exit_code, r->out, r->err};
}

inline bool have_tool(const std::string& name) {
  return flytecd::find_executable(name).has_value();
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

// A working repository `work` and the bare repository `remote` it pushes to, both on branch main
// and in one temporary directory, with a HOME of their own for git.
struct WorkAndRemote {
  TempDir tmp;
  std::string home = tmp.str("home");
  std::string work = tmp.str("work");
  std::string remote;
  explicit WorkAndRemote(const std::string& remote_path = "remote.git")
      : remote(tmp.str(remote_path)) {
    stdfs::create_directories(home);
    git(home, tmp.str(), {"init", "-q", "-b", "main", work});
    git(home, tmp.str(), {"init", "-q", "--bare", "-b", "main", remote});
  }
};

// Polls `pred` every 50 ms until it holds or `seconds` pass; the last answer decides.
template <typename Pred>
bool eventually(Pred pred, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
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

// ---- a loopback cpp-httplib server that runs `git http-backend` as a CGI -----------------

class GitHttpServer {
 public:
  // Serves the repositories under `project_root`; requires HTTP Basic user:password. With a
  // certificate and key (PEM files) it serves HTTPS.
  GitHttpServer(std::string project_root, std::string home, std::string user, std::string password,
                const std::string& tls_cert = "", const std::string& tls_key = "")
      : m_root(std::move(project_root)),
        m_home(std::move(home)),
        m_user(std::move(user)),
        m_password(std::move(password)),
        m_server(tls_cert.empty()
                     ? std::make_unique<httplib::Server>()
                     : std::make_unique<httplib::SSLServer>(tls_cert.c_str(), tls_key.c_str())) {
    m_backend = git(m_home, m_root, {"--exec-path"}) + "/git-http-backend";
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res);
    };
    m_server->Get(".*", handler);
    m_server->Post(".*", handler);
    m_port = m_server->bind_to_any_port("127.0.0.1");
    m_thread = std::thread([this] { m_server->listen_after_bind(); });
    for (int i = 0; i < 500 && !m_server->is_running(); ++i) std::this_thread::sleep_for(10ms);
  }
  ~GitHttpServer() {
    m_server->stop();
    m_thread.join();
  }
  GitHttpServer(const GitHttpServer&) = delete;
  GitHttpServer& operator=(const GitHttpServer&) = delete;

  int port() const { return m_port; }
  bool running() const { return m_port > 0 && m_server->is_running(); }
  int authorized_requests() const { return m_authorized; }
  int rejected_requests() const { return m_rejected; }

 private:
  bool authorized(const httplib::Request& req) const {
    const std::string header = req.get_header_value("Authorization");
    if (header.rfind("Basic ", 0) != 0) return false;
    auto decoded = flytecd::sources::git::base64_decode(header.substr(6));
    return decoded && *decoded == m_user + ":" + m_password;
  }

  void handle(const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req)) {
      ++m_rejected;
      res.status = 401;
      res.set_header("WWW-Authenticate", "Basic realm=\"git\"");
      return;
    }
    ++m_authorized;
    auto q = req.target.find('?');
    std::vector<std::string> env = tool_env(
        m_home,
        {"GIT_PROJECT_ROOT=" + m_root, "GIT_HTTP_EXPORT_ALL=1", "PATH_INFO=" + req.path,
         "QUERY_STRING=" + (q == std::string::npos ? std::string() : req.target.substr(q + 1)),
         "REQUEST_METHOD=" + req.method, "CONTENT_TYPE=" + req.get_header_value("Content-Type"),
         "CONTENT_LENGTH=" + std::to_string(req.body.size()), "REMOTE_USER=" + m_user,
         "REMOTE_ADDR=127.0.0.1", "GATEWAY_INTERFACE=CGI/1.1", "SERVER_PROTOCOL=HTTP/1.1"});
    if (req.has_header("Content-Encoding"))
      env.push_back("HTTP_CONTENT_ENCODING=" + req.get_header_value("Content-Encoding"));
    if (req.has_header("Git-Protocol"))
      env.push_back("HTTP_GIT_PROTOCOL=" + req.get_header_value("Git-Protocol"));
    auto out = flytecd::run_process({m_backend}, req.body, env, 30s);
    if (!out) {
      res.status = 500;
      return;
    }
    // CGI response: headers (with an optional "Status:"), a blank line, the body.
    const std::string& cgi = out->out;
    size_t sep = cgi.find("\r\n\r\n"), skip = 4;
    if (sep == std::string::npos) {
      sep = cgi.find("\n\n");
      skip = 2;
    }
    if (sep == std::string::npos) {
      res.status = 502;
      return;
    }
    res.status = 200;
    std::string content_type = "application/octet-stream";
    std::istringstream lines(cgi.substr(0, sep));
    std::string line;
    while (std::getline(lines, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      std::string value = line.substr(line.find_first_not_of(' ', colon + 1));
      if (name == "Status")
        res.status = std::stoi(value);
      else if (name == "Content-Type")
        content_type = value;
      else
        res.set_header(name.c_str(), value);
    }
    res.set_content(cgi.substr(sep + skip), content_type.c_str());
  }

  std::string m_root, m_home, m_user, m_password, m_backend;
  std::unique_ptr<httplib::Server> m_server;
  int m_port = 0;
  std::atomic<int> m_authorized{0}, m_rejected{0};
  std::thread m_thread;
};

}  // namespace git_test
