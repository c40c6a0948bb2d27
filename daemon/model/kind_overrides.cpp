// Document kinds Overrides and PlatformDefaults: matchable attributes at a project,
// project-domain or workflow scope, and FlyteAdmin-wide (or domain-wide) defaults. Each `spec` key
// is a field of flyteidl.admin.MatchingAttributes, read through its descriptor.
#include <algorithm>
#include <map>

#include "daemon/common/quantity.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/model/attribute_checks.hpp"
#include "daemon/model/document_fields.hpp"
#include "daemon/model/kinds.hpp"

namespace flytecd::model {
namespace admin = flyteidl::admin;

namespace {

void check_quantities(const std::string& file, const YAML::Node& tra, const std::string& path,
                      Diagnostics& diags) {
  if (!tra.IsMap()) return;
  std::map<std::string, std::pair<quantity::Quantity, YAML::Node>> defaults;
  for (const char* side : {"defaults", "limits"}) {
    YAML::Node spec = tra[side];
    if (!spec || !spec.IsMap()) continue;
    for (const auto& kv : spec) {
      if (!kv.second.IsScalar()) continue;
      std::string field_path = path + "." + side + "." + kv.first.Scalar();
      auto q = quantity::parse_quantity(kv.second.Scalar());
      if (!q) {
        diags.push_back(
            Diagnostic{Severity::error,
                       DiagKind::bad_quantity,
                       location_of(file, kv.second),
                       field_path,
                       "'" + scan::printable(kv.second.Scalar()) + "' is not a Kubernetes quantity",
                       "a quantity like 500m, 2, 1.5Gi, 512Mi",
                       {}});
        continue;
      }
      if (q->negative && !q->digits.empty()) {
        diags.push_back(
            Diagnostic{Severity::error,
                       DiagKind::bad_quantity,
                       location_of(file, kv.second),
                       field_path,
                       "negative quantity '" + scan::printable(kv.second.Scalar()) + "'",
                       "a non-negative quantity",
                       {}});
        continue;
      }
      // ephemeralStorage and ephemeral_storage name the same field.
      std::string name =
          kv.first.Scalar() == "ephemeral_storage" ? "ephemeralStorage" : kv.first.Scalar();
      if (std::string(side) == "defaults") {
        defaults[name] = {*q, kv.second};
      } else if (auto it = defaults.find(name);
                 it != defaults.end() && quantity::compare(*q, it->second.first) < 0) {
        diags.push_back(
            Diagnostic{Severity::error, DiagKind::limits_below_defaults,
                       location_of(file, kv.second), field_path,
                       "limit " + scan::printable(kv.second.Scalar()) + " is below the default " +
                           scan::printable(it->second.second.Scalar()),
                       "limits." + kv.first.Scalar() + " >= defaults." + kv.first.Scalar(),
                       location_of(file, it->second.second)});
      }
    }
  }
}

// Converts an Overrides/PlatformDefaults `spec` into one MatchingAttributes per attribute type.
struct SpecEntry {
  AttributeType type;
  admin::MatchingAttributes value;
  Location where;
  sinks::FieldLines field_lines;
};

std::vector<SpecEntry> parse_spec(const std::string& file, const YAML::Node& spec, bool platform,
                                  Diagnostics& diags) {
  std::vector<SpecEntry> out;
  const auto* desc = admin::MatchingAttributes::descriptor();
  for (const auto& kv : spec) {
    std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    std::string path = "spec." + key;
    const google::protobuf::FieldDescriptor* f = desc->FindFieldByName(key);
    if (!f)
      for (int i = 0; i < desc->field_count(); ++i)
        if (desc->field(i)->json_name() == key) f = desc->field(i);
    if (!f && key == "<<") {
      diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::unknown_field,
                                 location_of(file, kv.first),
                                 path,
                                 k_merge_key_message,
                                 k_merge_key_expected,
                                 {}});
      continue;
    }
    if (!f) {
      std::string names;
      for (int i = 0; i < desc->field_count(); ++i)
        names += (i ? ", " : "") + desc->field(i)->json_name();
      diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::unknown_field,
                                 location_of(file, kv.first),
                                 path,
                                 "unknown attribute '" + scan::printable(key) +
                                     "' (not a field of flyteidl.admin.MatchingAttributes)",
                                 "one of: " + names,
                                 {}});
      continue;
    }
    auto type = attribute_type_of_field(f->number());
    if (!type) {
      diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::unsupported_attribute,
                                 location_of(file, kv.first),
                                 path,
                                 "MatchingAttributes field '" + scan::printable(key) +
                                     "' has no known MatchableResource type",
                                 "a field FlyteAdmin stores as a matchable resource",
                                 {}});
      continue;
    }
    if (*type == admin::QUALITY_OF_SERVICE_SPECIFICATION && !platform) {
      diags.push_back(
          Diagnostic{Severity::error,
                     DiagKind::unsupported_attribute,
                     location_of(file, kv.first),
                     path,
                     "QUALITY_OF_SERVICE cannot be written through FlyteAdmin's API: every "
                     "Update*Attributes RPC rejects it "
                     "(\"Unrecognized matching attributes type\"), although executions read it",
                     "set QoS tiers in FlyteAdmin's configuration (a PlatformDefaults document) or "
                     "on the launch plan",
                     {}});
      continue;
    }
    size_t before = diags.size();
    auto json = yaml_to_proto_json(kv.second, f->message_type(), file, path, diags);
    if (*type == admin::TASK_RESOURCE) check_quantities(file, kv.second, path, diags);
    if (*type == admin::CLUSTER_RESOURCE)
      check_cluster_resource_quantities(file, kv.second, path, diags);
    if (*type == admin::WORKFLOW_EXECUTION_CONFIG)
      check_max_parallelism(file, kv.second, path, diags);
    if (!json || diags.size() != before) continue;
    nlohmann::json full = nlohmann::json::object();
    full[f->json_name()] = *json;
    SpecEntry entry{*type, {}, location_of(file, kv.first), {}};
    entry.field_lines.set(f->json_name(), location_of(file, kv.second).line);
    collect_field_lines(kv.second, f->message_type(), f->json_name(), entry.field_lines);
    if (std::string err = json_to_message(full, &entry.value); !err.empty()) {
      diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::invalid_value,
                                 location_of(file, kv.second),
                                 path,
                                 "protobuf rejected the value: " + err,
                                 "a valid " + f->message_type()->full_name(),
                                 {}});
      continue;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

