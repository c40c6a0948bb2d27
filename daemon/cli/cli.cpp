#include "daemon/cli/cli.hpp"

#include "daemon/cli/suggest.hpp"
#include "daemon/common/scan.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "daemon/cli/commands.hpp"
#include "daemon/cli/compile_command.hpp"
#include "daemon/cli/completion.hpp"
#include "daemon/cli/daemon_commands.hpp"
#include "daemon/cli/get_objects.hpp"
#include "daemon/cli/import_flytectl.hpp"
#include "daemon/cli/live_overrides.hpp"
#include "daemon/cli/sync_command.hpp"
#include "daemon/cli/version_command.hpp"
#include "daemon/common/duration.hpp"
#include "daemon/common/log.hpp"
#include "daemon/model/flytectl_attrs.hpp"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/grpc_log.hpp"

namespace flytecd::cli {

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

  ValidateOptions vopt;
  auto* validate = app.add_subcommand(
      "validate", "Check every document of a repository directory (pre-commit / CI)");
  validate->add_option("dir", vopt.dir, "Repository directory (default: .)");
  validate->add_option("-o,--output", vopt.output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  validate->add_flag("--require-digest", vopt.policy.require_digest_pins,
                     "Policy: packages must be pinned by digest");
  validate->add_flag("--packages", vopt.packages,
                     "Also fetch OCI and HTTPS packages (the packages: settings of --config) and "
                     "compile them; without it only packages kept in the repository are");
  validate->add_option("--config", vopt.config_file,
                       "flytecd configuration whose packages: settings --packages uses");
  validate->add_option("--domains", vopt.policy.domains, "FlyteAdmin's configured domains")
      ->delimiter(',');
  validate->footer(
      "Exit codes: 0 valid, 1 invalid (every error is listed with file:line:column).\n"
      "Examples:\n"
      "  flytecd validate repo-layout-example/\n"
      "  flytecd validate -o json . | jq '.diagnostics[] | .kind'\n");
  auto compile_cmd = add_compile_command(app);

  GetOverridesOptions gopt;
  auto* get = app.add_subcommand("get", "Show objects as flytecd resolves them");
  get->require_subcommand(1);
  auto* overrides = get->add_subcommand("overrides",
                                        "The effective (collated) overrides for a project, "
                                        "project-domain or workflow, as FlyteAdmin resolves them");
  overrides->add_option("-p,--project", gopt.project, "Project")->required()->type_name("PROJECT");
  overrides->add_option("-d,--domain", gopt.domain, "Domain");
  overrides->add_option("--workflow", gopt.workflow, "Workflow name (needs --domain)");
  overrides->add_option("-o,--output", gopt.output, "yaml or json (with --live also text)")
      ->check(CLI::IsMember({"yaml", "json", "text"}));
  auto* overrides_repo =
      overrides->add_option("--repo", gopt.repo, "Repository directory (default: .)");
  bool overrides_live = false;
  TargetOptions olive;
  overrides->add_flag("--live", overrides_live,
                      "What FlyteAdmin holds at exactly this scope, beside Git's value for it "
                      "(like flytectl get task-resource-attribute)");
  overrides->add_option("--config", olive.config_file,
                        "With --live: flytecd config file (its source and FlyteAdmin)");
  overrides->add_option("--admin-endpoint", olive.admin_endpoint,
                        "With --live: FlyteAdmin gRPC endpoint (default: embedded emulator)");
  overrides->add_option("--flytectl-config", olive.flytectl_config,
                        "With --live: read admin: settings from flytectl's config.yaml");
  overrides->add_flag("--insecure", olive.insecure, "With --live: plaintext gRPC to FlyteAdmin");
  overrides->add_option("--state-dir", olive.state_dir,
                        "With --live: the state directory (its ledger says what is managed)");
  overrides->footer(
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

  // Empty when not given: a configuration file's log.level / log.format then applies.
  std::string log_level;
  app.add_option("--log-level", log_level, "trace, debug, info (default), warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  std::string log_format;
  app.add_option("--log-format", log_format,
                 "text (default) or json: one JSON object per line with time, level, logger, "
                 "message and the revision/object/step fields")
      ->check(CLI::IsMember({"text", "json"}));

  auto add_target_options = [](CLI::App* cmd, TargetOptions& t) {
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
    cmd->add_option("--parallelism", t.parallelism, "Steps in flight at once");
    cmd->add_option("--lock-wait", t.lock_wait_seconds,
                    "Seconds to wait for another flytecd holding the state directory (default 10)");
  };

  TargetOptions gropt;
  std::string gr_format = "text";
  auto* registrations = get->add_subcommand(
      "registrations",
      "Each workflow registration: package, digest, entity counts, activation and state");
  add_target_options(registrations, gropt);
  registrations->add_option("-o,--output", gr_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  registrations->footer(
      "Reads the package (from the cache, or the registry), FlyteAdmin's active launch plans and\n"
      "the ledger; writes nothing. Example:\n"
      "  flytecd get registrations --repo repo-layout-example\n");

  // --project P [--domain D]: one pass over those scopes only (what is outside is left alone and
  // not counted by the guard).
  auto add_scope_options = [](CLI::App* cmd, std::string& scope_project,
                              std::string& scope_domain) {
    auto* project_opt =
        cmd->add_option("-p,--project", scope_project,
                        "Only this project's scopes (others are neither changed nor counted)")
            ->type_name("PROJECT");
    cmd->add_option("-d,--domain", scope_domain,
                    "Only this domain of --project (and its workflows)")
        ->needs(project_opt);
  };
  TargetOptions aopt;
  auto* apply = app.add_subcommand(
      "apply", "Reconcile once: make FlyteAdmin equal to the repository, then exit");
  add_target_options(apply, aopt);
  add_scope_options(apply, aopt.project, aopt.domain);
  std::string apply_format = "text";
  apply->add_option("-o,--output", apply_format, "text or json (the pass's plan and results)")
      ->check(CLI::IsMember({"text", "json"}));
  apply->footer(
      "With no FlyteAdmin endpoint configured, the target is the embedded FlyteAdmin emulator\n"
      "(persisted in the state directory). Exit codes: 0 converged, 1 failed or refused.\n"
      "Examples:\n"
      "  flytecd apply --repo repo-layout-example/\n"
      "  flytecd apply --config /etc/flytecd/config.yaml --no-prune\n");

  TargetOptions popt;
  bool live = false;
  std::string plan_format = "text";
  TargetOptions recover_opt;
  auto* recover = app.add_subcommand(
      "recover", "Rebuild what flytecd owns from a Git revision it applied (lost state directory)");
  add_target_options(recover, recover_opt);
  std::string recover_from;
  bool recover_force = false;
  recover->add_option("--from-revision", recover_from, "the commit (or branch, tag) last applied")
      ->required();
  recover->add_flag("--force", recover_force, "replace a ledger that already records ownership");
  recover->footer(
      "\nThe next apply or run rebuilds the ledger from that revision: what it declares is owned\n"
      "(so what Git has dropped since is pruned, under the guard), and a live value that differs\n"
      "from it is drift. Example:\n"
      "  flytecd recover --config /etc/flytecd/config.yaml --from-revision 3f2c1e9\n");

  auto* plan = app.add_subcommand("plan", "What applying the repository would change");
  add_target_options(plan, popt);
  add_scope_options(plan, popt.project, popt.domain);
  plan->add_flag("--live", live, "Compare the repository with live state (and the ledger)");
  ReviewOptions ropt;
  plan->add_option("--git", ropt.git,
                   "Git repository (URL or local path) holding --base and --head");
  plan->add_option("--base", ropt.base, "Base revision (branch, tag, commit)");
  plan->add_option("--head", ropt.head, "Head revision (the change under review)");
  plan->add_option("--path", ropt.path, "Sub-path of the documents inside the repository");
  plan->add_option("-o,--output", plan_format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  plan->footer(
      "Exit codes: 0 no changes, 2 changes, 1 error.\n"
      "Examples:\n"
      "  flytecd plan --git . --base origin/main --head HEAD -o markdown   # a pull request, no "
      "cluster needed\n"
      "  flytecd plan --live --repo repo-layout-example/\n"
      "  flytecd plan --live -o markdown --admin-endpoint dns:///flyte.example.com:443\n");

  TargetOptions ropt_daemon;
  auto* run_cmd =
      app.add_subcommand("run",
                         "Run the daemon: poll Git, reconcile, serve /metrics, /healthz, /readyz, "
                         "/api/v1/status and webhooks");
  add_target_options(run_cmd, ropt_daemon);
  run_cmd->footer(
      "Configuration: --config FILE (see README), then FLYTECD_* environment, then flags.\n"
      "SIGTERM stops after the steps in flight; SIGHUP reloads the configuration.\n"
      "Examples:\n"
      "  flytecd run --config /etc/flytecd/config.yaml\n"
      "  flytecd run --repo repo-layout-example/     # a directory, embedded emulator\n");

  TargetOptions iopt;
  TargetOptions hopt;
  ledger::HistoryQuery hquery;
  std::string history_format = "text";
  auto* history = app.add_subcommand(
      "history", "What each reconcile changed (field by field), refused or failed, newest first");
  history->add_option("--config", hopt.config_file, "flytecd config file (YAML)");
  history->add_option("--state-dir", hopt.state_dir, "The state directory whose ledger to read");
  history->add_option("--object", hquery.object,
                      "Only passes touching this object key (or a key prefix ending in /)");
  std::string history_domain;
  add_scope_options(history, hquery.project, history_domain);
  history->add_option("--limit", hquery.limit, "At most this many passes (default 20)")
      ->check(CLI::Range(1, 1000));
  std::string history_server;
  history->add_option("--server", history_server,
                      "Ask a running daemon instead of reading the ledger (e.g. "
                      "http://127.0.0.1:8080)");
  history->add_option("-o,--output", history_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  history->footer(
      "Examples:\n  flytecd history --config /etc/flytecd/config.yaml --project flytesnacks\n"
      "  flytecd history --state-dir state/ --object override/ml-training/ -o json\n"
      "A running daemon serves the same as GET /api/v1/history?project=P&object=K&limit=N.\n");
  std::string import_dir;
  auto* import =
      app.add_subcommand("import", "Write the live projects and overrides as a flytecd repository");
  add_target_options(import, iopt);
  add_scope_options(import, iopt.project, iopt.domain);
  import
      ->add_option("--out", import_dir,
                   "Directory to create (must be empty; with --from-flytectl, files already "
                   "there are never overwritten)")
      ->required();
  ImportFlytectlOptions fopt;
  auto* from_flytectl = import->add_option(
      "--from-flytectl", fopt.files,
      "Convert these flytectl attribute files (--attrFile YAML) instead of reading FlyteAdmin");
  for (const char* target : {"--config", "--repo", "--state-dir", "--admin-endpoint"})
    from_flytectl->excludes(target);  // it reads files only: a target would be silently ignored
  import->add_option("--type", fopt.type, "With --from-flytectl: the attribute type of every file")
      ->check(CLI::IsMember(model::flytectl::type_names()))
      ->needs(from_flytectl);
  import
      ->add_flag("--skip-invalid", fopt.skip_invalid,
                 "With --from-flytectl: write the valid files even if others are invalid")
      ->needs(from_flytectl);
  import
      ->add_option("--domains", fopt.policy.domains,
                   "With --from-flytectl: FlyteAdmin's configured domains")
      ->delimiter(',')
      ->needs(from_flytectl);
  import->footer(
      "Example:\n  flytecd import --admin-endpoint dns:///flyte.example.com:443 --out adopted/\n"
      "  flytecd import --from-flytectl tra.yaml wec.yaml --out repo/   # flytectl's files\n");

  // Commands for a running daemon, over its HTTP API.
  RemoteFlags remote;
  auto add_remote_options = [&remote](CLI::App* cmd, bool token) {
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
  const std::string remote_footer =
      "The token (POST endpoints) comes from --token-file FILE, else FLYTECD_SYNC_TOKEN, else the\n"
      "config's http.syncTokenFile; it is never taken from the command line.\n";
  std::string status_format = "text";
  auto* status_cmd =
      app.add_subcommand("status", "Show a running daemon's status (GET /api/v1/status)");
  add_remote_options(status_cmd, false);
  status_cmd->add_option("-o,--output", status_format, "text or json (the raw document)")
      ->check(CLI::IsMember({"text", "json"}));
  status_cmd->footer(
      "Prints the revision, the last sync (outcome, summary, error), drift, suspension and "
      "leader.\n"
      "Exit codes: 0 the last sync succeeded (also while suspended), 1 the daemon is unreachable,\n"
      "no sync has finished yet, or the last one failed or was refused.\n"
      "Examples:\n"
      "  flytecd status --config /etc/flytecd/config.yaml\n"
      "  flytecd status --server http://127.0.0.1:8080 -o json | jq .drift\n");
  auto objects_cmd = add_get_objects_command(*get, remote, add_remote_options);
  auto* sync_cmd = app.add_subcommand("sync", "Ask a running daemon to reconcile now");
  add_remote_options(sync_cmd, true);
  SyncOptions sync_opt;
  std::string sync_timeout = "5m";
  auto* sync_wait =
      sync_cmd->add_flag("--wait", sync_opt.wait,
                         "Wait for the pass this request starts and exit as apply would for it");
  sync_cmd->add_option("--timeout", sync_timeout, "With --wait: how long to wait (default 5m)")
      ->type_name("DURATION")
      ->needs(sync_wait);
  sync_cmd->footer(
      remote_footer +
      "With --wait the last line is the pass's verdict and the exit code apply's: 0\n"
      "converged, 1 failed, refused, or the new revision was rejected or could not be\n"
      "read; while the daemon is suspended the pass only plans and the exit code is\n"
      "plan --live's (0 no changes, 2 changes pending or drift). 3: no pass finished\n"
      "within --timeout (it may still run).\n"
      "Examples:\n  FLYTECD_SYNC_TOKEN=... flytecd sync\n"
      "  flytecd sync --wait --timeout 2m --config /etc/flytecd/config.yaml\n");
  std::string suspend_reason;
  std::string suspend_project;
  auto* suspend_cmd = app.add_subcommand(
      "suspend",
      "Suspend a running daemon: it keeps polling and reporting drift, but writes nothing");
  add_remote_options(suspend_cmd, true);
  suspend_cmd->add_option("--reason", suspend_reason, "Why (shown in status and the log)");
  suspend_cmd
      ->add_option("-p,--project", suspend_project,
                   "Suspend only this project's writes: it is planned, the others still apply")
      ->type_name("PROJECT");
  suspend_cmd->footer(
      remote_footer +
      "The suspension is kept in the state directory: a restart stays "
      "suspended until `flytecd resume`. With --project P only P is suspended\n"
      "(status suspendedProjects, metric flytecd_project_suspended{project}) until\n"
      "`flytecd resume --project P`.\n"
      "Examples:\n  flytecd suspend --reason 'maintenance' --token-file "
      "/etc/flytecd/sync-token\n"
      "  flytecd suspend --project ml-training --reason 'quota review'\n");
  auto* resume_cmd =
      app.add_subcommand("resume", "Resume a suspended daemon (it reconciles at once)");
  add_remote_options(resume_cmd, true);
  std::string resume_project;
  resume_cmd
      ->add_option("-p,--project", resume_project,
                   "Resume only this project (suspended with suspend --project)")
      ->type_name("PROJECT");
  resume_cmd->footer(remote_footer +
                     "Example:\n  flytecd resume --token-file /etc/flytecd/sync-token\n");

  auto version_cmd = add_version_command(app, remote, add_remote_options);

  sinks::emulator::Options eopt;
  std::vector<std::string> faults;
  auto* emulator = app.add_subcommand(
      "emulator",
      "Run the FlyteAdmin EMULATOR (AdminService over gRPC, SQLite-backed) in the foreground");
  emulator->add_option("--listen", eopt.listen,
                       "gRPC listen address (default 127.0.0.1:0 = free port)");
  emulator->add_option("--db", eopt.db_path, "SQLite database file (default :memory:)");
  emulator->add_option("--domains", eopt.domains, "Configured domains")->delimiter(',');
  emulator->add_option(
      "--fault", faults,
      "Fault rule, e.g. writes:rate=0.3,code=UNAVAILABLE,latency=200ms (repeatable)");
  emulator->add_option("--seed", eopt.seed, "Seed for fault injection");
  emulator->footer(
      "This is not FlyteAdmin: it follows FlyteAdmin's documented semantics for the RPCs flytecd "
      "uses.\n"
      "Example:\n  flytecd emulator --listen 127.0.0.1:8089 --db /tmp/admin.db\n");

  std::string shell;
  auto* completion = app.add_subcommand(
      "completion", "Print the shell completion script (generated from these commands)");
  completion->add_option("shell", shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  completion->footer(
      "The .deb installs all three. By hand:\n"
      "  flytecd completion bash > /etc/bash_completion.d/flytecd\n"
      "  flytecd completion zsh > \"${fpath[1]}/_flytecd\"\n"
      "  flytecd completion fish > ~/.config/fish/completions/flytecd.fish\n");
  // Hidden (no group): the build runs it to generate flytecd.1.
  auto* man = app.add_subcommand("man", "Print the man page (roff)")->group("");
  // Hidden: what the completion scripts run to offer project ids.
  std::string projects_repo = ".";
  auto* complete_projects =
      app.add_subcommand("complete-projects", "Print the project ids a repository declares")
          ->group("");
  complete_projects->add_option("--repo", projects_repo, "Repository directory (default: .)");

  // Global options (--log-level) may also follow the subcommand.
  // Global options (--log-level, --log-format) may also follow a nested command (get overrides).
  for (auto* sub : app.get_subcommands({})) {
    sub->fallthrough();
    for (auto* nested : sub->get_subcommands({})) nested->fallthrough();
  }
  // An unknown command word gets its name and the closest command, not CLI11's "A subcommand is
  // required".
  auto unknown_command = [&](CLI::App& parent, int at, const std::string& prefix) {
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
  };
  if (unknown_command(app, 1, "flytecd")) return 1;
  if (argc > 2 && std::string(argv[1]) == "get" && unknown_command(*get, 2, "flytecd get"))
    return 1;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  log::init_from_command_line(log_level, log_format);
  sinks::flyteadmin::route_grpc_log();
  if (completion->parsed()) {
    auto script = completion_script(describe_commands(app), shell);
    if (!script) {
      std::cerr << "flytecd completion: " << script.error().message << "\n";
      return 1;
    }
    std::cout << *script;
    return 0;
  }
  if (man->parsed()) {
    std::cout << man_page(describe_commands(app), FLYTECD_VERSION);
    return 0;
  }
  if (complete_projects->parsed()) return run_complete_projects(projects_repo, std::cout);
  if (validate->parsed()) return run_validate(vopt, std::cout, std::cerr);
  if (auto rc = compile_cmd()) return *rc;
  if (history->parsed())
    return run_history(hopt, hquery, history_domain, history_server, history_format, std::cout,
                       std::cerr);
  if (apply->parsed()) return run_apply(aopt, apply_format, std::cout, std::cerr);
  if (recover->parsed())
    return run_recover(recover_opt, recover_from, recover_force, std::cout, std::cerr);
  if (plan->parsed()) {
    if (!ropt.git.empty() || !ropt.base.empty() || !ropt.head.empty()) {
      if (ropt.git.empty() || ropt.base.empty() || ropt.head.empty()) {
        std::cerr << "flytecd plan: --git, --base and --head go together\n";
        return 1;
      }
      ropt.format = plan_format;
      int rc = run_plan_review(popt, ropt, std::cout, std::cerr);
      if (!live || rc == 1) return rc;
      int live_rc = run_plan_live(popt, plan_format, std::cout, std::cerr, &ropt);
      return live_rc == 1 ? 1 : std::max(rc, live_rc);
    }
    if (!live) {
      std::cerr << "flytecd plan: say what to compare: --git DIR --base REV --head REV (a change), "
                   "and/or --live (the repository against live state)\n";
      return 1;
    }
    return run_plan_live(popt, plan_format, std::cout, std::cerr);
  }
  if (run_cmd->parsed()) return run_daemon(ropt_daemon);
  if (import->parsed() && !fopt.files.empty()) {
    fopt.out_dir = import_dir;
    return run_import_flytectl(fopt, std::cout, std::cerr);
  }
  if (import->parsed()) return run_import(iopt, import_dir, std::cout, std::cerr);
  if (status_cmd->parsed()) return run_remote_status(remote, status_format, std::cout, std::cerr);
  if (sync_cmd->parsed()) {
    auto timeout = parse_duration(sync_timeout,
                                  DurationRange{std::chrono::seconds(1), std::chrono::hours(24)});
    if (!timeout) {
      std::cerr << "flytecd sync: --timeout: " << timeout.error().message << "\n";
      return 1;
    }
    sync_opt.timeout = *timeout;
    return run_remote_sync(remote, sync_opt, std::cout, std::cerr);
  }
  if (suspend_cmd->parsed())
    return run_remote_suspend(remote, true, suspend_reason, std::cout, std::cerr, suspend_project);
  if (resume_cmd->parsed())
    return run_remote_suspend(remote, false, "", std::cout, std::cerr, resume_project);
  if (auto rc = objects_cmd()) return *rc;
  if (auto rc = version_cmd()) return *rc;
  if (emulator->parsed()) {
    for (const auto& f : faults) {
      auto rule = sinks::emulator::parse_fault(f);
      if (!rule) {
        std::cerr << "flytecd emulator: --fault " << f << ": " << rule.error().message << "\n";
        return 1;
      }
      eopt.faults.push_back(*rule);
    }
    return sinks::emulator::run_standalone(eopt);
  }
  if (overrides->parsed() && overrides_live) {
    if (overrides_repo->count() > 0) olive.repo = gopt.repo;
    return run_get_overrides_live(olive, gopt, std::cout, std::cerr);
  }
  if (overrides->parsed()) {
    if (gopt.output == "text") {
      std::cerr << "flytecd get overrides: -o text goes with --live (yaml or json otherwise)\n";
      return 1;
    }
    return run_get_overrides(gopt, std::cout, std::cerr);
  }
  if (registrations->parsed()) return run_get_registrations(gropt, gr_format, std::cout, std::cerr);
  return 1;
}

}  // namespace flytecd::cli
