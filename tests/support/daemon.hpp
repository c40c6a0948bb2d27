// The flytecd binary as a child process of an integration test: a fresh directory for its files,
// `flytecd run --config FILE` forked with its output in a log file, a bounded stop, the JSON of
// its HTTP API, and the shell and git commands that set up its Git remote.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "test_paths.hpp"

namespace flytecd_test {

// The whole file, "" when it cannot be read.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// <temp>/<name>-<pid>, emptied if it exists; the test removes it when it passes.
inline std::filesystem::path fresh_dir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs a shell command; the test fails unless it exits 0.
inline void sh(const std::string& cmd) {
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

// `git rev-parse HEAD` in `repo`.
inline std::string git_head(const std::filesystem::path& repo) {
  std::string out;
  FILE* p = popen(("git -C " + repo.string() + " rev-parse HEAD").c_str(), "r");
  char buf[128];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Forks `flytecd run --config CONFIG` with stdout and stderr in LOG (truncated, or appended to
// with `append`); the child's pid, or -1.
inline pid_t spawn_run(const std::string& config, const std::string& log, bool append = false) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execl(FLYTECD_BINARY, FLYTECD_BINARY, "run", "--config", config.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// Waits (polling every 50 ms, `seconds` at most) until `pid` exits; its wait status in `wstatus`.
inline bool wait_exit(pid_t pid, int& wstatus, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &wstatus, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ::waitpid(pid, &wstatus, WNOHANG) == pid;
}

// SIGTERM, then waits as wait_exit does.
inline bool terminate(pid_t pid, int& wstatus, double seconds) {
  ::kill(pid, SIGTERM);
  return wait_exit(pid, wstatus, seconds);
}

// SIGKILL and reap.
inline void kill_hard(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

// A daemon that a failing REQUIRE must not leave running: SIGKILL on destruction unless `pid` was
// reset to 0 (the test stopped it itself).
struct Reaper {
  pid_t pid;
  ~Reaper() {
    if (pid > 0 && ::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
  }
};

// The daemon as a child process; SIGTERM (then SIGKILL) on destruction.
class DaemonProcess {
 public:
  DaemonProcess(const std::string& config, const std::string& log)
      : m_pid(spawn_run(config, log)) {}
  ~DaemonProcess() { stop(); }
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;
  bool started() const { return m_pid > 0; }
  // SIGTERM, bounded wait, SIGKILL; returns the exit status (or -1).
  int stop() {
    if (m_pid <= 0) return -1;
    int status = 0;
    bool exited = terminate(m_pid, status, 20);
    if (!exited) kill_hard(m_pid);
    m_pid = -1;
    return exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t m_pid = -1;
};

// GET `path` of a daemon's HTTP server as JSON; an empty object unless it answers 200.
inline nlohmann::json get_json(httplib::Client& http, const std::string& path = "/api/v1/status") {
  auto r = http.Get(path);
  if (!r || r->status != 200) return nlohmann::json::object();
  return nlohmann::json::parse(r->body, nullptr, false);
}

// The first lines of a config.yaml for a daemon in `dir`: state in dir/state, the repository
// directory `repo`, a 1 h interval, the FlyteAdmin at `admin` (plaintext), the HTTP API on
// `port` with the sync token "sync-secret" (written to dir/sync-token). Callers append sections.
inline std::string daemon_config(const std::filesystem::path& dir, const std::string& repo,
                                 const std::string& admin, int port) {
  std::ofstream(dir / "sync-token") << "sync-secret\n";
  return "stateDir: " + (dir / "state").string() + "\nrepo: " + repo +
         "\ninterval: 1h\nadmin: {endpoint: " + admin + ", insecure: true}\n" +
         "http: {listen: 127.0.0.1:" + std::to_string(port) +
         ", syncTokenFile: " + (dir / "sync-token").string() + "}\n";
}

// `flytecd run` with dir/config.yaml, its output in dir/daemon.log, then a wait (60 s at most)
// for its first pass to be reported at /api/v1/status on `port`; the test fails unless both
// happen. The pid, for the test to stop.
inline pid_t spawn_and_sync(const std::filesystem::path& dir, int port) {
  const pid_t pid = spawn_run((dir / "config.yaml").string(), (dir / "daemon.log").string());
  REQUIRE(pid >= 0);
  INFO(slurp(dir / "daemon.log"));
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!get_json(http).contains("lastSync") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(get_json(http).contains("lastSync"));
  return pid;
}

// One `flytecd run` of several (leader election): its own directory (config.yaml, and daemon.log
// appended to across restarts), HTTP port and name.
struct Replica {
  std::string name;
  std::filesystem::path dir;
  int port = 0;
  pid_t pid = -1;

  void start() {
    pid = spawn_run((dir / "config.yaml").string(), (dir / "daemon.log").string(), true);
  }
  void kill_hard() {
    if (pid <= 0) return;
    flytecd_test::kill_hard(pid);
    pid = -1;
  }
  void stop() {
    if (pid <= 0) return;
    int st = 0;
    if (!terminate(pid, st, 15)) kill_hard();
    pid = -1;
  }
  httplib::Result get(const std::string& path) const {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(1);
    c.set_read_timeout(2);
    return c.Get(path);
  }
  nlohmann::json status() const {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(1);
    c.set_read_timeout(2);
    return get_json(c);
  }
  // 1, 0, or -1 when the metric cannot be read.
  int leader_metric() const {
    auto r = get("/metrics");
    if (!r || r->status != 200) return -1;
    if (r->body.find("\nflytecd_leader 1") != std::string::npos) return 1;
    if (r->body.find("\nflytecd_leader 0") != std::string::npos) return 0;
    return -1;
  }
  bool leads() const {
    return status().value("leader", nlohmann::json::object()).value("isLeader", false);
  }
  bool reconciled() const { return status().contains("lastSync"); }
  std::string log() const { return slurp(dir / "daemon.log"); }
};

// The git command line of the tests' fixed identity.
inline const std::string k_git =
    "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main";

// A working copy DIR/work holding the example repository under flyte/, committed ("initial"),
// cloned to the bare remote DIR/remote.git and given it as origin.
inline void example_remote(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const std::string work = (dir / "work").string();
  sh(k_git + " init -q " + work);
  fs::copy(fs::path(FLYTECD_SOURCE_DIR) / "repo-layout-example", dir / "work/flyte",
           fs::copy_options::recursive);
  sh(k_git + " -C " + work + " add -A && " + k_git + " -C " + work + " commit -qm initial");
  sh("git clone -q --bare " + work + " " + (dir / "remote.git").string());
  sh(k_git + " -C " + work + " remote add origin " + (dir / "remote.git").string());
}

}  // namespace flytecd_test
