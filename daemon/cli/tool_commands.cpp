// The rows of the commands that need no repository: emulator, completion, and the hidden man and
// complete-projects.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/cli/completion.hpp"
#include "daemon/config/config.hpp"
#include "sinks/emulator/emulator.hpp"

namespace flytecd::cli {

Runner add_emulator_command(CLI::App& app, CommandContext&) {
  struct State {
    sinks::emulator::Options options;
    std::vector<std::string> faults;
  };
  auto st = std::make_shared<State>();
  auto& e = st->options;
  auto* cmd = app.add_subcommand(
      "emulator",
      "Run the FlyteAdmin EMULATOR (AdminService over gRPC, SQLite-backed) in the foreground");
  cmd->add_option("--listen", e.listen, "gRPC listen address (default 127.0.0.1:0 = free port)");
  cmd->add_option("--db", e.db_path, "SQLite database file (default :memory:)");
  cmd->add_option("--domains", e.domains, "Configured domains")->delimiter(',');
  cmd->add_option("--fault", st->faults,
                  "Fault rule, e.g. writes:rate=0.3,code=UNAVAILABLE,latency=200ms (repeatable)");
  cmd->add_option("--seed", e.seed, "Seed for fault injection");
  cmd->add_flag("--flyte2", e.flyte2,
                "Serve Flyte 2's SettingsService (flyteidl2.settings) instead of FlyteAdmin's "
                "AdminService");
  cmd->footer(
      "This is not FlyteAdmin: it follows FlyteAdmin's documented semantics for the RPCs flytecd "
      "uses.\n"
      "Example:\n  flytecd emulator --listen 127.0.0.1:8089 --db /tmp/admin.db\n"
      "  flytecd emulator --flyte2 --listen 127.0.0.1:8090 --db /tmp/settings.db\n");
  return [cmd, st]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    for (const auto& f : st->faults) {
      auto rule = sinks::emulator::parse_fault(f);
      if (!rule) {
        std::cerr << "flytecd emulator: --fault " << f << ": " << rule.error().message << "\n";
        return 1;
      }
      st->options.faults.push_back(*rule);
    }
    return sinks::emulator::run_standalone(st->options);
  };
}

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
  return [cmd, shell, root]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    auto script = completion_script(describe_commands(*root), *shell);
    if (!script) {
      std::cerr << "flytecd completion: " << script.error().message << "\n";
      return 1;
    }
    std::cout << *script;
    return 0;
  };
}

Runner add_man_command(CLI::App& app, CommandContext& ctx) {
  // Hidden (no group): the build runs it to generate flytecd.1.
  auto* cmd = app.add_subcommand("man", "Print the man page (roff)")->group("");
  const CLI::App* root = ctx.app;
  return [cmd, root]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    std::cout << man_page(describe_commands(*root), FLYTECD_VERSION);
    return 0;
  };
}

Runner add_complete_projects_command(CLI::App& app, CommandContext&) {
  // Hidden: what the completion scripts run to offer project ids.
  auto repo = std::make_shared<std::string>(".");
  auto* cmd = app.add_subcommand("complete-projects", "Print the project ids a repository declares")
                  ->group("");
  cmd->add_option("--repo", *repo, "Repository directory (default: .)");
  return [cmd, repo]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_complete_projects(*repo, std::cout);
  };
}

Runner add_config_keys_command(CLI::App& app, CommandContext&) {
  // Hidden: the README's table of configuration keys is this output (a test compares them).
  auto* cmd = app.add_subcommand("config-keys", "Print the configuration keys as a markdown table")
                  ->group("");
  return [cmd]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    std::cout << "| key | environment | holds |\n|---|---|---|\n";
    for (const auto& k : config::keys())
      std::cout << "| `" << k.name << "` | " << (k.env.empty() ? "" : "`" + k.env + "`") << " | "
                << k.expected << " |\n";
    return 0;
  };
}

}  // namespace flytecd::cli
