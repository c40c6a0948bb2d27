// The rows of the commands that read the repository and, for most, FlyteAdmin: validate, get
// overrides / registrations, apply, recover, plan, run, history, import.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/cli/compile_command.hpp"
#include "daemon/cli/get_settings.hpp"
#include "daemon/cli/import_flytectl.hpp"
#include "daemon/cli/live_overrides.hpp"
#include "daemon/model/flytectl_attrs.hpp"

namespace flytecd::cli {

Runner add_validate_command(CLI::App& app, CommandContext&) {
  auto opt = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate", "Check every document of a repository directory (pre-commit / CI)");
  cmd->add_option("dir", opt->dir, "Repository directory (default: .)");
  cmd->add_option("-o,--output", opt->output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--require-digest", opt->policy.require_digest_pins,
                "Policy: packages must be pinned by digest");
  cmd->add_flag("--packages", opt->packages,
                "Also fetch OCI and HTTPS packages (the packages: settings of --config) and "
                "compile them; without it only packages kept in the repository are");
  cmd->add_option("--config", opt->config_file,
                  "flytecd configuration: its packages: settings (--packages, and the trusted "
                  "root keyless signature policies need)");
  cmd->add_option("--domains", opt->policy.domains, "FlyteAdmin's configured domains")
      ->delimiter(',');
  cmd->footer(
      "Exit codes: 0 valid, 1 invalid (every error is listed with file:line:column).\n"
      "Examples:\n"
      "  flytecd validate repo-layout-example/\n"
      "  flytecd validate -o json . | jq '.diagnostics[] | .kind'\n");
  return [cmd, opt]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_validate(*opt, std::cout, std::cerr);
  };
}

Runner add_compile_row(CLI::App& app, CommandContext&) { return add_compile_command(app); }

namespace {

struct GetOverridesState {
  GetOverridesOptions options;
  bool live = false;
  TargetOptions target;  // with --live
};

Runner add_get_overrides(CLI::App& get) {
  auto st = std::make_shared<GetOverridesState>();
  auto& g = st->options;
  auto* cmd = get.add_subcommand("overrides",
                                 "The effective (collated) overrides for a project, "
                                 "project-domain or workflow, as FlyteAdmin resolves them");
  cmd->add_option("-p,--project", g.project, "Project")->required()->type_name("PROJECT");
  cmd->add_option("-d,--domain", g.domain, "Domain");
  cmd->add_option("--workflow", g.workflow, "Workflow name (needs --domain)");
  cmd->add_option("-o,--output", g.output, "yaml or json (with --live also text)")
      ->check(CLI::IsMember({"yaml", "json", "text"}));
  auto* repo = cmd->add_option("--repo", g.repo, "Repository directory (default: .)");
  cmd->add_flag("--live", st->live,
                "What FlyteAdmin holds at exactly this scope, beside Git's value for it "
                "(like flytectl get task-resource-attribute)");
  auto& t = st->target;
  cmd->add_option("--config", t.config_file,
                  "With --live: flytecd config file (its source and FlyteAdmin)");
  cmd->add_option("--admin-endpoint", t.admin_endpoint,
                  "With --live: FlyteAdmin gRPC endpoint (default: embedded emulator)");
  cmd->add_option("--flytectl-config", t.flytectl_config,
                  "With --live: read admin: settings from flytectl's config.yaml");
  cmd->add_flag("--insecure", t.insecure, "With --live: plaintext gRPC to FlyteAdmin");
  cmd->add_option("--state-dir", t.state_dir,
                  "With --live: the state directory (its ledger says what is managed)");
  cmd->footer(
      "Every attribute that applies is shown with inherited: true|false and its source scope.\n"
      "With --live: each attribute FlyteAdmin or Git holds at exactly this scope, its state\n"
      "(in-sync, differs, live-only, git-only), both values and the changed fields; nothing is\n"
      "written. Exit codes: 0, 1 when the repository or FlyteAdmin cannot be read.\n"
      "Examples:\n"
      "  flytecd get overrides -p flytesnacks --repo repo-layout-example/\n"
      "  flytecd get overrides -p flytesnacks -d production --workflow core.basics.hello -o json "
      "--repo repo-layout-example/\n"
      "  flytecd get overrides --live -p ml-training -d development -o text --config "
      "/etc/flytecd/config.yaml\n");
  return [cmd, repo, st]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    if (st->live) {
      if (repo->count() > 0) st->target.repo = st->options.repo;
      return run_get_overrides_live(st->target, st->options, std::cout, std::cerr);
    }
    if (st->options.output == "text") {
      std::cerr << "flytecd get overrides: -o text goes with --live (yaml or json otherwise)\n";
      return 1;
    }
    return run_get_overrides(st->options, std::cout, std::cerr);
  };
}

