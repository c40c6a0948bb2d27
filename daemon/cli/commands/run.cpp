// `flytecd run`: the daemon: polls Git, reconciles, serves /metrics, /healthz, /readyz,
// /api/v1/status and webhooks until stopped.
#include <CLI/CLI.hpp>

#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/run/daemon.hpp"

namespace flytecd::cli {

int run_daemon(const TargetOptions& opt) {
  run::Daemon daemon([opt] { return resolve_config(opt); });
  return daemon.run();
}

Runner add_run_command(CLI::App& app, CommandContext&) {
  auto opt = std::make_shared<TargetOptions>();
  auto* cmd =
      app.add_subcommand("run",
                         "Run the daemon: poll Git, reconcile, serve /metrics, /healthz, /readyz, "
                         "/api/v1/status and webhooks");
  add_target_options(cmd, *opt);
  cmd->footer(
      "Configuration: --config FILE (see README), then FLYTECD_* environment, then flags.\n"
      "SIGTERM stops after the steps in flight; SIGHUP reloads the configuration.\n"
      "Examples:\n"
      "  flytecd run --config /etc/flytecd/config.yaml\n"
      "  flytecd run --repo repo-layout-example/     # a directory, embedded emulator\n");
  return when_parsed(cmd, [opt]() -> int { return run_daemon(*opt); });
}

}  // namespace flytecd::cli
