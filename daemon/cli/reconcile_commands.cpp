#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "daemon/cli/commands.hpp"

#include <ctime>

#include "daemon/cli/remote.hpp"
#include "daemon/cli/suggest.hpp"
#include "daemon/common/http/client.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/common/log.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/pass/apply.hpp"
#include "daemon/pass/views.hpp"
#include "daemon/reconcile/render.hpp"
#include "daemon/registration/registrar.hpp"
#include "daemon/run/daemon.hpp"
#include "daemon/wiring/target.hpp"
#include "daemon/wiring/target_identity.hpp"
#include "daemon/wiring/wiring.hpp"

namespace flytecd::cli {
namespace {}  // namespace

Result<wiring::LoadedRevision> load_valid(wiring::Reconciler& rec, const std::string& at,
                                          std::ostream& err) {
  const config::Config& cfg = rec.config();
  // The same source the daemon reads (wiring::make_source): Git, or the `repo` directory, whose
  // revision id is a hash of its content ("dir:<16 hex>"), so a command and the daemon name
  // one directory state alike.
  if (cfg.git.url.empty() && !at.empty())
    return make_error(ErrorCode::invalid_input,
                      "revision '" + at + "' needs a Git source (git.url or --git)");
  auto rev = rec.load(at);
  if (!rev) return rev.error();
  if (!rev->ok()) {
    for (const auto& d : rev->diagnostics)
      if (d.severity == model::Severity::error) err << model::format(d) << "\n";
    const std::string where = cfg.git.url.empty()
                                  ? "the repository at " + cfg.repo
                                  : rec.describe_source() + " at " + rev->revision.substr(0, 12);
    return make_error(ErrorCode::invalid_input,
                      where + " is invalid; nothing was applied (run `flytecd validate`)");
  }
  return rev;
}

Result<Prepared> prepare(const config::Config& cfg, const std::string& at, wiring::Access access,
                         std::ostream& err) {
  auto rec = wiring::Reconciler::open(cfg);
  if (!rec) return rec.error();
  auto rev = load_valid(**rec, at, err);
  if (!rev) return rev.error();
  if (auto s = (*rec)->open_target(access); !s) return s.error();
  return Prepared{std::move(*rec), std::move(*rev)};
}

pass::Options command_options(const config::Config& cfg, pass::Mode mode) {
  auto o = wiring::pass_options(cfg, mode);
  o.writer = wiring::host_identity() + " (flytecd CLI)";
  return o;
}

namespace {

// The ownership line of apply and plan: a rebuild, or a record that could not be used; "nothing
// owned, nothing recorded" only when it matters, i.e. live objects are left unmanaged (a first
// apply to an empty FlyteAdmin says nothing).
bool worth_saying(const pass::Ownership& o, const reconcile::Plan& plan) {
  if (o.state == pass::Ownership::State::ledger) return false;
  return o.state != pass::Ownership::State::none || !plan.unmanaged.empty();
}

// --project naming a project that neither the revision nor the ledger knows would plan nothing
// and exit 0: a typo looks like "nothing to do". Errors name the declared projects.
Status check_scope_project(const TargetOptions& opt, const model::Documents& docs,
                           const ledger::Ledger& ledger) {
  if (opt.project.empty()) return ok_status();
  std::set<std::string> projects;
  for (const auto& p : docs.projects) projects.insert(p.id);
  for (const auto& o : docs.overrides) projects.insert(o.scope.project);
  for (const auto& r : docs.registrations) projects.insert(r.project);
  if (projects.count(opt.project)) return ok_status();
  // Removed from Git but still owned: --project prunes it.
  if (auto managed = ledger.managed())
    for (const auto& [key, entry] : *managed)
      if (key == "project/" + opt.project || key.rfind("override/" + opt.project + "/", 0) == 0)
        return ok_status();
  if (auto regs = ledger.registrations())
    for (const auto& [key, rec] : *regs)
      if (rec.project == opt.project) return ok_status();
  const std::vector<std::string> known(projects.begin(), projects.end());
  std::string list;
  for (size_t i = 0; i < known.size() && i < 10; ++i) list += (i ? ", " : "") + known[i];
  return make_error(ErrorCode::invalid_input,
                    "--project '" + scan::printable(opt.project) +
                        "': no document declares it and flytecd manages nothing in it" +
                        did_you_mean(opt.project, known) +
                        (known.empty() ? std::string()
                                       : "; projects: " + list + (known.size() > 10 ? ", …" : "")));
}

}  // namespace

Result<config::Config> resolve_config(const TargetOptions& opt) {
  config::Config cfg = config::defaults();
  if (!opt.config_file.empty())
    if (auto s = config::load_file(opt.config_file, cfg); !s) return s.error();
  log::configure(cfg.log.level, cfg.log.format);
  if (auto s = config::apply_env(cfg); !s) return s.error();
  if (!opt.flytectl_config.empty()) {
    auto admin = sinks::flyteadmin::load_flytectl_config(opt.flytectl_config);
    if (!admin) return admin.error();
    cfg.admin = *admin;
  }
  if (!opt.repo.empty()) {
    cfg.repo = opt.repo;
    cfg.git.url.clear();  // an explicit directory wins over the configured Git source
  }
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

int run_apply(const TargetOptions& opt, const std::string& format, std::ostream& out,
              std::ostream& err) {
  const std::string at;  // the configured source at its head
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd apply: " << cfg.error().message << "\n";
    return 1;
  }
  auto prepared = prepare(*cfg, at, wiring::Access::write, err);
  if (!prepared) {
    err << "flytecd apply: " << prepared.error().message << "\n";
    return 1;
  }
  wiring::Reconciler& rec = *prepared->rec;
  const wiring::LoadedRevision& rev = prepared->rev;
  wiring::Target* target = &rec.target();
  if (auto s = check_scope_project(opt, rev.docs, *target->ledger); !s) {
    err << "flytecd apply: " << s.error().message << "\n";
    return 1;
  }
  const bool json = format == "json";
  if (!json) out << "target: " << target->description << "\n";
  auto options = command_options(*cfg, pass::Mode::execute);
  options.scope = pass::PassScope{opt.project, opt.domain};
  if (!json && !options.scope.empty()) out << "scope: " << options.scope.describe() << "\n";
  if (!json)
    options.on_step = [&](const pass::StepResult& r) {
      if (r.step.action == reconcile::Action::adopt) return;
      out << reconcile::step_line(r.step)
          << (r.status ? "  ok" : "  FAILED: " + r.status.error().message) << "\n";
      for (const auto& c : reconcile::step_changes(r.step))
        out << "    " << reconcile::change_line(c) << "\n";
    };
  const auto report = rec.pass(rev, options);
  const pass::Verdict verdict = pass::apply_verdict(report);  // the last line and the exit code
  const auto& applied = report.applied;
  size_t adopted = 0;
  for (const auto& r : applied.results)
    adopted += r.step.action == reconcile::Action::adopt && r.status.ok();
  if (worth_saying(report.ownership, report.plan) && !json)
    out << "ownership: " << report.ownership.message << "\n";
  if (json) {
    auto j = pass::plan_json(report);
    j["ownership"] = pass::ownership_json(report.ownership,
                                          "file " + pass::record_file(target->state_dir).string());
    j["applied"] = {{"steps", applied.results.size() - adopted},
                    {"failed", applied.failed},
                    {"adopted", adopted},
                    {"rounds", applied.rounds},
                    {"converged", applied.converged},
                    {"registrationRpcs", report.registrations.rpcs}};
    out << dump_json(j, 2) << "\n";
  } else if (report.outcome == pass::Outcome::refused) {
    out << "applied 0 steps; registrations: 0 write RPCs\n" << verdict.line << "\n";
  } else if (!report.observed) {
    out << "applied 0 steps\n" << verdict.line << "\n";
  } else {
    const auto& p = report.plan;
    for (const auto& d : p.drift) {
      out << "! drift " << d.key << ": " << d.detail
          << (d.healed ? " (reverted)" : " (self-heal off: reported only)") << "\n";
      for (const auto& c : d.changes) out << "    " << reconcile::change_line(c) << "\n";
    }
    for (const auto& u : p.unmanaged) out << "? unmanaged " << u << " (left alone)\n";
    out << pass::summary(report) << "\n";  // registrations too: a version bump is a change
    for (const auto& o : report.registrations.items) out << registration::describe(o) << "\n";
    out << "registrations: " << report.registrations.items.size() << " ("
        << report.registrations.failed() << " failed), " << report.registrations.rpcs
        << " write RPCs\n";
    out << "applied " << applied.results.size() - adopted << " steps (" << applied.failed
        << " failed), adopted " << adopted << ", rounds " << applied.rounds << ", "
        << report.seconds << " s\n"
        << verdict.line << "\n";
  }
  if (report.target_down())
    err << "flytecd apply: FlyteAdmin at " << target->description << " is down ("
        << (report.error ? report.error->message : "") << "); what succeeded is recorded in the "
        << "ledger; run apply again when it is back\n";
  return verdict.exit_code;
}

int run_plan_live(const TargetOptions& opt, const std::string& format, std::ostream& out,
                  std::ostream& err, const ReviewOptions* head) {
  auto cfg = resolve_config(opt);
  std::string at;  // the configured source at its head, or --head of --git
  if (cfg && head) {
    cfg->git.url = head->git;
    if (!head->path.empty()) cfg->git.path = head->path;
    cfg->git.allowed_signers_file.clear();
    at = head->head;
  }
  if (!cfg) {
    err << "flytecd plan: " << cfg.error().message << "\n";
    return 1;
  }
  auto prepared = prepare(*cfg, at, wiring::Access::read, err);
  if (!prepared) {
    err << "flytecd plan: " << prepared.error().message << "\n";
    return 1;
  }
  wiring::Reconciler& rec = *prepared->rec;
  wiring::Target* target = &rec.target();
  if (auto s = check_scope_project(opt, prepared->rev.docs, *target->ledger); !s) {
    err << "flytecd plan: " << s.error().message << "\n";
    return 1;
  }
  auto options = command_options(*cfg, pass::Mode::plan);
  options.scope = pass::PassScope{opt.project, opt.domain};
  const auto report = rec.pass(prepared->rev, options);
  if (!report.observed) {
    err << "flytecd plan: " << (report.error ? report.error->message : "not observed") << "\n";
    return 1;
  }
  if (format == "json") {
    auto j = pass::plan_json(report);
    j["ownership"] = pass::ownership_json(report.ownership,
                                          "file " + pass::record_file(target->state_dir).string());
    out << dump_json(j, 2) << "\n";
  } else {
    if (worth_saying(report.ownership, report.plan))
      err << "flytecd plan: ownership: " << report.ownership.message << "\n";
    out << pass::plan_text(report, format == "markdown");
  }
  return pass::plan_exit_code(report);
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

// Writes the live projects and overrides under `out_dir` (which must be empty or absent): one
// project.yaml per project, all of a project's scopes in its overrides.yaml. Prints what was
// written; false (with the error printed) when it cannot.
size_t object_files_count(const reconcile::State& live) {
  size_t n = 0;
  for (const auto& [key, o] : live.objects) n += o.kind == "settings";
  return n;
}

bool write_import(const reconcile::State& live, const std::string& out_dir,
                  const std::string& description, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_empty(out_dir, ec)) {
    err << "flytecd import: " << out_dir << " exists and is not empty; refusing to overwrite\n";
    return false;
  }
  // One Overrides document per scope, all scopes of a project in one file.
  std::map<std::string, std::map<model::Scope, std::vector<const reconcile::OverrideState*>>>
      by_project;
  size_t skipped = 0;
  for (const auto& [key, o] : live.overrides) {
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
  for (const auto& [id, p] : live.projects) {
    if (!write(fs::path(out_dir) / "projects" / id / "project.yaml",
               "# imported by flytecd from " + description + "\n" +
                   model::json_to_yaml(model::project_document(p)))) {
      err << "flytecd import: cannot write under " << out_dir << "\n";
      return false;
    }
    ++docs;
  }
  // Objects of a document kind (Flyte 2 settings), one document each in the file of their
  // project (the org and domain records in settings.yaml).
  std::map<std::string, std::string> object_files;
  for (const auto& [key, o] : live.objects) {
    if (o.kind != "settings") continue;
    const auto parts = text::split(key, '/');  // settings/<org>/<domain>/<project>
    if (parts.size() != 4) continue;
    nlohmann::ordered_json j;
    j["apiVersion"] = "flytecd/v1";
    j["kind"] = "Settings";
    if (parts[1] != "flyte") j["org"] = parts[1];
    if (!parts[2].empty()) j["domain"] = parts[2];
    if (!parts[3].empty()) j["project"] = parts[3];
    j["spec"] = nlohmann::ordered_json::parse(dump_json(model::message_to_json(*o.value)));
    const std::string file =
        parts[3].empty() ? "settings.yaml" : "projects/" + parts[3] + "/settings.yaml";
    std::string& text = object_files[file];
    text += (text.empty() ? "# imported by flytecd; one document per scope\n" : "---\n") +
            model::json_to_yaml(j);
    ++docs;
  }
  for (const auto& [file, text] : object_files)
    if (!write(fs::path(out_dir) / file, text)) {
      err << "flytecd import: cannot write under " << out_dir << "\n";
      return false;
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
        auto v = nlohmann::ordered_json::parse(dump_json(model::message_to_json(o->value)));
        for (auto it = v.begin(); it != v.end(); ++it) spec[it.key()] = it.value();
      }
      j["spec"] = spec;
      text += (first ? "" : "---\n") + model::json_to_yaml(j);
      first = false;
      ++docs;
    }
    if (!write(fs::path(out_dir) / "projects" / project / "overrides.yaml", text)) {
      err << "flytecd import: cannot write under " << out_dir << "\n";
      return false;
    }
  }
  out << "imported " << live.projects.size() << " projects, " << live.overrides.size() - skipped
      << " overrides and " << object_files_count(live) << " settings records from " << description
      << " into " << out_dir << " (" << files << " files, " << docs << " documents)\n";
  if (skipped)
    out << "warning: " << skipped
        << " QUALITY_OF_SERVICE rows were not imported: FlyteAdmin's API cannot write them back\n";
  return true;
}

