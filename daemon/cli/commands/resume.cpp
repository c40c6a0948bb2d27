// `flytecd resume [-p P]`: a suspended daemon (or one project of it) writes again; it
// reconciles at once.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/cli/commands/suspend.hpp"

namespace flytecd::cli {

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
  return when_parsed(cmd, [project, remote]() -> int {
    return run_remote_suspend(*remote, false, "", std::cout, std::cerr, *project);
  });
}

}  // namespace flytecd::cli
