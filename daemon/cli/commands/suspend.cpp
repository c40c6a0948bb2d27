// `flytecd suspend [--reason R] [-p P]`: a running daemon keeps polling and reporting drift but
// writes nothing (or nothing of one project) until resumed.
#include "daemon/cli/commands/suspend.hpp"

#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"

namespace flytecd::cli {
namespace {

// "alice@host via flytecd" for the suspension's "by" (the daemon adds the remote address).
// The user: $USER, else the OS account of the process (getpwuid), else "uid <n>".
std::string who() {
  const char* user = std::getenv("USER");
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string w;
  if (user && *user) {
    w = user;
  } else if (const struct passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name && *pw->pw_name) {
    w = pw->pw_name;
  } else {
    w = "uid " + std::to_string(::getuid());
  }
  if (host[0]) w += std::string("@") + host;
  return w + " via flytecd cli";
}

// `suspend --project P` / `resume --project P`: that project only.
int remote_project_suspend(const RemoteOptions& remote, bool suspend, const std::string& project,
                           const std::string& reason, std::ostream& out, std::ostream& err) {
  const char* cmd = suspend ? "flytecd suspend" : "flytecd resume";
  nlohmann::json body{{"project", project}};
  if (suspend) {
    body["reason"] = reason;
    body["by"] = who();
  }
  auto r = daemon_request(remote, "POST", suspend ? "/api/v1/suspend" : "/api/v1/resume", body);
  if (!r) {
    err << cmd << " --project " << project << ": " << r.error().message << "\n";
    return 1;
  }
  // A daemon that does not know project suspension reads the body's reason alone and suspends
  // (or resumes) everything: say so rather than report what did not happen.
  if (str(*r, "project") != project) {
    err << cmd << " --project " << project << ": the daemon at " << remote.server
        << " does not support suspending one project (an older flytecd) and "
        << (suspend ? "suspended every project; run `flytecd resume` to undo it"
                    : "resumed every project")
        << "\n";
    return 1;
  }
  if (suspend) {
    const auto s = r->value("suspended", nlohmann::json());
    out << "project " << project << " suspended since "
        << (s.is_object() ? str(s, "since") : std::string("?"))
        << ": it is planned and its drift reported, nothing of it is written until `flytecd "
           "resume --project "
        << project << "`; other projects still apply\n";
  } else {
    out << "project " << project
        << " resumed: a reconcile starts now (flytecd status shows the result)\n";
  }
  return 0;
}

}  // namespace

int run_remote_suspend(const RemoteFlags& flags, bool suspend, const std::string& reason,
                       std::ostream& out, std::ostream& err, const std::string& project) {
  const char* cmd = suspend ? "flytecd suspend" : "flytecd resume";
  auto remote = resolve_remote(flags);
  if (!remote) {
    err << cmd << ": " << remote.error().message << "\n";
    return 1;
  }
  if (!project.empty()) return remote_project_suspend(*remote, suspend, project, reason, out, err);
  nlohmann::json body = nullptr;
  if (suspend) body = {{"reason", reason}, {"by", who()}};
  auto r = daemon_request(*remote, "POST", suspend ? "/api/v1/suspend" : "/api/v1/resume", body);
  if (!r) {
    err << cmd << ": " << r.error().message << "\n";
    return 1;
  }
  if (suspend) {
    const auto s = r->value("suspended", nlohmann::json());
    out << "suspended since " << (s.is_object() ? str(s, "since") : std::string("?"))
        << ": sources are still polled and drift reported; nothing is written until `flytecd "
           "resume`\n";
  } else {
    out << "resumed: a reconcile starts now (flytecd status shows the result)\n";
  }
  return 0;
}

Runner add_suspend_command(CLI::App& app, CommandContext& ctx) {
  struct State {
    std::string reason, project;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand(
      "suspend",
      "Suspend a running daemon: it keeps polling and reporting drift, but writes nothing");
  ctx.add_remote_options(cmd, true);
  cmd->add_option("--reason", st->reason, "Why (shown in status and the log)");
  cmd->add_option("-p,--project", st->project,
                  "Suspend only this project's writes: it is planned, the others still apply")
      ->type_name("PROJECT");
  cmd->footer(std::string(k_remote_token_footer) +
              "The suspension is kept in the state directory: a restart stays "
              "suspended until `flytecd resume`. With --project P only P is suspended\n"
              "(status suspendedProjects, metric flytecd_project_suspended{project}) until\n"
              "`flytecd resume --project P`.\n"
              "Examples:\n  flytecd suspend --reason 'maintenance' --token-file "
              "/etc/flytecd/sync-token\n"
              "  flytecd suspend --project ml-training --reason 'quota review'\n");
  const RemoteFlags* remote = &ctx.remote;
  return when_parsed(cmd, [st, remote]() -> int {
    return run_remote_suspend(*remote, true, st->reason, std::cout, std::cerr, st->project);
  });
}

}  // namespace flytecd::cli
