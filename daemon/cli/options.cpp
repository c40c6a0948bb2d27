// The command-line options several commands share: the target's (--config, --repo, the
// FlyteAdmin and guard flags), the scope's (-p/-d) and the token footer of the daemon commands.
#include <CLI/CLI.hpp>

#include "daemon/cli/command.hpp"

namespace flytecd::cli {

const char* const k_remote_token_footer =
    "The token (POST endpoints) comes from --token-file FILE, else FLYTECD_SYNC_TOKEN, else the\n"
    "config's http.syncTokenFile; it is never taken from the command line.\n";

void add_target_options(CLI::App* cmd, TargetOptions& t) {
  cmd->add_option("--config", t.config_file, "flytecd config file (YAML)");
  cmd->add_option("--repo", t.repo, "Repository directory (default: config repo, else .)");
  cmd->add_option("--state-dir", t.state_dir, "Ledger and embedded-emulator directory");
  cmd->add_option(
      "--admin-endpoint", t.admin_endpoint,
      "FlyteAdmin gRPC endpoint, e.g. dns:///flyte.example.com:443 (default: embedded emulator)");
  cmd->add_option("--flytectl-config", t.flytectl_config,
                  "Read admin: settings from flytectl's config.yaml");
  cmd->add_flag("--insecure", t.insecure, "Plaintext gRPC to FlyteAdmin");
  cmd->add_flag("--no-self-heal", t.no_self_heal, "Report drift, do not revert it");
  cmd->add_flag("--no-prune", t.no_prune, "Do not delete managed objects removed from Git");
  cmd->add_flag("--allow-mass-prune", t.allow_mass_prune,
                "Allow plans that prune more than max-prune-share");
  cmd->add_flag("--allow-empty", t.allow_empty,
                "Accept a revision with no documents, or none left of a kind flytecd manages");
  cmd->add_option("--max-prune-share", t.max_prune_share,
                  "Refuse plans pruning more than this share (0..1)");
  cmd->add_option(
      "--parallelism", t.parallelism,
      "Worker threads for registrations and for steps of a sink without asynchronous calls");
  cmd->add_option("--lock-wait", t.lock_wait_seconds,
                  "Seconds to wait for another flytecd holding the state directory (default 10)");
}

void add_scope_options(CLI::App* cmd, std::string& project, std::string& domain) {
  auto* project_opt =
      cmd->add_option("-p,--project", project,
                      "Only this project's scopes (others are neither changed nor counted)")
          ->type_name("PROJECT");
  cmd->add_option("-d,--domain", domain, "Only this domain of --project (and its workflows)")
      ->needs(project_opt);
}

Runner when_parsed(const CLI::App* cmd, std::function<int()> run) {
  return [cmd, run = std::move(run)]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run();
  };
}

}  // namespace flytecd::cli
