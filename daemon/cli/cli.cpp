#include "daemon/cli/cli.hpp"

#include "daemon/cli/suggest.hpp"
#include "daemon/common/scan.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "daemon/cli/command.hpp"
#include "daemon/common/log.hpp"
#include "sinks/flyteadmin/grpc_log.hpp"

namespace flytecd::cli {

const std::vector<Command>& command_table() {
  static const std::vector<Command> table = {
      {"validate", add_validate_command},
      {"compile", add_compile_row},
      {"get", add_get_command},  // overrides, registrations (objects: its own row below)
      {"apply", add_apply_command},
      {"recover", add_recover_command},
      {"plan", add_plan_command},
      {"run", add_run_command},
      {"history", add_history_command},
      {"import", add_import_command},
      {"convert", add_convert_command},
      {"status", add_status_command},
      {"get objects", add_get_objects_row},
      {"sync", add_sync_command},
      {"suspend", add_suspend_command},
      {"resume", add_resume_command},
      {"version", add_version_row},
      {"emulator", add_emulator_command},
      {"completion", add_completion_command},
      {"man", add_man_command},
      {"complete-projects", add_complete_projects_command},
      {"config-keys", add_config_keys_command},
  };
  return table;
}

namespace {

// An unknown command word at argv[at] under `parent`: says so, names the closest command and
// the list, and returns true. CLI11 alone would say "A subcommand is required".
bool unknown_command(const CLI::App& parent, int argc, char** argv, int at,
                     const std::string& prefix) {
  if (argc <= at || argv[at][0] == '-') return false;
  const std::string word = argv[at];
  std::vector<std::string> names;
  for (const auto* sub : parent.get_subcommands({})) {
    if (sub->check_name(word)) return false;
    if (!sub->get_group().empty()) names.push_back(sub->get_name());  // not hidden ones
  }
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
  std::cerr << prefix << ": unknown command '" << scan::printable(word) << "'"
            << did_you_mean(word, names) << " (commands: " << list << ")\n";
  return true;
}

}  // namespace

int run(int argc, char** argv) {
  // Line-buffered stdout and stderr: with `2>&1` a log or error line never lands inside a stdout
  // line (a fully buffered stdout is cut every 4 KiB, wherever the line is).
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  std::setvbuf(stderr, nullptr, _IOLBF, BUFSIZ);
  CLI::App app{"flytecd — GitOps for Flyte: keeps a Flyte deployment equal to a Git repository.",
               "flytecd"};
  app.set_version_flag("--version", std::string("flytecd ") + FLYTECD_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  flytecd validate repo-layout-example/\n"
      "  flytecd get overrides -p flytesnacks -d development --repo repo-layout-example/\n");
  // Empty when not given: a configuration file's log.level / log.format then applies.
  std::string log_level;
  app.add_option("--log-level", log_level, "trace, debug, info (default), warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  std::string log_format;
  app.add_option("--log-format", log_format,
                 "text (default) or json: one JSON object per line with time, level, logger, "
                 "message and the revision/object/step fields")
      ->check(CLI::IsMember({"text", "json"}));

  CommandContext ctx;
  ctx.app = &app;
  ctx.add_remote_options = [&remote = ctx.remote](CLI::App* cmd, bool token) {
    cmd->add_option("--server", remote.server,
                    "The daemon's URL (default: from --config's http.listen, else "
                    "http://127.0.0.1:8080)");
    cmd->add_option("--config", remote.config_file,
                    "flytecd config file: the server from http.listen, the token from "
                    "http.syncTokenFile");
    if (token)
      cmd->add_option("--token-file", remote.token_file,
                      "File holding the daemon's sync token (else FLYTECD_SYNC_TOKEN; never argv)");
  };
  std::vector<Runner> runners;
  for (const auto& command : command_table()) runners.push_back(command.add(app, ctx));

  // Global options (--log-level, --log-format) may also follow a command, or a nested command
  // (get overrides).
  for (auto* sub : app.get_subcommands({})) {
    sub->fallthrough();
    for (auto* nested : sub->get_subcommands({})) nested->fallthrough();
  }
  if (unknown_command(app, argc, argv, 1, "flytecd")) return 1;
  if (argc > 2 && std::string(argv[1]) == "get" &&
      unknown_command(*ctx.get, argc, argv, 2, "flytecd get"))
    return 1;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  log::init_from_command_line(log_level, log_format);
  sinks::flyteadmin::route_grpc_log();
  for (const auto& runner : runners)
    if (auto rc = runner()) return *rc;
  return 1;
}

}  // namespace flytecd::cli