Runner add_get_registrations(CLI::App& get) {
  auto opt = std::make_shared<TargetOptions>();
  auto format = std::make_shared<std::string>("text");
  auto* cmd = get.add_subcommand(
      "registrations",
      "Each workflow registration: package, digest, entity counts, activation and state");
  add_target_options(cmd, *opt);
  cmd->add_option("-o,--output", *format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->footer(
      "Reads the package (from the cache, or the registry), FlyteAdmin's active launch plans and\n"
      "the ledger; writes nothing. Example:\n"
      "  flytecd get registrations --repo repo-layout-example\n");
  return [cmd, opt, format]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_get_registrations(*opt, *format, std::cout, std::cerr);
  };
}

}  // namespace

Runner add_get_command(CLI::App& app, CommandContext& ctx) {
  ctx.get = app.add_subcommand("get", "Show objects as flytecd resolves them");
  ctx.get->require_subcommand(1);
  auto overrides = add_get_overrides(*ctx.get);
  auto registrations = add_get_registrations(*ctx.get);
  auto settings = add_get_settings(*ctx.get);
  return [overrides, registrations, settings]() -> std::optional<int> {
    if (auto rc = overrides()) return rc;
    if (auto rc = settings()) return rc;
    return registrations();
  };
}

Runner add_apply_command(CLI::App& app, CommandContext&) {
  auto opt = std::make_shared<TargetOptions>();
  auto format = std::make_shared<std::string>("text");
  auto* cmd = app.add_subcommand(
      "apply", "Reconcile once: make FlyteAdmin equal to the repository, then exit");
  add_target_options(cmd, *opt);
  add_scope_options(cmd, opt->project, opt->domain);
  cmd->add_option("-o,--output", *format, "text or json (the pass's plan and results)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->footer(
      "With no FlyteAdmin endpoint configured, the target is the embedded FlyteAdmin emulator\n"
      "(persisted in the state directory). Exit codes: 0 converged, 1 failed or refused.\n"
      "Examples:\n"
      "  flytecd apply --repo repo-layout-example/\n"
      "  flytecd apply --config /etc/flytecd/config.yaml --no-prune\n");
  return [cmd, opt, format]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_apply(*opt, *format, std::cout, std::cerr);
  };
}

Runner add_recover_command(CLI::App& app, CommandContext&) {
  struct State {
    TargetOptions target;
    std::string from;
    bool force = false;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand(
      "recover", "Rebuild what flytecd owns from a Git revision it applied (lost state directory)");
  add_target_options(cmd, st->target);
  cmd->add_option("--from-revision", st->from, "the commit (or branch, tag) last applied")
      ->required();
  cmd->add_flag("--force", st->force, "replace a ledger that already records ownership");
  cmd->footer(
      "\nThe next apply or run rebuilds the ledger from that revision: what it declares is owned\n"
      "(so what Git has dropped since is pruned, under the guard), and a live value that differs\n"
      "from it is drift. Example:\n"
      "  flytecd recover --config /etc/flytecd/config.yaml --from-revision 3f2c1e9\n");
  return [cmd, st]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_recover(st->target, st->from, st->force, std::cout, std::cerr);
  };
}

namespace {

struct PlanState {
  TargetOptions target;
  ReviewOptions review;
  bool live = false;
  std::string format = "text";
};

int run_plan(PlanState& st) {
  auto& r = st.review;
  if (!r.git.empty() || !r.base.empty() || !r.head.empty()) {
    if (r.git.empty() || r.base.empty() || r.head.empty()) {
      std::cerr << "flytecd plan: --git, --base and --head go together\n";
      return 1;
    }
    r.format = st.format;
    int rc = run_plan_review(st.target, r, std::cout, std::cerr);
    if (!st.live || rc == 1) return rc;
    int live_rc = run_plan_live(st.target, st.format, std::cout, std::cerr, &r);
    return live_rc == 1 ? 1 : std::max(rc, live_rc);
  }
  if (!st.live) {
    std::cerr << "flytecd plan: say what to compare: --git DIR --base REV --head REV (a change), "
                 "and/or --live (the repository against live state)\n";
    return 1;
  }
  return run_plan_live(st.target, st.format, std::cout, std::cerr);
}

}  // namespace

