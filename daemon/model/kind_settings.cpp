// Document kind Settings: one record of Flyte 2's settings service (flyteidl2.settings) at an
// org, org-domain or org-domain-project scope. `spec` is flyteidl2.settings.Settings in protobuf's
// JSON mapping, read through the descriptors the pinned npm package restores (no field is known
// to this file by name: a leaf is any message with a SettingState `state`), so a field Flyte 2
// adds works without code.
#include <map>

#include "daemon/common/quantity.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/model/document_fields.hpp"
#include "daemon/model/kinds.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/model/settings_view.hpp"
#include "flyteidl2/settings/settings_definition.pb.h"

namespace flytecd::model {
namespace {

namespace pb = google::protobuf;
using Settings = flyteidl2::settings::Settings;

// A leaf setting (StringSetting, QuantitySetting, …): a message with a `state` of SettingState.
const pb::FieldDescriptor* state_field(const pb::Descriptor* d) { return setting_state_field(d); }

struct LeafCheck {
  const std::string& file;
  const sinks::FieldLines& lines;
  int doc_line;
  Diagnostics& diags;

  Location at(const std::string& path) const {
    for (std::string p = path; !p.empty();) {
      if (const int l = lines.find(p); l > 0) return Location{file, l, 1};
      const auto dot = p.rfind('.');
      p = dot == std::string::npos ? "" : p.substr(0, dot);
    }
    return Location{file, doc_line, 1};
  }
  void error(DiagKind kind, const std::string& path, std::string message, std::string expected) {
    diags.push_back(Diagnostic{Severity::error,
                               kind,
                               at(path),
                               "spec." + path,
                               std::move(message),
                               std::move(expected),
                               {}});
  }

  // Each leaf: a value only with state VALUE, no scope_level (the server fills it on reads), a
  // quantity that parses and is not negative.
  void leaf(const pb::Message& m, const pb::FieldDescriptor* state, const std::string& path) {
    const auto* r = m.GetReflection();
    const bool value_state = r->GetEnumValue(m, state) == 2;  // SETTING_STATE_VALUE
    std::vector<const pb::FieldDescriptor*> set;
    r->ListFields(m, &set);
    for (const auto* f : set) {
      if (f == state) continue;
      const std::string fpath = path + "." + f->json_name();
      if (f->name() == "scope_level") {
        error(DiagKind::invalid_value, fpath, "scopeLevel is filled by the server on reads",
              "no scopeLevel in a document (the scope is the document's org, domain, project)");
      } else if (!value_state) {
        error(DiagKind::invalid_value, fpath,
              f->json_name() +
                  " is set but the state is not SETTING_STATE_VALUE (the server "
                  "ignores a value in any other state)",
              "state: SETTING_STATE_VALUE with a value, or SETTING_STATE_INHERIT / "
              "SETTING_STATE_UNSET without one");
      } else if (f->name() == "quantity_value") {
        const std::string& text = r->GetString(m, f);
        auto q = quantity::parse_quantity(text);
        if (!q || (q->negative && !q->digits.empty()))
          error(DiagKind::bad_quantity, fpath,
                "'" + scan::printable(text) + "' is not a non-negative Kubernetes quantity",
                "a quantity like 500m, 2, 1.5Gi, 512Mi");
      }
    }
  }

  // min <= max for each quantity both bounds of a `min` / `max` pair set to a value.
  void bounds(const pb::Message& m, const std::string& path) {
    const auto* d = m.GetDescriptor();
    const auto* min = d->FindFieldByName("min");
    const auto* max = d->FindFieldByName("max");
    if (!min || !max || !min->message_type() || min->message_type() != max->message_type()) return;
    const auto* r = m.GetReflection();
    if (!r->HasField(m, min) || !r->HasField(m, max)) return;
    const pb::Message& lo = r->GetMessage(m, min);
    const pb::Message& hi = r->GetMessage(m, max);
    for (int i = 0; i < min->message_type()->field_count(); ++i) {
      const auto* f = min->message_type()->field(i);
      auto quantity = [&](const pb::Message& side) -> std::optional<std::string> {
        if (!f->message_type() || !side.GetReflection()->HasField(side, f)) return std::nullopt;
        const pb::Message& leaf = side.GetReflection()->GetMessage(side, f);
        const auto* st = state_field(leaf.GetDescriptor());
        const auto* qv = leaf.GetDescriptor()->FindFieldByName("quantity_value");
        if (!st || !qv || leaf.GetReflection()->GetEnumValue(leaf, st) != 2) return std::nullopt;
        return leaf.GetReflection()->GetString(leaf, qv);
      };
      auto a = quantity(lo), b = quantity(hi);
      if (!a || !b) continue;
      auto qa = quantity::parse_quantity(*a), qb = quantity::parse_quantity(*b);
      if (qa && qb && quantity::compare(*qb, *qa) < 0)
        error(DiagKind::limits_below_defaults,
              path + (path.empty() ? "" : ".") + "max." + f->json_name(),
              "max " + scan::printable(*b) + " is below min " + scan::printable(*a),
              "max." + f->json_name() + " >= min." + f->json_name());
    }
  }

