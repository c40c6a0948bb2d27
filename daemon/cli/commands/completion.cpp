// `flytecd completion bash|zsh|fish`: the shell completion script, generated from the command
// definitions.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/cli/completion.hpp"

namespace flytecd::cli {

Runner add_completion_command(CLI::App& app, CommandContext& ctx) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "completion", "Print the shell completion script (generated from these commands)");
  cmd->add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->footer(
      "The .deb installs all three. By hand:\n"
      "  flytecd completion bash > /etc/bash_completion.d/flytecd\n"
      "  flytecd completion zsh > \"${fpath[1]}/_flytecd\"\n"
      "  flytecd completion fish > ~/.config/fish/completions/flytecd.fish\n");
  const CLI::App* root = ctx.app;
  return when_parsed(cmd, [shell, root]() -> int {
    auto script = completion_script(describe_commands(*root), *shell);
    if (!script) {
      std::cerr << "flytecd completion: " << script.error().message << "\n";
      return 1;
    }
    std::cout << *script;
    return 0;
  });
}

}  // namespace flytecd::cli