// The check: the imported repository, planned against the same live state by the same pass as
// apply, must call for no change (only adoptions). 0 when it does, 1 otherwise.
int check_import(wiring::Reconciler& rec, const config::Config& imported,
                 const pass::PassScope& only, const std::string& out_dir,
                 const std::string& description, std::ostream& out, std::ostream& err) {
  auto rev = load_valid(rec, "", err);
  if (!rev) {
    err << "flytecd import: check: " << rev.error().message << "\n";
    return 1;
  }
  auto check_options = command_options(imported, pass::Mode::plan);
  check_options.scope = only;
  const auto check = rec.pass(*rev, check_options);
  if (!check.observed || check.outcome == pass::Outcome::failed) {
    err << "flytecd import: check: " << (check.error ? check.error->message : "failed") << "\n";
    return 1;
  }
  // The check says what that plan really concludes: refused, projects or overrides to change,
  // or registrations the imported repository would remove.
  const std::string why_no_registrations =
      "import writes projects and overrides only: FlyteAdmin keeps the entities a registration "
      "created, not the package archive they came from, so " +
      out_dir + " declares no WorkflowRegistration";
  size_t removed = 0;
  for (const auto& o : check.registrations.items)
    removed += o.state == registration::RegistrationState::removed;
  if (check.outcome == pass::Outcome::refused) {
    out << "check FAILED: `flytecd plan --live --repo " << out_dir
        << "` is REFUSED: " << check.guard.reason << "\n";
    if (removed)
      out << "  " << why_no_registrations << "; applying it would remove " << removed
          << " registration(s) flytecd manages: add their WorkflowRegistration documents to "
          << out_dir << " first\n";
    return 1;
  }
  if (check.plan.has_changes()) {
    out << "check FAILED: planning " << out_dir << " against " << description
        << " calls for changes:\n"
        << pass::plan_text(check, false);
    return 1;
  }
  if (check.registrations.has_changes()) {
    out << "check FAILED: `flytecd plan --live --repo " << out_dir
        << "` calls for registration changes (" << pass::summary(check) << ")\n"
        << "  " << why_no_registrations << "; applying it would remove " << removed
        << " registration(s) flytecd manages: add their WorkflowRegistration documents to "
        << out_dir << " first\n";
    return 1;
  }
  out << "check: `flytecd plan --live --repo " << out_dir << "` calls for no change ("
      << pass::summary(check) << ")\n";
  return 0;
}

}  // namespace