void parse_overrides(const std::string& file, const YAML::Node& doc, Fields& f,
                     const Policy& policy, Documents& out, Diagnostics& diags, bool platform) {
  Scope scope;
  if (!platform) {
    scope.project = f.str("project", true, "a project id");
    check_project_id(f, file, doc["project"], "project", scope.project);
    scope.workflow = f.str("workflow", false);
  }
  scope.domain = f.str("domain", false);
  check_domain(f, file, doc, scope.domain, policy);
  if (!scope.workflow.empty() && scope.domain.empty())
    f.add(DiagKind::workflow_scope_without_domain, location_of(file, doc["workflow"]), "workflow",
          "workflow '" + scan::printable(scope.workflow) + "' is set without a domain",
          "a domain: FlyteAdmin keys workflow overrides by project, domain and workflow");
  YAML::Node spec = f.node("spec");
  parse_metadata(file, doc, f, diags, false);
  f.reject_unknown(platform ? "apiVersion, kind, metadata, domain, spec"
                            : "apiVersion, kind, metadata, project, domain, workflow, spec");
  if (!spec.IsDefined() || spec.IsNull()) {
    f.add(DiagKind::missing_field, location_of(file, doc), "spec",
          "required field 'spec' is missing", "a mapping of MatchingAttributes fields");
    return;
  }
  if (!spec.IsMap() || spec.size() == 0) {
    f.add(DiagKind::wrong_type, location_of(file, spec), "spec",
          spec.IsMap() ? "spec is empty" : "spec is not a mapping",
          "a mapping of MatchingAttributes fields, e.g. taskResourceAttributes");
    return;
  }
  for (auto& entry : parse_spec(file, spec, platform, diags)) {
    if (!scope.workflow.empty() &&
        (entry.type == admin::CLUSTER_RESOURCE || entry.type == admin::CLUSTER_ASSIGNMENT))
      diags.push_back(Diagnostic{
          Severity::warning,
          DiagKind::unsupported_attribute,
          entry.where,
          "spec." + attribute_json_key(entry.type),
          attribute_type_name(entry.type) +
              " at workflow scope is stored by FlyteAdmin but never read: it is looked up by "
              "project and domain only",
          "this attribute at project or project-domain scope",
          {}});
    if (!platform && scope.domain.empty() && entry.type == admin::PLUGIN_OVERRIDE &&
        !policy.configmap_mode)
      diags.push_back(Diagnostic{
          Severity::error,
          DiagKind::unsupported_attribute,
          entry.where,
          "spec." + attribute_json_key(entry.type),
          "PLUGIN_OVERRIDE at project scope cannot be stored by FlyteAdmin: "
          "UpdateProjectAttributes with plugin overrides always fails (its ResourceRepo.GetRaw "
          "refuses an empty domain: Internal \"unexpected error type for: missing and/or invalid "
          "parameters\")",
          "pluginOverrides in an Overrides document with a domain (project-domain scope, one per "
          "domain), or in PlatformDefaults",
          {}});
    else if (platform)
      out.platform_defaults.push_back(
          PlatformDefault{scope.domain, entry.type, std::move(entry.value), entry.where});
    else {
      entry.field_lines.shrink();
      auto source = std::make_shared<const sinks::SourceLines>(
          sinks::SourceLines{entry.where.file, entry.where.line, std::move(entry.field_lines)});
      out.overrides.push_back(
          Override{scope, entry.type, std::move(entry.value), entry.where, std::move(source)});
    }
  }
}

}  // namespace

