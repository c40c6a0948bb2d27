// `flytecd man` (hidden): the man page (roff), generated from the command definitions; the build
// runs it to write flytecd.1.
#include <CLI/CLI.hpp>

#include <iostream>

#include "daemon/cli/command.hpp"
#include "daemon/cli/completion.hpp"

namespace flytecd::cli {

Runner add_man_command(CLI::App& app, CommandContext& ctx) {
  // Hidden (no group): the build runs it to generate flytecd.1.
  auto* cmd = app.add_subcommand("man", "Print the man page (roff)")->group("");
  const CLI::App* root = ctx.app;
  return when_parsed(cmd, [root]() -> int {
    std::cout << man_page(describe_commands(*root), FLYTECD_VERSION);
    return 0;
  });
}

}  // namespace flytecd::cli
