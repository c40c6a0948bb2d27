// `flytecd get settings --org O [-d D] [-p P]`: the effective value of every Flyte 2 settings
// leaf at a scope and the level that set it, from the repository or (--live) from the target's
// records beside Git's.
#include "daemon/cli/commands/get_settings.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "daemon/cli/suggest.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/model/loader.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/model/settings_view.hpp"
#include "sources/local/directory_reader.hpp"

namespace flytecd::cli {
namespace {

using Json = nlohmann::ordered_json;

struct GetSettingsOptions {
  std::string org, domain, project;
  std::string repo = ".";
  std::string output = "text";
  model::Policy policy;  // offline: the configured domains (--domains)
  bool live = false;
  TargetOptions target;
};

std::string scope_name(const GetSettingsOptions& g) {
  std::string s = g.org.empty() ? std::string("flyte") : g.org;
  if (!g.domain.empty()) s += "/" + g.domain;
  if (!g.project.empty()) s += "/" + g.project;
  return s;
}

// The levels of the requested key, each with Git's record (and its file:line) when the
// repository declares one.
std::vector<model::SettingsLevel> git_levels(const GetSettingsOptions& g,
                                             const model::Documents& docs) {
  std::map<std::string, const model::ObjectDoc*> by_key;
  for (const auto& o : docs.objects)
    if (o.kind == "settings") by_key[o.key] = &o;
  auto levels = model::settings_levels(g.org, g.domain, g.project);
  for (auto& lv : levels)
    if (auto it = by_key.find(lv.key); it != by_key.end()) {
      lv.record = it->second->value.get();
      lv.source = it->second->where.file + ":" + std::to_string(it->second->where.line);
      lv.lines = it->second->source.get();
    }
  return levels;
}

void print(const Json& doc, const std::string& output, const std::string& title,
           const Json* compare, const std::string& compare_name, std::ostream& out) {
  if (output == "json")
    out << dump_json(doc, 2) << "\n";
  else if (output == "yaml")
    out << model::json_to_yaml(doc);
  else
    out << model::effective_settings_text(doc, title, compare, compare_name);
}

// A domain the configuration does not list would silently show the org's values.
bool check_domain(const GetSettingsOptions& g, const std::vector<std::string>& domains,
                  std::ostream& err) {
  if (g.domain.empty() || domains.empty() ||
      std::find(domains.begin(), domains.end(), g.domain) != domains.end())
    return true;
  std::string list;
  for (size_t i = 0; i < domains.size(); ++i) list += (i ? ", " : "") + domains[i];
  err << "flytecd get settings: domain '" << scan::printable(g.domain)
      << "' is not one of the configured domains (" << list << ")"
      << did_you_mean(g.domain, domains) << "\n";
  return false;
}

int run_offline(const GetSettingsOptions& g, std::ostream& out, std::ostream& err) {
  const model::Limits limits;
  const model::Policy& policy = g.policy;
  if (!check_domain(g, policy.domains, err)) return 1;
  auto files = sources::local::read_yaml_tree(g.repo, limits.max_file_bytes);
  if (!files) {
    err << "flytecd get settings: " << files.error().message << "\n";
    return 1;
  }
  auto loaded = model::load_documents(*files, limits, policy);
  if (!loaded.ok()) {
    for (const auto& d : loaded.diagnostics)
      if (d.severity == model::Severity::error) err << model::format(d) << "\n";
    err << "flytecd get settings: the repository is invalid; run `flytecd validate " << g.repo
        << "`\n";
    return 1;
  }
  Json doc = model::effective_settings(git_levels(g, loaded.documents));
  Json with_scope;
  with_scope["org"] = g.org.empty() ? "flyte" : g.org;
  with_scope["domain"] = g.domain;
  with_scope["project"] = g.project;
  with_scope["from"] = "git " + g.repo;
  for (auto& [k, v] : doc.items()) with_scope[k] = v;
  print(with_scope, g.output, "effective settings of " + scope_name(g) + " in Git (" + g.repo + ")",
        nullptr, "", out);
  return 0;
}

int run_live(GetSettingsOptions& g, std::ostream& out, std::ostream& err) {
  const char* cmd = "flytecd get settings --live";
  auto cfg = resolve_config(g.target);
  if (!cfg) {
    err << cmd << ": " << cfg.error().message << "\n";
    return 1;
  }
  if (!check_domain(g, cfg->documents.domains, err)) return 1;
  auto prepared = prepare(*cfg, "", wiring::Access::read, err);
  if (!prepared) {
    err << cmd << ": " << prepared.error().message << "\n";
    return 1;
  }
  wiring::Target& t = prepared->rec->target();
  sinks::Sink& sink = t.pass_sink();
  if (!sink.capabilities().objects.count("settings")) {
    err << cmd << ": the target (" << t.description
        << ") holds no Flyte 2 settings; a flyte2: section in the configuration targets Flyte 2\n";
    return 1;
  }
  auto levels = model::settings_levels(g.org, g.domain, g.project);
  std::set<std::string> keys;
  for (const auto& lv : levels) keys.insert(lv.key);
  sink.expect(keys);
  auto live = sink.observe();
  if (!live) {
    err << cmd << ": " << live.error().wrap(t.description).message << "\n";
    return 1;
  }
  for (auto& lv : levels)
    if (auto it = live->objects.find(lv.key); it != live->objects.end()) {
      lv.record = it->second.value.get();
      lv.source = "version " + std::to_string(it->second.version);
    }
  Json git = model::effective_settings(git_levels(g, prepared->rev.docs));
  Json doc;
  doc["org"] = g.org.empty() ? "flyte" : g.org;
  doc["domain"] = g.domain;
  doc["project"] = g.project;
  doc["target"] = t.description;
  doc["revision"] = prepared->rev.revision;
  const Json effective = model::effective_settings(levels);
  for (const auto& [k, v] : effective.items()) doc[k] = v;
  doc["git"] = git;
  print(doc, g.output,
        "effective settings of " + scope_name(g) + " in " + t.description + " (Git at " +
            prepared->rev.revision.substr(0, 12) + " where it differs)",
        &doc["git"], "Git", out);
  return 0;
}

}  // namespace

Runner add_get_settings(CLI::App& get) {
  auto g = std::make_shared<GetSettingsOptions>();
  auto* cmd = get.add_subcommand(
      "settings",
      "The effective Flyte 2 settings at an org, domain or project, and the level that set each");
  cmd->add_option("--org", g->org, "Organization (default: Flyte 2's default org, flyte)");
  cmd->add_option("-d,--domain", g->domain, "Domain");
  cmd->add_option("-p,--project", g->project, "Project (needs --domain)")->type_name("PROJECT");
  cmd->add_option("-o,--output", g->output, "text, yaml or json")
      ->check(CLI::IsMember({"text", "yaml", "json"}));
  auto* repo = cmd->add_option("--repo", g->repo, "Repository directory (default: .)");
  cmd->add_option("--domains", g->policy.domains,
                  "The configured domains (without --live; --live reads them from --config)")
      ->delimiter(',');
  cmd->add_flag("--live", g->live,
                "Resolve over the records the Flyte 2 target holds (GetSettingsForEdit at each "
                "level), beside Git's values");
  auto& t = g->target;
  cmd->add_option("--config", t.config_file,
                  "With --live: flytecd config file (its source and its flyte2: target)");
  cmd->add_option("--state-dir", t.state_dir, "With --live: the state directory");
  cmd->footer(
      "Each leaf of flyteidl2.settings.Settings, resolved broadest level first: the narrowest\n"
      "level whose leaf is SETTING_STATE_VALUE or SETTING_STATE_UNSET decides; maps (labels,\n"
      "annotations, environment variables) merge per key and UNSET clears what broader levels\n"
      "set. A leaf no level sets is `inherit`: the server's default applies. Nothing is written.\n"
      "Exit codes: 0, 1 when the repository or the target cannot be read.\n"
      "Examples:\n"
      "  flytecd get settings -d development -p flytesnacks --repo repo/\n"
      "  flytecd get settings --live -d production -o json --config /etc/flytecd/config.yaml\n");
  return when_parsed(cmd, [repo, g]() -> int {
    if (!g->project.empty() && g->domain.empty()) {
      std::cerr << "flytecd get settings: --project needs --domain (Flyte 2 keys project settings "
                   "by org, domain and project)\n";
      return 1;
    }
    if (g->live) {
      if (repo->count() > 0) g->target.repo = g->repo;
      return run_live(*g, std::cout, std::cerr);
    }
    return run_offline(*g, std::cout, std::cerr);
  });
}

}  // namespace flytecd::cli
