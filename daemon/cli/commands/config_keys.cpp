// `flytecd config-keys` (hidden): the configuration keys as a markdown table (the README's table
// is this output).
#include <CLI/CLI.hpp>

#include <iostream>

#include "daemon/cli/command.hpp"
#include "daemon/config/config.hpp"

namespace flytecd::cli {

Runner add_config_keys_command(CLI::App& app, CommandContext&) {
  // Hidden: the README's table of configuration keys is this output (a test compares them).
  auto* cmd = app.add_subcommand("config-keys", "Print the configuration keys as a markdown table")
                  ->group("");
  return when_parsed(cmd, []() -> int {
    std::cout << "| key | environment | holds |\n|---|---|---|\n";
    for (const auto& k : config::keys())
      std::cout << "| `" << k.name << "` | " << (k.env.empty() ? "" : "`" + k.env + "`") << " | "
                << k.expected << " |\n";
    return 0;
  });
}

}  // namespace flytecd::cli