Runner add_plan_command(CLI::App& app, CommandContext&) {
  auto st = std::make_shared<PlanState>();
  auto* cmd = app.add_subcommand("plan", "What applying the repository would change");
  add_target_options(cmd, st->target);
  add_scope_options(cmd, st->target.project, st->target.domain);
  cmd->add_flag("--live", st->live, "Compare the repository with live state (and the ledger)");
  auto& r = st->review;
  cmd->add_option("--git", r.git, "Git repository (URL or local path) holding --base and --head");
  cmd->add_option("--base", r.base, "Base revision (branch, tag, commit)");
  cmd->add_option("--head", r.head, "Head revision (the change under review)");
  cmd->add_option("--path", r.path, "Sub-path of the documents inside the repository");
  cmd->add_option("-o,--output", st->format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  cmd->footer(
      "Exit codes: 0 no changes, 2 changes, 1 error.\n"
      "Examples:\n"
      "  flytecd plan --git . --base origin/main --head HEAD -o markdown   # a pull request, no "
      "cluster needed\n"
      "  flytecd plan --live --repo repo-layout-example/\n"
      "  flytecd plan --live -o markdown --admin-endpoint dns:///flyte.example.com:443\n");
  return [cmd, st]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_plan(*st);
  };
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
  return [cmd, opt]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_daemon(*opt);
  };
}

Runner add_history_command(CLI::App& app, CommandContext&) {
  struct State {
    TargetOptions target;
    ledger::HistoryQuery query;
    std::string domain, server, format = "text";
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand(
      "history", "What each reconcile changed (field by field), refused or failed, newest first");
  cmd->add_option("--config", st->target.config_file, "flytecd config file (YAML)");
  cmd->add_option("--state-dir", st->target.state_dir, "The state directory whose ledger to read");
  cmd->add_option("--object", st->query.object,
                  "Only passes touching this object key (or a key prefix ending in /)");
  add_scope_options(cmd, st->query.project, st->domain);
  cmd->add_option("--limit", st->query.limit, "At most this many passes (default 20)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--server", st->server,
                  "Ask a running daemon instead of reading the ledger (e.g. "
                  "http://127.0.0.1:8080)");
  cmd->add_option("-o,--output", st->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->footer(
      "Examples:\n  flytecd history --config /etc/flytecd/config.yaml --project flytesnacks\n"
      "  flytecd history --state-dir state/ --object override/ml-training/ -o json\n"
      "A running daemon serves the same as GET /api/v1/history?project=P&object=K&limit=N.\n");
  return [cmd, st]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    return run_history(st->target, st->query, st->domain, st->server, st->format, std::cout,
                       std::cerr);
  };
}

Runner add_import_command(CLI::App& app, CommandContext&) {
  struct State {
    TargetOptions target;
    std::string out_dir;
    ImportFlytectlOptions flytectl;
  };
  auto st = std::make_shared<State>();
  auto* cmd =
      app.add_subcommand("import", "Write the live projects and overrides as a flytecd repository");
  add_target_options(cmd, st->target);
  add_scope_options(cmd, st->target.project, st->target.domain);
  cmd->add_option("--out", st->out_dir,
                  "Directory to create (must be empty; with --from-flytectl, files already "
                  "there are never overwritten)")
      ->required();
  auto& f = st->flytectl;
  auto* from_flytectl = cmd->add_option(
      "--from-flytectl", f.files,
      "Convert these flytectl attribute files (--attrFile YAML) instead of reading FlyteAdmin");
  for (const char* target : {"--config", "--repo", "--state-dir", "--admin-endpoint"})
    from_flytectl->excludes(target);  // it reads files only: a target would be silently ignored
  cmd->add_option("--type", f.type, "With --from-flytectl: the attribute type of every file")
      ->check(CLI::IsMember(model::flytectl::type_names()))
      ->needs(from_flytectl);
  cmd->add_flag("--skip-invalid", f.skip_invalid,
                "With --from-flytectl: write the valid files even if others are invalid")
      ->needs(from_flytectl);
  cmd->add_option("--domains", f.policy.domains,
                  "With --from-flytectl: FlyteAdmin's configured domains")
      ->delimiter(',')
      ->needs(from_flytectl);
  cmd->footer(
      "Example:\n  flytecd import --admin-endpoint dns:///flyte.example.com:443 --out adopted/\n"
      "  flytecd import --from-flytectl tra.yaml wec.yaml --out repo/   # flytectl's files\n");
  return [cmd, st]() -> std::optional<int> {
    if (!cmd->parsed()) return std::nullopt;
    if (!st->flytectl.files.empty()) {
      st->flytectl.out_dir = st->out_dir;
      return run_import_flytectl(st->flytectl, std::cout, std::cerr);
    }
    return run_import(st->target, st->out_dir, std::cout, std::cerr);
  };
}

}  // namespace flytecd::cli
