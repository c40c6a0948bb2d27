#pragma once

// Test-only: Debian's lighttpd serving `git http-backend` as CGI on a free loopback port, as the
// current user, from a configuration written into a temporary directory. Two prefixes serve the
// same repositories (everything under `project_root`): /git/ anonymously and /private/ behind
// HTTP Basic auth checked by mod_auth against a plain user file. Stopped (process group) on
// destruction; start() may be called again after stop() to bring it back on the same port.

#include <filesystem>
#include <memory>
#include <string>

#include "tests/integration/git/git_test_support.hpp"
#include "tests/support/tools.hpp"

namespace git_test {

inline const char* k_lighttpd = "/usr/sbin/lighttpd";

inline bool have_lighttpd() { return ::access(k_lighttpd, X_OK) == 0; }

// A test that serves Git through lighttpd starts with this: skipped (or failed under
// FLYTECD_REQUIRE_TOOLS=1) when lighttpd is not installed, saying what installs it.
#define FLYTECD_REQUIRE_LIGHTTPD()                                                      \
  FLYTECD_REQUIRE_TOOL(git_test::have_lighttpd(), "lighttpd is not installed ("         \
                                                      << git_test::k_lighttpd           \
                                                      << "; packaging/setup-debian.sh " \
                                                         "--tests installs it)")

class LighttpdGit {
 public:
  // `users_file` holds "user:password" lines (mod_authn_file's plain backend).
  LighttpdGit(std::string project_root, std::string home, std::string work_dir,
              std::string users_file, int port = 0)
      : m_root(std::move(project_root)),
        m_home(std::move(home)),
        m_dir(std::move(work_dir)),
        m_users(std::move(users_file)),
        m_port(port > 0 ? port : free_port()) {
    stdfs::create_directories(stdfs::path(m_dir) / "www");
    m_backend = git(m_home, m_root, {"--exec-path"}) + "/git-http-backend";
    spit(stdfs::path(m_dir) / "lighttpd.conf", config());
  }
  ~LighttpdGit() { stop(); }
  LighttpdGit(const LighttpdGit&) = delete;
  LighttpdGit& operator=(const LighttpdGit&) = delete;

  // Starts lighttpd in the foreground (its own process group) and waits until it listens.
  bool start() {
    m_process = std::make_unique<Background>(
        std::vector<std::string>{k_lighttpd, "-D", "-f", conf()}, tool_env(m_home), log_file());
    return m_process->started() && wait_for_port(m_port);
  }
  // Stops it (SIGTERM to the group, SIGKILL if it lingers) and waits until the port is closed.
  void stop() {
    m_process.reset();
    for (int i = 0; i < 250 && port_open(m_port); ++i) std::this_thread::sleep_for(20ms);
  }

  int port() const { return m_port; }
  std::string conf() const { return (stdfs::path(m_dir) / "lighttpd.conf").string(); }
  std::string log_file() const { return (stdfs::path(m_dir) / "lighttpd.log").string(); }
  std::string log() const { return slurp(log_file()) + slurp(stdfs::path(m_dir) / "error.log"); }
  // http://127.0.0.1:<port>/git/<repo> (anonymous) or /private/<repo> (Basic auth).
  std::string url(const std::string& repo, bool authenticated = false) const {
    return "http://127.0.0.1:" + std::to_string(m_port) + (authenticated ? "/private/" : "/git/") +
           repo;
  }

 private:
  std::string config() const {
    const std::string env = "setenv.add-environment = (\"GIT_PROJECT_ROOT\" => \"" + m_root +
                            "\", \"GIT_HTTP_EXPORT_ALL\" => \"1\")\n";
    return "server.modules = (\"mod_alias\", \"mod_setenv\", \"mod_auth\", \"mod_authn_file\", "
           "\"mod_cgi\")\n"
           "server.bind = \"127.0.0.1\"\n"
           "server.port = " +
           std::to_string(m_port) + "\nserver.document-root = \"" + m_dir +
           "/www\"\n"
           "server.errorlog = \"" +
           m_dir +
           "/error.log\"\n"
           "server.upload-dirs = (\"" +
           m_dir +
           "\")\n"
           "auth.backend = \"plain\"\n"
           "auth.backend.plain.userfile = \"" +
           m_users +
           "\"\n"
           "alias.url = (\"/git\" => \"" +
           m_backend + "\", \"/private\" => \"" + m_backend +
           "\")\n"
           "$HTTP[\"url\"] =~ \"^/git/\" {\n  cgi.assign = (\"\" => \"\")\n  " +
           env +
           "}\n"
           "$HTTP[\"url\"] =~ \"^/private/\" {\n  cgi.assign = (\"\" => \"\")\n  " +
           env +
           "  auth.require = (\"\" => (\"method\" => \"basic\", \"realm\" => \"git\", "
           "\"require\" => \"valid-user\"))\n}\n";
  }

  std::string m_root, m_home, m_dir, m_users, m_backend;
  int m_port = 0;
  std::unique_ptr<Background> m_process;
};

}  // namespace git_test
