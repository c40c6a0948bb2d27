// `flytecd emulator`: the FlyteAdmin emulator (AdminService, or Flyte 2's SettingsService, over
// gRPC, SQLite-backed) in the foreground.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
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
  return when_parsed(cmd, [st]() -> int {
    for (const auto& f : st->faults) {
      auto rule = sinks::emulator::parse_fault(f);
      if (!rule) {
        std::cerr << "flytecd emulator: --fault " << f << ": " << rule.error().message << "\n";
        return 1;
      }
      st->options.faults.push_back(*rule);
    }
    return sinks::emulator::run_standalone(st->options);
  });
}

}  // namespace flytecd::cli
