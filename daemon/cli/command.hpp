#pragma once

// The CLI's command table. Each command registers its options on the app and returns its
// Runner; `cli::run` (cli.cpp) registers them all in table order, parses, and runs the one that
// was given. A command keeps its options in the Runner's closure, so adding one is a file under
// daemon/cli/commands/ and a row here, not an edit of `cli::run`.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "daemon/cli/commands.hpp"
#include "daemon/cli/remote.hpp"

namespace CLI {
class App;
}

namespace flytecd::cli {

// Runs the command when it was the one given; nullopt when another command was.
using Runner = std::function<std::optional<int>()>;

// The Runner of command `cmd`: runs `run` when `cmd` is the command given.
Runner when_parsed(const CLI::App* cmd, std::function<int()> run);

// What command registrations share.
struct CommandContext {
  CLI::App* app = nullptr;  // the root: `completion` and `man` describe it
  CLI::App* get = nullptr;  // `flytecd get`, set by the `get` row for its later subcommands
  // --server/--config/--token-file of the commands for a running daemon (one set: one is parsed).
  RemoteFlags remote;
  AddRemoteOptions add_remote_options;
};

// One row: the command's name as `flytecd --help` lists it, and its registration.
struct Command {
  const char* name;
  Runner (*add)(CLI::App& app, CommandContext& ctx);
};

// Every command, in the order `flytecd --help` lists them.
const std::vector<Command>& command_table();

// The options several commands share (options.cpp).
// --config, --repo, --state-dir, the FlyteAdmin flags and the guard's flags of a command that
// reconciles or plans.
void add_target_options(CLI::App* cmd, TargetOptions& t);
// -p/--project P [-d/--domain D]: one pass over those scopes only.
void add_scope_options(CLI::App* cmd, std::string& project, std::string& domain);
// Where the token of a daemon command comes from (footer text).
extern const char* const k_remote_token_footer;

// The rows, one file each under daemon/cli/commands/ (named after the command: get_objects.cpp,
// complete_projects.cpp, config_keys.cpp).
Runner add_validate_command(CLI::App& app, CommandContext& ctx);
Runner add_compile_row(CLI::App& app, CommandContext& ctx);
Runner add_get_command(CLI::App& app, CommandContext& ctx);
Runner add_apply_command(CLI::App& app, CommandContext& ctx);
Runner add_recover_command(CLI::App& app, CommandContext& ctx);
Runner add_plan_command(CLI::App& app, CommandContext& ctx);
Runner add_run_command(CLI::App& app, CommandContext& ctx);
Runner add_history_command(CLI::App& app, CommandContext& ctx);
Runner add_import_command(CLI::App& app, CommandContext& ctx);
Runner add_convert_command(CLI::App& app, CommandContext& ctx);
Runner add_status_command(CLI::App& app, CommandContext& ctx);
Runner add_get_objects_row(CLI::App& app, CommandContext& ctx);
Runner add_sync_command(CLI::App& app, CommandContext& ctx);
Runner add_suspend_command(CLI::App& app, CommandContext& ctx);
Runner add_resume_command(CLI::App& app, CommandContext& ctx);
Runner add_version_row(CLI::App& app, CommandContext& ctx);
Runner add_emulator_command(CLI::App& app, CommandContext& ctx);
Runner add_completion_command(CLI::App& app, CommandContext& ctx);
Runner add_man_command(CLI::App& app, CommandContext& ctx);
Runner add_complete_projects_command(CLI::App& app, CommandContext& ctx);
Runner add_config_keys_command(CLI::App& app, CommandContext& ctx);

}  // namespace flytecd::cli
