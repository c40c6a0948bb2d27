// `flytecd get overrides --live`: what FlyteAdmin holds at exactly one scope, beside Git's value
// for it.
#include "daemon/cli/commands/get_overrides_live.hpp"

#include "daemon/common/json_dump.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/reconcile/diff.hpp"

namespace flytecd::cli {
namespace {

// The attribute's own value (the MatchingAttributes oneof member) as JSON.
nlohmann::ordered_json attribute_value(const reconcile::OverrideState& o) {
  const auto all = model::message_to_json(o.value);
  const auto key = sinks::attribute_json_key(o.type);
  if (!all.is_object() || !all.contains(key)) return nlohmann::ordered_json::object();
  return nlohmann::ordered_json::parse(dump_json(all[key]));
}

std::string level_name(const model::Scope& s) {
  if (!s.workflow.empty()) return "workflow";
  if (!s.domain.empty()) return "project-domain";
  return "project";
}

}  // namespace

nlohmann::ordered_json live_overrides_document(const model::Scope& scope,
                                               const reconcile::State& desired,
                                               const reconcile::State& live,
                                               const reconcile::Managed& managed) {
  nlohmann::ordered_json doc;
  doc["project"] = scope.project;
  doc["domain"] = scope.domain;
  doc["workflow"] = scope.workflow;
  doc["level"] = level_name(scope);
  doc["attributes"] = nlohmann::ordered_json::array();
  for (const auto type : sinks::all_attribute_types()) {
    const auto key = reconcile::override_key(scope, type);
    const auto g = desired.overrides.find(key);
    const auto l = live.overrides.find(key);
    const bool in_git = g != desired.overrides.end(), in_live = l != live.overrides.end();
    if (!in_git && !in_live) continue;
    nlohmann::ordered_json a;
    a["type"] = sinks::attribute_type_name(type);
    a["attribute"] = sinks::attribute_json_key(type);
    auto changes = reconcile::diff_messages(in_live ? &l->second.value : nullptr,
                                            in_git ? &g->second.value : nullptr);
    std::string source;
    if (in_git && g->second.source) {
      reconcile::locate(changes, g->second.source->file, g->second.source->line,
                        g->second.source->fields);
      source = g->second.source->file + ":" + std::to_string(g->second.source->line);
    }
    a["state"] = !in_git           ? "live-only"
                 : !in_live        ? "git-only"
                 : changes.empty() ? "in-sync"
                                   : "differs";
    a["managed"] = managed.count(key) > 0;
    a["source"] = source.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(source);
    a["live"] = in_live ? attribute_value(l->second) : nlohmann::ordered_json();
    a["git"] = in_git ? attribute_value(g->second) : nlohmann::ordered_json();
    a["changes"] = nlohmann::ordered_json::array();
    for (const auto& c : changes) a["changes"].push_back(reconcile::change_json(c));
    doc["attributes"].push_back(std::move(a));
  }
  return doc;
}

std::string live_overrides_text(const nlohmann::ordered_json& doc) {
  std::string scope = doc.value("project", "");
  if (!doc.value("domain", "").empty()) scope += "/" + doc.value("domain", "");
  if (!doc.value("workflow", "").empty()) scope += "/" + doc.value("workflow", "");
  std::string out = "# " + scope + " (" + doc.value("level", "") + " level) in " +
                    doc.value("target", "FlyteAdmin") + " beside Git at " +
                    doc.value("revision", "?") + "\n";
  if (doc["attributes"].empty()) out += "no attributes at this scope, in FlyteAdmin or in Git\n";
  for (const auto& a : doc["attributes"]) {
    const std::string state = a["state"].get<std::string>();
    out += a["type"].get<std::string>() + ": " + state + " (" +
           (a["managed"].get<bool>() ? "managed" : "not managed by flytecd") + ")";
    if (a["source"].is_string()) out += ", Git " + a["source"].get<std::string>();
    out += "\n";
    if (state == "in-sync") {
      out += "  live = Git: " + dump_json(a["live"]) + "\n";
      continue;
    }
    out += "  live: " + (a["live"].is_null() ? std::string("(none)") : dump_json(a["live"])) + "\n";
    out += "  Git:  " + (a["git"].is_null() ? std::string("(none)") : dump_json(a["git"])) + "\n";
    for (const auto& c : a["changes"])
      out += "  " + reconcile::change_line(reconcile::change_from_json(c)) + "\n";
  }
  return out;
}

int run_get_overrides_live(const TargetOptions& target, const GetOverridesOptions& g,
                           std::ostream& out, std::ostream& err) {
  const char* cmd = "flytecd get overrides --live";
  if (!g.workflow.empty() && g.domain.empty()) {
    err << cmd << ": --workflow needs --domain\n";
    return 1;
  }
  auto cfg = resolve_config(target);
  if (!cfg) {
    err << cmd << ": " << cfg.error().message << "\n";
    return 1;
  }
  auto prepared = prepare(*cfg, "", wiring::Access::read, err);
  if (!prepared) {
    err << cmd << ": " << prepared.error().message << "\n";
    return 1;
  }
  wiring::Target& t = prepared->rec->target();
  auto live = t.pass_sink().observe();  // ConfigMap mode: overrides from the ConfigMap
  if (!live) {
    err << cmd << ": " << live.error().wrap(t.description).message << "\n";
    return 1;
  }
  auto managed = t.ledger->managed();
  const model::Scope scope{g.project, g.domain, g.workflow};
  auto doc = live_overrides_document(
      scope, pass::desired_state(prepared->rev.docs, t.pass_sink().capabilities()), *live,
      managed ? *managed : reconcile::Managed{});
  doc["target"] = t.description;
  doc["revision"] = prepared->rev.revision;
  if (g.output == "json")
    out << dump_json(doc, 2) << "\n";
  else if (g.output == "text")
    out << live_overrides_text(doc);
  else
    out << model::json_to_yaml(doc);
  return 0;
}

}  // namespace flytecd::cli
