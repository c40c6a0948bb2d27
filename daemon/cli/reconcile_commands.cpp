#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "daemon/cli/commands.hpp"
#include "daemon/cli/target.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/reconcile/apply.hpp"
#include "daemon/reconcile/render.hpp"
#include "daemon/registration/registrar.hpp"
#include "sources/local/directory_reader.hpp"

namespace flytecd::cli {
namespace {

Result<model::Documents> load_valid(const config::Config& cfg, std::ostream& err) {
  model::Limits limits;
  auto files = sources::local::read_yaml_tree(cfg.repo, limits.max_file_bytes);
  if (!files) return files.error();
  auto loaded = model::load_documents(*files, limits, cfg.documents);
  if (!loaded.ok()) {
    for (const auto& d : loaded.diagnostics)
      if (d.severity == model::Severity::error) err << model::format(d) << "\n";
    return make_error(ErrorCode::invalid_input,
                      "the repository at " + cfg.repo +
                          " is invalid; nothing was applied (run `flytecd validate`)");
  }
  return std::move(loaded.documents);
}

registration::RegistrationReport run_registrations(const config::Config& cfg, Target& target,
                                                   const model::Documents& docs,
                                                   const std::string& revision, bool dry_run,
                                                   std::ostream* out,
                                                   CircuitBreaker* breaker = nullptr) {
  registration::DefaultPackageSource packages(
      registration::fetch_options(cfg.packages, cfg.state_dir), cfg.packages.registry,
      registration::directory_reader(cfg.repo));
  registration::RegistrarOptions ro;
  ro.revision = revision;
  ro.self_heal = cfg.policy.self_heal;
  ro.prune = cfg.policy.prune;
  ro.dry_run = dry_run;
  ro.parallelism = cfg.parallelism;
  ro.max_package_bytes = cfg.packages.max_package_bytes;
  registration::MemoryBudget memory(cfg.packages.memory_budget_bytes);
  ro.memory = &memory;
  ro.breaker = breaker;
  return registration::reconcile_registrations(docs.registrations, *target.sink, packages,
                                               *target.ledger, ro,
                                               [&](const registration::RegistrationOutcome& o) {
                                                 if (out) *out << registration::describe(o) << "\n";
                                               });
}

}  // namespace

Result<config::Config> resolve_config(const TargetOptions& opt) {
  config::Config cfg = config::defaults();
  if (!opt.config_file.empty())
    if (auto s = config::load_file(opt.config_file, cfg); !s) return s.error();
  if (auto s = config::apply_env(cfg); !s) return s.error();
  if (!opt.flytectl_config.empty()) {
    auto admin = sinks::flyteadmin::load_flytectl_config(opt.flytectl_config);
    if (!admin) return admin.error();
    cfg.admin = *admin;
  }
  if (!opt.repo.empty()) cfg.repo = opt.repo;
  if (!opt.state_dir.empty()) cfg.state_dir = opt.state_dir;
  if (!opt.admin_endpoint.empty()) cfg.admin.endpoint = opt.admin_endpoint;
  if (opt.insecure) cfg.admin.insecure = true;
  if (opt.no_self_heal) cfg.policy.self_heal = false;
  if (opt.no_prune) cfg.policy.prune = false;
  if (opt.allow_mass_prune) cfg.policy.allow_mass_prune = true;
  if (opt.allow_empty) cfg.policy.allow_empty = true;
  if (opt.max_prune_share >= 0) cfg.policy.max_prune_share = opt.max_prune_share;
  if (opt.parallelism > 0) cfg.parallelism = opt.parallelism;
  if (opt.lock_wait_seconds >= 0) cfg.lock_wait_seconds = opt.lock_wait_seconds;
  if (auto s = config::check_ranges(cfg); !s) return s.error();
  return cfg;
}

int run_apply(const TargetOptions& opt, std::ostream& out, std::ostream& err) {
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd apply: " << cfg.error().message << "\n";
    return 1;
  }
  auto docs = load_valid(*cfg, err);
  if (!docs) {
    err << "flytecd apply: " << docs.error().message << "\n";
    return 1;
  }
  auto target = open_target(*cfg);
  if (!target) {
    err << "flytecd apply: " << target.error().message << "\n";
    return 1;
  }
  out << "target: " << target->description << "\n";
  reconcile::ApplyOptions ao;
  ao.revision = "dir:" + std::filesystem::absolute(cfg->repo).lexically_normal().string();
  ao.policy = cfg->policy;
  ao.parallelism = cfg->parallelism;
  const reconcile::State desired = reconcile::desired_state(*docs);
  // One guard over everything this revision would destroy, before any step of it runs.
  auto verdict = guard_revision(*cfg, *target, docs->document_count, docs->registrations, desired);
  if (!verdict) {
    err << "flytecd apply: " << verdict.error().message << "\n";
    return 1;
  }
  if (verdict->refused) {
    record_refusal(*target, ao.revision, verdict->reason);
    out << "REFUSED: " << verdict->reason << "\n"
        << "applied 0 steps; registrations: 0 write RPCs; nothing of this revision was executed\n";
    return 1;
  }
  CircuitBreaker breaker;  // one pass: a target that stops answering stops it all
  ao.breaker = &breaker;
  auto started = std::chrono::steady_clock::now();
  auto report = reconcile::apply(
      *target->sink, *target->ledger, desired, ao, [&](const reconcile::StepResult& r) {
        if (r.step.action == reconcile::Action::adopt) return;
        out << reconcile::step_line(r.step)
            << (r.status ? "  ok" : "  FAILED: " + r.status.error().message) << "\n";
      });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto& p = report.first_plan;
  for (const auto& d : p.drift)
    out << "! drift " << d.key << ": " << d.detail
        << (d.healed ? " (reverted)" : " (self-heal off: reported only)") << "\n";
  for (const auto& u : p.unmanaged) out << "? unmanaged " << u << " (left alone)\n";
  out << reconcile::summary_line(p) << "\n";
  // Registrations after projects and overrides: projects must exist, and TASK_RESOURCE limits a
  // task needs are in place before the task is created.
  // A refused plan executes nothing: neither its overrides nor its registrations.
  registration::RegistrationReport regs;
  if (!report.refused)
    regs = run_registrations(*cfg, *target, *docs, ao.revision, false, &out, &breaker);
  out << "registrations: " << regs.items.size() << " (" << regs.failed() << " failed), "
      << regs.rpcs << " write RPCs\n";
  size_t adopted = 0;
  for (const auto& r : report.results)
    adopted += r.step.action == reconcile::Action::adopt && r.status.ok();
  out << "applied " << report.results.size() - adopted << " steps (" << report.failed
      << " failed), adopted " << adopted << ", rounds " << report.rounds << ", " << secs << " s; "
      << (report.ok() ? "converged" : "NOT converged: " + report.error) << "\n";
  if (report.target_down() || regs.target_down)
    err << "flytecd apply: FlyteAdmin at " << target->description << " is down ("
        << (report.target_down() ? report.error : regs.target_down->message)
        << "); what succeeded is recorded in the ledger; run apply again when it is back\n";
  return report.ok() && regs.ok() ? 0 : 1;
}