int run_import(const TargetOptions& opt, const std::string& out_dir, std::ostream& out,
               std::ostream& err) {
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd import: " << cfg.error().message << "\n";
    return 1;
  }
  // The check plans the repository written here against the target read: one reconciler whose
  // source is that directory.
  config::Config imported = *cfg;
  imported.repo = out_dir;
  imported.git.url.clear();
  auto rec = wiring::Reconciler::open(imported);
  if (!rec) {
    err << "flytecd import: " << rec.error().message << "\n";
    return 1;
  }
  if (auto s = (*rec)->open_target(wiring::Access::read); !s) {
    err << "flytecd import: " << s.error().message << "\n";
    return 1;
  }
  wiring::Target* target = &(*rec)->target();
  auto live = target->pass_sink().observe();  // ConfigMap mode: overrides from the ConfigMap
  if (!live) {
    err << "flytecd import: " << live.error().message << "\n";
    return 1;
  }
  // A settings service cannot list: read every key the projects observed and the domains can
  // hold, then observe again.
  if (target->pass_sink().capabilities().objects.count("settings")) {
    std::set<std::string> projects;
    for (const auto& [id, p] : live->projects) projects.insert(id);
    target->pass_sink().expect(model::settings_candidate_keys(projects, cfg->documents.domains));
    live = target->pass_sink().observe();
    if (!live) {
      err << "flytecd import: " << live.error().message << "\n";
      return 1;
    }
  }
  const pass::PassScope only{opt.project, opt.domain};
  pass::narrow(only, *live);  // --project/--domain: only those scopes are imported
  if (!write_import(*live, out_dir, target->description, out, err)) return 1;
  return check_import(**rec, imported, only, out_dir, target->description, out, err);
}