  void walk(const pb::Message& m, const std::string& path) {
    if (const auto* st = state_field(m.GetDescriptor())) return leaf(m, st, path);
    bounds(m, path);
    const auto* r = m.GetReflection();
    std::vector<const pb::FieldDescriptor*> set;
    r->ListFields(m, &set);
    for (const auto* f : set)
      if (f->message_type() && !f->is_repeated())
        walk(r->GetMessage(m, f), path + (path.empty() ? "" : ".") + f->json_name());
  }
};

void parse_settings(const std::string& file, const YAML::Node& doc, Fields& f, const Policy& policy,
                    Documents& out, Diagnostics& diags) {
  const size_t before = diags.size();
  const std::string org = f.str("org", false, "an organization (empty: Flyte 2's default, flyte)");
  const std::string domain = f.str("domain", false, "a domain");
  check_domain(f, file, doc, domain, policy);
  const std::string project = f.str("project", false, "a project id");
  check_project_id(f, file, doc["project"], "project", project);
  if (!project.empty() && domain.empty())
    f.add(DiagKind::missing_field, location_of(file, doc["project"]), "domain",
          "project '" + scan::printable(project) + "' is set without a domain",
          "a domain: Flyte 2 refuses a project-scope key without one (InvalidArgument)");
  parse_metadata(file, doc, f, diags, false);
  YAML::Node spec = f.node("spec");
  f.reject_unknown("apiVersion, kind, metadata, org, domain, project, spec");
  if (!spec.IsDefined() || spec.IsNull() || !spec.IsMap()) {
    f.add(spec.IsDefined() && !spec.IsNull() ? DiagKind::wrong_type : DiagKind::missing_field,
          location_of(file, spec.IsDefined() ? spec : doc), "spec",
          spec.IsDefined() && !spec.IsNull() ? "spec is not a mapping"
                                             : "required field 'spec' is missing",
          "a mapping of flyteidl2.settings.Settings fields (run, security, storage, taskResource, "
          "labels, annotations, environmentVariables)");
    return;
  }
  if (spec.size() == 0) {
    f.add(DiagKind::wrong_type, location_of(file, spec), "spec",
          "spec is empty: a record that inherits everything is the same as no record",
          "at least one setting (state SETTING_STATE_VALUE or SETTING_STATE_UNSET, or an "
          "explicit SETTING_STATE_INHERIT), or no Settings document for this scope");
    return;
  }
  auto json = yaml_to_proto_json(spec, Settings::descriptor(), file, "spec", diags);
  if (!json || diags.size() != before) return;
  auto value = std::make_shared<Settings>();
  if (std::string err = json_to_message(*json, value.get()); !err.empty()) {
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::invalid_value,
                               location_of(file, spec),
                               "spec",
                               "protobuf rejected the value: " + err,
                               "a valid flyteidl2.settings.Settings",
                               {}});
    return;
  }
  sinks::FieldLines lines;
  collect_field_lines(spec, Settings::descriptor(), "", lines);
  const Location where = location_of(file, doc);
  LeafCheck{file, lines, where.line, diags}.walk(*value, "");
  if (diags.size() != before) return;
  lines.shrink();
  ObjectDoc o;
  o.kind = "settings";
  o.key = settings_object_key(org, domain, project);
  o.value = std::move(value);
  o.where = where;
  o.source = std::make_shared<const sinks::SourceLines>(
      sinks::SourceLines{file, where.line, std::move(lines)});
  out.objects.push_back(std::move(o));
}

}  // namespace

std::string settings_object_key(const std::string& org, const std::string& domain,
                                const std::string& project) {
  return "settings/" + (org.empty() ? std::string("flyte") : org) + "/" + domain + "/" + project;
}

const pb::FieldDescriptor* setting_state_field(const pb::Descriptor* d) {
  const auto* f = d->FindFieldByName("state");
  return f && f->enum_type() && f->enum_type()->full_name() == "flyteidl2.settings.SettingState"
             ? f
             : nullptr;
}

std::set<std::string> settings_candidate_keys(const std::set<std::string>& projects,
                                              const std::vector<std::string>& domains) {
  std::set<std::string> out{settings_object_key("", "", "")};
  for (const auto& d : domains) {
    out.insert(settings_object_key("", d, ""));
    for (const auto& p : projects) out.insert(settings_object_key("", d, p));
  }
  return out;
}

void parse_settings_kind(const KindInput& in, Fields& f, Documents& out, Diagnostics& diags) {
  parse_settings(in.file, in.doc, f, in.policy, out, diags);
}

void check_settings_kind(const Documents& docs, Diagnostics& diags) {
  std::map<std::string, const ObjectDoc*> seen;
  for (const auto& o : docs.objects) {
    if (o.kind != "settings") continue;
    auto [it, inserted] = seen.emplace(o.key, &o);
    if (!inserted)
      diags.push_back(Diagnostic{Severity::error, DiagKind::duplicate_scope, o.where, "",
                                 "settings for " + o.key.substr(9) + " are declared twice",
                                 "one Settings document per (org, domain, project)",
                                 it->second->where});
  }
}

}  // namespace flytecd::model
