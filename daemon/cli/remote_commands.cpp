// The rows of the commands for a running daemon, over its HTTP API: status, get objects, sync,
// suspend, resume, version.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/cli/daemon_commands.hpp"
#include "daemon/cli/get_objects.hpp"
#include "daemon/cli/sync_command.hpp"
#include "daemon/cli/version_command.hpp"
#include "daemon/common/duration.hpp"

namespace flytecd::cli {

const char* const k_remote_token_footer =
    "The token (POST endpoints) comes from --token-file FILE, else FLYTECD_SYNC_TOKEN, else the\n"
    "config's http.syncTokenFile; it is never taken from the command line.\n";

Runner add_status_command(CLI::App& app, CommandContext& ctx) {
  auto format = std::make_shared<std::string>("text");
  auto* cmd = app.add_subcommand("status", "Show a running daemon's status (GET /api/v1/status)");
  ctx.add_remote_options(cmd, false);
  cmd->add_option("-o,--output", *format, "text or json (the raw document)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->footer(
      "Prints the revision, the last sync (outcome, summary, error), drift, suspension and "
      "leader.\n"
      "Exit codes: 0 the last sync succeeded (also while suspended), 1 the daemon is unreachable,\n"
      "no sync has finished yet, or the last one failed or was refused.\n"
      "Examples:\n"
      "  flytecd status --config /etc/flytecd/config.yaml\n"
      "  flytecd status --server http://127.0.0.1:8080 -o json | jq .drift\n");
  const RemoteFlags* remote = &ctx.remote;
  return [cmd, format, remote]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_remote_status(*remote, *format, std::cout, std::cerr);
  };
}

Runner add_get_objects_row(CLI::App&, CommandContext& ctx) {
  return add_get_objects_command(*ctx.get, ctx.remote, ctx.add_remote_options);
}

Runner add_sync_command(CLI::App& app, CommandContext& ctx) {
  struct State {
    SyncOptions options;
    std::string timeout = "5m";
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("sync", "Ask a running daemon to reconcile now");
  ctx.add_remote_options(cmd, true);
  auto* wait =
      cmd->add_flag("--wait", st->options.wait,
                    "Wait for the pass this request starts and exit as apply would for it");
  cmd->add_option("--timeout", st->timeout, "With --wait: how long to wait (default 5m)")
      ->type_name("DURATION")
      ->needs(wait);
  cmd->footer(std::string(k_remote_token_footer) +
              "With --wait the last line is the pass's verdict and the exit code apply's: 0\n"
              "converged, 1 failed, refused, or the new revision was rejected or could not be\n"
              "read; while the daemon is suspended the pass only plans and the exit code is\n"
              "plan --live's (0 no changes, 2 changes pending or drift). 3: no pass finished\n"
              "within --timeout (it may still run).\n"
              "Examples:\n  FLYTECD_SYNC_TOKEN=... flytecd sync\n"
              "  flytecd sync --wait --timeout 2m --config /etc/flytecd/config.yaml\n");
  const RemoteFlags* remote = &ctx.remote;
  return [cmd, st, remote]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    auto timeout =
        parse_duration(st->timeout, DurationRange{std::chrono::seconds(1), std::chrono::hours(24)});
    if (!timeout) {
      std::cerr << "flytecd sync: --timeout: " << timeout.error().message << "\n";
      return 1;
    }
    st->options.timeout = *timeout;
    return run_remote_sync(*remote, st->options, std::cout, std::cerr);
  };
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
  return [cmd, st, remote]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_remote_suspend(*remote, true, st->reason, std::cout, std::cerr, st->project);
  };
}

Runner add_resume_command(CLI::App& app, CommandContext& ctx) {
  auto project = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("resume", "Resume a suspended daemon (it reconciles at once)");
  ctx.add_remote_options(cmd, true);
  cmd->add_option("-p,--project", *project,
                  "Resume only this project (suspended with suspend --project)")
      ->type_name("PROJECT");
  cmd->footer(std::string(k_remote_token_footer) +
              "Example:\n  flytecd resume --token-file /etc/flytecd/sync-token\n");
  const RemoteFlags* remote = &ctx.remote;
  return [cmd, project, remote]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_remote_suspend(*remote, false, "", std::cout, std::cerr, *project);
  };
}

Runner add_version_row(CLI::App& app, CommandContext& ctx) {
  return add_version_command(app, ctx.remote, ctx.add_remote_options);
}

}  // namespace flytecd::cli