int run_plan_live(const TargetOptions& opt, const std::string& format, std::ostream& out,
                  std::ostream& err) {
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd plan: " << cfg.error().message << "\n";
    return 1;
  }
  auto docs = load_valid(*cfg, err);
  if (!docs) {
    err << "flytecd plan: " << docs.error().message << "\n";
    return 1;
  }
  auto target = open_target(*cfg, Access::read);
  if (!target) {
    err << "flytecd plan: " << target.error().message << "\n";
    return 1;
  }
  auto live = target->sink->observe();
  if (!live) {
    err << "flytecd plan: " << live.error().message << "\n";
    return 1;
  }
  auto managed = target->ledger->managed();
  if (!managed) {
    err << "flytecd plan: " << managed.error().message << "\n";
    return 1;
  }
  const reconcile::State desired = reconcile::desired_state(*docs);
  auto p = reconcile::plan(desired, *live, *managed, cfg->policy);
  auto verdict = guard_revision(*cfg, *target, docs->document_count, docs->registrations, desired);
  if (!verdict) {
    err << "flytecd plan: " << verdict.error().message << "\n";
    return 1;
  }
  if (verdict->refused && !p.refused) {
    p.refused = true;
    p.refusal = verdict->reason;
  }
  auto regs = run_registrations(*cfg, *target, *docs, "plan", true, nullptr);
  if (format == "json") {
    auto j = reconcile::render_json(p, target->description);
    j["registrations"] = nlohmann::ordered_json::array();
    for (const auto& o : regs.items)
      j["registrations"].push_back(nlohmann::ordered_json::parse(registration::to_json(o).dump()));
    out << j.dump(2) << "\n";
  } else {
    out << (format == "markdown" ? reconcile::render_markdown(p, target->description)
                                 : reconcile::render_text(p, target->description));
    if (!regs.items.empty()) {
      out << (format == "markdown" ? "\n### Registrations\n\n" : "\nregistrations:\n");
      for (const auto& o : regs.items)
        out << (format == "markdown" ? "- " : "  ") << registration::describe(o) << "\n";
    }
  }
  if (p.refused || !regs.ok()) return 1;
  return p.has_changes() || regs.has_changes() ? 2 : 0;
}