void parse_overrides_kind(const KindInput& in, Fields& f, Documents& out, Diagnostics& diags) {
  parse_overrides(in.file, in.doc, f, in.policy, out, diags, false);
}

void parse_platform_defaults_kind(const KindInput& in, Fields& f, Documents& out,
                                  Diagnostics& diags) {
  parse_overrides(in.file, in.doc, f, in.policy, out, diags, true);
}

void check_overrides_kind(const Documents& docs, Diagnostics& diags) {
  std::map<std::pair<Scope, int>, const Override*> scopes;
  for (const auto& o : docs.overrides) {
    auto [it, inserted] = scopes.emplace(std::make_pair(o.scope, static_cast<int>(o.type)), &o);
    if (!inserted)
      diags.push_back(Diagnostic{
          Severity::error, DiagKind::duplicate_scope, o.where, "spec." + attribute_json_key(o.type),
          attribute_type_name(o.type) + " for " + std::string(to_string(o.scope.level())) + " " +
              to_string(o.scope) + " is defined twice",
          "one document per (scope, attribute type)", it->second->where});
  }
}

void check_platform_defaults_kind(const Documents& docs, Diagnostics& diags) {
  std::map<std::pair<std::string, int>, const PlatformDefault*> platform;
  for (const auto& p : docs.platform_defaults) {
    auto [it, inserted] = platform.emplace(std::make_pair(p.domain, static_cast<int>(p.type)), &p);
    if (!inserted)
      diags.push_back(Diagnostic{
          Severity::error, DiagKind::duplicate_scope, p.where, "spec." + attribute_json_key(p.type),
          attribute_type_name(p.type) + " platform default for " +
              (p.domain.empty() ? std::string("all domains") : "domain " + p.domain) +
              " is defined twice",
          "one PlatformDefaults entry per (domain, attribute type)", it->second->where});
  }
}

}  // namespace flytecd::model