namespace {

// GET /api/v1/history of a running daemon, back into entries (for the same text view).
std::vector<ledger::HistoryEntry> entries_of(const nlohmann::json& j) {
  std::vector<ledger::HistoryEntry> out;
  if (!j.is_array()) return out;
  auto text = [](const nlohmann::json& o, const char* k) {
    return o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : std::string();
  };
  auto seconds = [&](const nlohmann::json& o, const char* k) -> int64_t {
    const std::string t = text(o, k);
    std::tm tm{};
    if (t.empty() || !strptime(t.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
    return static_cast<int64_t>(timegm(&tm));
  };
  for (const auto& e : j) {
    ledger::HistoryEntry h;
    h.id = e.value("id", int64_t{0});
    h.started_at = seconds(e, "time");
    h.revision = text(e, "revision");
    h.subject = text(e, "subject");
    h.author = text(e, "author");
    h.committed_at = seconds(e, "committedAt");
    h.trigger = text(e, "trigger");
    h.outcome = text(e, "outcome");
    h.detail = text(e, "detail");
    h.noops = e.value("noopPassesAfter", int64_t{0});
    if (e.contains("steps") && e["steps"].is_array())
      for (const auto& st : e["steps"])
        h.step_list.push_back(ledger::HistoryStep{
            text(st, "action"), text(st, "key"), text(st, "outcome"), text(st, "message"),
            st.contains("changes") ? dump_json(st["changes"]) : std::string()});
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace

namespace {

// The ledger `history` reads: the configured target's (target_identity), else — when the state
// directory holds the ledger of exactly one target — that one.
Result<std::string> history_ledger(const config::Config& cfg) {
  std::error_code ec;
  const auto own = wiring::target_dir(cfg) / "ledger.db";
  if (std::filesystem::exists(own, ec)) return own.string();
  const auto legacy = std::filesystem::path(cfg.state_dir) / "ledger.db";
  const auto known = wiring::known_targets(cfg.state_dir);
  if (known.size() == 1) return (known.front().second / "ledger.db").string();
  if (known.empty() && std::filesystem::exists(legacy, ec)) return legacy.string();
  if (known.empty())
    return make_error(ErrorCode::not_found,
                      "no ledger at " + cfg.state_dir +
                          ": nothing was applied from this state directory (--state-dir, or "
                          "stateDir in --config)");
  std::string ids;
  for (const auto& [id, dir] : known) ids += (ids.empty() ? "" : ", ") + id;
  return make_error(ErrorCode::invalid_input,
                    "state directory " + cfg.state_dir + " holds the ledgers of " +
                        std::to_string(known.size()) + " targets (" + ids + "), none of them " +
                        wiring::target_identity(cfg).id +
                        ": say which with --config or --admin-endpoint");
}

}  // namespace

int run_history(const TargetOptions& opt, const ledger::HistoryQuery& query,
                const std::string& domain, const std::string& server, const std::string& format,
                std::ostream& out, std::ostream& err) {
  const pass::PassScope scope{domain.empty() ? "" : query.project, domain};
  if (!server.empty()) {
    RemoteOptions remote;
    remote.server = server;
    std::string path = "/api/v1/history?limit=" + std::to_string(query.limit);
    if (!query.project.empty()) path += "&project=" + http::url_encode(query.project);
    if (!query.object.empty()) path += "&object=" + http::url_encode(query.object);
    auto j = daemon_request(remote, "GET", path);
    if (!j) {
      err << "flytecd history: " << j.error().message << "\n";
      return 1;
    }
    auto entries = entries_of(*j);
    pass::narrow(scope, entries);
    if (format == "json")
      out << dump_json(
                 (scope.empty() ? *j
                                : nlohmann::json::parse(dump_json(pass::history_json(entries)))),
                 2)
          << "\n";
    else
      out << pass::history_text(entries);
    return 0;
  }
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd history: " << cfg.error().message << "\n";
    return 1;
  }
  // The configured target's ledger; with only --state-dir, the one target it holds.
  auto path = history_ledger(*cfg);
  if (!path) {
    err << "flytecd history: " << path.error().message << "\n";
    return 1;
  }
  auto ledger = ledger::Ledger::open(*path);
  if (!ledger) {
    err << "flytecd history: " << ledger.error().message << "\n";
    return 1;
  }
  auto entries = (*ledger)->history(query);
  if (!entries) {
    err << "flytecd history: " << entries.error().message << "\n";
    return 1;
  }
  pass::narrow(scope, *entries);
  if (format == "json")
    out << dump_json(pass::history_json(*entries), 2) << "\n";
  else
    out << pass::history_text(*entries);
  return 0;
}

}  // namespace flytecd::cli