int run_get_registrations(const TargetOptions& opt, const std::string& format, std::ostream& out,
                          std::ostream& err) {
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd get registrations: " << cfg.error().message << "\n";
    return 1;
  }
  auto docs = load_valid(*cfg, err);
  if (!docs) {
    err << "flytecd get registrations: " << docs.error().message << "\n";
    return 1;
  }
  auto target = open_target(*cfg, Access::read);
  if (!target) {
    err << "flytecd get registrations: " << target.error().message << "\n";
    return 1;
  }
  // A dry run: packages come from the cache (or the registry), activation from FlyteAdmin; the
  // ledger tells what was registered. Nothing is written.
  auto regs = run_registrations(*cfg, *target, *docs, "get", true, nullptr);
  if (format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& o : regs.items) j.push_back(registration::to_json(o));
    out << j.dump(2) << "\n";
  } else {
    auto ledger_rows = target->ledger->registrations();
    for (const auto& o : regs.items) {
      std::string state = o.state == "register"   ? "not registered (pending)"
                          : o.state == "activate" ? "registered, activation pending"
                          : o.state == "in-sync"  ? "registered"
                                                  : o.state;
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
      if (ledger_rows)
        if (auto it = ledger_rows->find(o.key); it != ledger_rows->end())
          out << "  registered:  " << it->second.version << " (" << it->second.digest
              << ") from revision " << it->second.revision << "\n";
      if (!o.message.empty()) out << "  message:     " << o.message << "\n";
      for (const auto& d : o.drift) out << "  drift:       " << d << "\n";
    }
    if (regs.items.empty()) out << "no registrations\n";
  }
  return regs.ok() ? 0 : 1;
}

int run_import(const TargetOptions& opt, const std::string& out_dir, std::ostream& out,
               std::ostream& err) {
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd import: " << cfg.error().message << "\n";
    return 1;
  }
  auto target = open_target(*cfg, Access::read);
  if (!target) {
    err << "flytecd import: " << target.error().message << "\n";
    return 1;
  }
  auto live = target->sink->observe();
  if (!live) {
    err << "flytecd import: " << live.error().message << "\n";
    return 1;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_empty(out_dir, ec)) {
    err << "flytecd import: " << out_dir << " exists and is not empty; refusing to overwrite\n";
    return 1;
  }
  // One Overrides document per scope, all scopes of a project in one file.
  std::map<std::string, std::map<model::Scope, std::vector<const reconcile::OverrideState*>>>
      by_project;
  size_t skipped = 0;
  for (const auto& [key, o] : live->overrides) {
    if (o.type == flyteidl::admin::QUALITY_OF_SERVICE_SPECIFICATION) {
      ++skipped;  // FlyteAdmin's API cannot write it back; see the warning below
      continue;
    }
    by_project[o.scope.project][o.scope].push_back(&o);
  }
  size_t files = 0, docs = 0;
  auto write = [&](const fs::path& p, const std::string& text) -> bool {
    fs::create_directories(p.parent_path(), ec);
    std::ofstream f(p);
    f << text;
    ++files;
    return static_cast<bool>(f);
  };
  for (const auto& [id, p] : live->projects) {
    nlohmann::ordered_json j;
    j["apiVersion"] = "flytecd/v1";
    j["kind"] = "Project";
    j["id"] = p.id;
    j["name"] = p.name;
    if (!p.description.empty()) j["description"] = p.description;
    if (!p.labels.empty()) j["labels"] = p.labels;
    if (p.archived) j["state"] = "archived";
    if (!write(
            fs::path(out_dir) / "projects" / id / "project.yaml",
            "# imported by flytecd from " + target->description + "\n" + model::json_to_yaml(j))) {
      err << "flytecd import: cannot write under " << out_dir << "\n";
      return 1;
    }
    ++docs;
  }
  for (const auto& [project, scopes] : by_project) {
    std::string text = "# imported by flytecd; one document per scope\n";
    bool first = true;
    for (const auto& [scope, rows] : scopes) {
      nlohmann::ordered_json j;
      j["apiVersion"] = "flytecd/v1";
      j["kind"] = "Overrides";
      j["project"] = scope.project;
      if (!scope.domain.empty()) j["domain"] = scope.domain;
      if (!scope.workflow.empty()) j["workflow"] = scope.workflow;
      nlohmann::ordered_json spec = nlohmann::ordered_json::object();
      for (const auto* o : rows) {
        auto v = nlohmann::ordered_json::parse(model::message_to_json(o->value).dump());
        for (auto it = v.begin(); it != v.end(); ++it) spec[it.key()] = it.value();
      }
      j["spec"] = spec;
      text += (first ? "" : "---\n") + model::json_to_yaml(j);
      first = false;
      ++docs;
    }
    if (!write(fs::path(out_dir) / "projects" / project / "overrides.yaml", text)) {
      err << "flytecd import: cannot write under " << out_dir << "\n";
      return 1;
    }
  }
  out << "imported " << live->projects.size() << " projects and "
      << live->overrides.size() - skipped << " overrides from " << target->description << " into "
      << out_dir << " (" << files << " files, " << docs << " documents)\n";
  if (skipped)
    out << "warning: " << skipped
        << " QUALITY_OF_SERVICE rows were not imported: FlyteAdmin's API cannot write them back\n";
  return 0;
}

}  // namespace flytecd::cli
