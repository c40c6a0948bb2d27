// `flytecd get overrides | registrations | settings`: objects as flytecd resolves them, from the
// repository (and, with --live or for registrations, the target); `get objects` is its own row.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include "daemon/cli/command.hpp"
#include "daemon/cli/commands/get_overrides_live.hpp"
#include "daemon/cli/commands/get_settings.hpp"
#include "daemon/cli/suggest.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/model/resolve.hpp"
#include "daemon/registration/registrar.hpp"
#include "daemon/wiring/target.hpp"

namespace flytecd::cli {

int run_get_overrides(const GetOverridesOptions& opt, std::ostream& out, std::ostream& err) {
  if (!opt.workflow.empty() && opt.domain.empty()) {
    err << "flytecd get overrides: --workflow needs --domain (FlyteAdmin keys workflow overrides "
           "by project, domain "
           "and workflow)\n";
    return 1;
  }
  auto loaded = load_repo(opt.repo, opt.limits, opt.policy);
  if (!loaded) {
    err << "flytecd get overrides: " << loaded.error().message << "\n";
    return 1;
  }
  if (!loaded->ok()) {
    for (const auto& d : loaded->diagnostics)
      if (d.severity == model::Severity::error) err << model::format(d) << "\n";
    err << "flytecd get overrides: the repository is invalid; run `flytecd validate " << opt.repo
        << "`\n";
    return 1;
  }
  // A project or domain the repository does not know would silently show platform defaults.
  std::set<std::string> projects;
  for (const auto& p : loaded->documents.projects) projects.insert(p.id);
  for (const auto& o : loaded->documents.overrides) projects.insert(o.scope.project);
  for (const auto& r : loaded->documents.registrations) projects.insert(r.project);
  if (!projects.count(opt.project)) {
    const std::vector<std::string> known(projects.begin(), projects.end());
    std::string list;
    for (size_t i = 0; i < known.size() && i < 10; ++i) list += (i ? ", " : "") + known[i];
    err << "flytecd get overrides: project '" << scan::printable(opt.project)
        << "' is not declared in " << opt.repo
        << " (no Project, Overrides or registration names it)" << did_you_mean(opt.project, known)
        << (known.empty() ? "" : "; projects: " + list + (known.size() > 10 ? ", …" : "")) << "\n";
    return 1;
  }
  const auto& domains = opt.policy.domains;
  if (!opt.domain.empty() && !domains.empty() &&
      std::find(domains.begin(), domains.end(), opt.domain) == domains.end()) {
    std::string list;
    for (size_t i = 0; i < domains.size(); ++i) list += (i ? ", " : "") + domains[i];
    err << "flytecd get overrides: domain '" << scan::printable(opt.domain)
        << "' is not one of the configured domains (" << list << ")"
        << did_you_mean(opt.domain, domains) << "\n";
    return 1;
  }
  model::Hierarchy h(loaded->documents);
  model::Scope at{opt.project, opt.domain, opt.workflow};
  auto doc = model::collate(at, h.resolve(at));
  if (opt.output == "json")
    out << dump_json(doc, 2) << "\n";
  else
    out << model::json_to_yaml(doc);
  return 0;
}

int run_get_registrations(const TargetOptions& opt, const std::string& format, std::ostream& out,
                          std::ostream& err) {
  const std::string at;
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd get registrations: " << cfg.error().message << "\n";
    return 1;
  }
  auto prepared = prepare(*cfg, at, wiring::Access::read, err);
  if (!prepared) {
    err << "flytecd get registrations: " << prepared.error().message << "\n";
    return 1;
  }
  wiring::Target* target = &prepared->rec->target();
  // A dry run: packages come from the cache (or the registry), activation from FlyteAdmin; the
  // ledger tells what was registered. Nothing is written.
  const auto report = prepared->rec->pass(prepared->rev, command_options(*cfg, pass::Mode::plan));
  if (!report.observed) {
    err << "flytecd get registrations: " << report.error->message << "\n";
    return 1;
  }
  const auto& regs = report.registrations;
  if (format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& o : regs.items) j.push_back(registration::to_json(o));
    out << dump_json(j, 2) << "\n";
  } else {
    auto ledger_rows = target->ledger->registrations();
    for (const auto& o : regs.items) {
      using RS = registration::RegistrationState;
      std::string state = o.state == RS::register_  ? "not registered (pending)"
                          : o.state == RS::activate ? "registered, activation pending"
                          : o.state == RS::in_sync  ? "registered"
                                                    : std::string(to_string(o.state));
      out << o.key << "\n"
          << "  package:     " << o.package << "\n"
          << "  digest:      " << (o.digest.empty() ? "-" : o.digest) << "\n"
          << "  version:     " << o.version << "\n"
          << "  entities:    " << o.tasks << " tasks, " << o.workflows << " workflows, "
          << o.launch_plans << " launch plans\n"
          << "  activate:    " << model::to_string(o.activate) << "; ACTIVE now: ";
      if (o.active.empty()) out << "none";
      for (size_t i = 0; i < o.active.size(); ++i) out << (i ? ", " : "") << o.active[i];
      out << "\n  state:       " << state << "\n";
      if (!o.signed_by.empty())
        out << "  signature:   " << o.signed_by << " over " << o.manifest_digest
            << (o.signer_changed ? "; SIGNER CHANGED (the recorded version was " +
                                       (o.previous_signed_by.empty() ? std::string("unsigned")
                                                                     : o.previous_signed_by) +
                                       ")"
                                 : std::string())
            << "\n";
      if (ledger_rows)
        if (auto it = ledger_rows->find(o.key); it != ledger_rows->end()) {
          out << "  registered:  " << it->second.version << " (" << it->second.digest
              << ") from revision " << it->second.revision << "\n";
          if (auto by = ledger::signer_by(it->second.signer); !by.empty())
            out << "  registered signature: " << by << "\n";
        }
      if (!o.message.empty()) out << "  message:     " << o.message << "\n";
      for (const auto& d : o.drift) out << "  drift:       " << d << "\n";
    }
    if (regs.items.empty()) out << "no registrations\n";
  }
  return regs.ok() ? 0 : 1;
}

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
  return when_parsed(cmd, [repo, st]() -> int {
    if (st->live) {
      if (repo->count() > 0) st->target.repo = st->options.repo;
      return run_get_overrides_live(st->target, st->options, std::cout, std::cerr);
    }
    if (st->options.output == "text") {
      std::cerr << "flytecd get overrides: -o text goes with --live (yaml or json otherwise)\n";
      return 1;
    }
    return run_get_overrides(st->options, std::cout, std::cerr);
  });
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
  return when_parsed(cmd, [opt, format]() -> int {
    return run_get_registrations(*opt, *format, std::cout, std::cerr);
  });
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

}  // namespace flytecd::cli
