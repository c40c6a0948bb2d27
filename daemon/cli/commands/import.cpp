// `flytecd import --out DIR`: the live projects, overrides and settings written as a flytecd
// repository, checked by planning it against the same live state (or, --from-flytectl,
// flytectl's attribute files converted).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "daemon/cli/command.hpp"
#include "daemon/cli/commands/import_flytectl.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/common/text.hpp"
#include "daemon/model/flytectl_attrs.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/pass/views.hpp"
#include "daemon/registration/registrar.hpp"
#include "daemon/wiring/target.hpp"

namespace flytecd::cli {

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
  return when_parsed(cmd, [st]() -> int {
    if (!st->flytectl.files.empty()) {
      st->flytectl.out_dir = st->out_dir;
      return run_import_flytectl(st->flytectl, std::cout, std::cerr);
    }
    return run_import(st->target, st->out_dir, std::cout, std::cerr);
  });
}

}  // namespace flytecd::cli
