#include "daemon/model/loader.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <set>

#include "daemon/common/quantity.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "daemon/model/attribute_checks.hpp"
#include "daemon/model/package_ref.hpp"
#include "daemon/model/proto_yaml.hpp"

namespace flytecd::model {
namespace admin = flyteidl::admin;

namespace {

constexpr const char* k_api_version = "flytecd/v1";
constexpr const char* k_operator_api_version = "flyte.backend/v1";

bool dns_label(const std::string& s) { return scan::is_dns1123_label(s); }

// Reads one YAML mapping, remembering which keys were consumed so the rest can be reported
// as unknown fields.
class Fields {
 public:
  Fields(const std::string& file, const YAML::Node& map, std::string path, Diagnostics& diags)
      : m_file(file), m_map(map), m_path(std::move(path)), m_diags(diags) {}

  YAML::Node node(const std::string& key) {
    m_known.insert(key);
    for (const auto& kv : m_map)
      if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
    return YAML::Node(YAML::NodeType::Undefined);
  }

  // A scalar string field. Missing + required => missing_field. Wrong type => wrong_type.
  std::string str(const std::string& key, bool required, const std::string& expected = "a string") {
    YAML::Node n = node(key);
    if (!n.IsDefined() || n.IsNull()) {
      if (required)
        add(DiagKind::missing_field, location_of(m_file, m_map), key,
            "required field '" + scan::printable(key) + "' is missing", expected);
      return {};
    }
    if (!n.IsScalar()) {
      add(DiagKind::wrong_type, location_of(m_file, n), key,
          "found a " + std::string(n.IsMap() ? "mapping" : "list"), expected);
      return {};
    }
    if (required && n.Scalar().empty())
      add(DiagKind::missing_field, location_of(m_file, n), key,
          "field '" + scan::printable(key) + "' is empty", expected);
    return n.Scalar();
  }

  std::map<std::string, std::string> string_map(const std::string& key) {
    std::map<std::string, std::string> out;
    YAML::Node n = node(key);
    if (!n.IsDefined() || n.IsNull()) return out;
    if (!n.IsMap()) {
      add(DiagKind::wrong_type, location_of(m_file, n), key, "found a non-mapping",
          "a mapping of strings");
      return out;
    }
    for (const auto& kv : n) {
      if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
        add(DiagKind::wrong_type, location_of(m_file, kv.second),
            key + "." + (kv.first.IsScalar() ? kv.first.Scalar() : "?"), "found a non-string value",
            "string keys and values");
        continue;
      }
      out[kv.first.Scalar()] = kv.second.Scalar();
    }
    return out;
  }

  // Every key not read through this object is an unknown field.
  void reject_unknown(const std::string& allowed) {
    for (const auto& kv : m_map) {
      std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      if (key == "<<")
        add(DiagKind::unknown_field, location_of(m_file, kv.first), key, k_merge_key_message,
            k_merge_key_expected);
      else if (!m_known.count(key))
        add(DiagKind::unknown_field, location_of(m_file, kv.first), key,
            "unknown field '" + scan::printable(key) + "'", "one of: " + allowed);
    }
  }

  void add(DiagKind kind, Location loc, const std::string& key, std::string msg,
           std::string expected) {
    m_diags.push_back(Diagnostic{Severity::error,
                                 kind,
                                 std::move(loc),
                                 m_path.empty() ? key : m_path + "." + key,
                                 std::move(msg),
                                 std::move(expected),
                                 {}});
  }

 private:
  const std::string& m_file;
  const YAML::Node& m_map;
  std::string m_path;
  Diagnostics& m_diags;
  std::set<std::string> m_known;
};

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

// The line of every field under `node` by protobuf JSON path (YAML keys may be either name); map
// entries are fields, a list is one value. Only for documents that already validated.
void collect_field_lines(const YAML::Node& node, const google::protobuf::Descriptor* desc,
                         const std::string& prefix, sinks::FieldLines& out) {
  if (!node.IsMap() || !desc) return;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) continue;
    const std::string& key = kv.first.Scalar();
    const google::protobuf::FieldDescriptor* f = desc->FindFieldByName(key);
    for (int i = 0; !f && i < desc->field_count(); ++i)
      if (desc->field(i)->json_name() == key) f = desc->field(i);
    if (!f) continue;
    const std::string path = prefix + "." + f->json_name();
    out.set(path, location_of("", kv.second).line);
    if (f->is_map()) {
      const auto* value = f->message_type()->map_value();
      if (!kv.second.IsMap()) continue;
      for (const auto& entry : kv.second) {
        if (!entry.first.IsScalar()) continue;
        const std::string entry_path = path + "." + entry.first.Scalar();
        out.set(entry_path, location_of("", entry.second).line);
        if (value->message_type())
          collect_field_lines(entry.second, value->message_type(), entry_path, out);
      }
    } else if (!f->is_repeated() && f->message_type()) {
      collect_field_lines(kv.second, f->message_type(), path, out);
    }
  }
}

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

void check_domain(Fields& fields, const std::string& file, const YAML::Node& doc,
                  const std::string& domain, const Policy& policy) {
  if (domain.empty()) return;
  if (std::find(policy.domains.begin(), policy.domains.end(), domain) == policy.domains.end()) {
    std::string list;
    for (const auto& d : policy.domains) list += (list.empty() ? "" : ", ") + d;
    fields.add(
        DiagKind::invalid_value, location_of(file, doc["domain"]), "domain",
        "domain '" + scan::printable(domain) + "' is not one of FlyteAdmin's configured domains",
        "one of: " + list);
  }
}

void check_project_id(Fields& fields, const std::string& file, const YAML::Node& node,
                      const std::string& key, const std::string& id) {
  if (!id.empty() && !dns_label(id))
    fields.add(DiagKind::invalid_value, location_of(file, node), key,
               "project id '" + scan::printable(id) + "' is not a DNS-1123 label",
               "lowercase letters, digits and '-', at most 63 characters");
}

// metadata: {name, labels, annotations, namespace}; returns the name.
std::string parse_metadata(const std::string& file, const YAML::Node& doc, Fields& f,
                           Diagnostics& diags, bool name_required) {
  YAML::Node meta = f.node("metadata");
  if (!meta.IsDefined() || meta.IsNull()) {
    if (name_required)
      f.add(DiagKind::missing_field, location_of(file, doc), "metadata",
            "required field 'metadata.name' is missing", "metadata: {name: <unique name>}");
    return {};
  }
  if (!meta.IsMap()) {
    f.add(DiagKind::wrong_type, location_of(file, meta), "metadata", "metadata is not a mapping",
          "metadata: {name: …, labels: …}");
    return {};
  }
  Fields mf(file, meta, "metadata", diags);
  std::string name = mf.str("name", name_required, "a name unique among documents of this kind");
  mf.string_map("labels");
  mf.string_map("annotations");
  mf.str("namespace", false);
  mf.reject_unknown("name, namespace, labels, annotations");
  return name;
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

void check_version(Fields& f, const std::string& file, const YAML::Node& node,
                   const std::string& key, const std::string& version) {
  // Versions end up in identifiers, OCI tags, the ledger and every log line of a registration.
  constexpr size_t k_max_version = 255;
  if (version.size() > k_max_version) {
    f.add(DiagKind::bad_version, location_of(file, node), key,
          "version of " + std::to_string(version.size()) + " characters",
          "at most " + std::to_string(k_max_version) + " characters");
    return;
  }
  if (!version.empty() && !url_safe_version(version))
    f.add(DiagKind::bad_version, location_of(file, node), key,
          "version '" + scan::printable(version) + "' is not URL-safe",
          "only letters, digits and - _ . ~");
}

void check_package(Fields& f, const std::string& file, const YAML::Node& node,
                   const std::string& key, const std::string& package, const Policy& policy) {
  if (package.empty()) return;
  std::string error;
  auto ref = parse_package_ref(package, error);
  if (!ref) {
    f.add(DiagKind::bad_package_uri, location_of(file, node), key, error, "");
    return;
  }
  if (policy.require_digest_pins && !ref->pinned())
    f.add(DiagKind::policy_violation, location_of(file, node), key,
          "package '" + scan::printable(package) +
              "' is not pinned by digest (policy: require digest pins)",
          ref->kind == PackageRef::Kind::oci ? "oci://host/repo@sha256:…" : "…#sha256=<hex>");
}

// verify: who must have signed the package. Signatures live next to OCI artifacts only.
void parse_verify(Fields& f, const std::string& file, const YAML::Node& v, Registration& r) {
  sources::VerifySpec spec;
  if (auto p = sources::parse_verify_spec(v, "verify", false, spec)) {
    f.add(DiagKind::invalid_value, Location{file, p->line}, p->field, p->what, p->expected);
    return;
  }
  std::string error;
  if (auto ref = parse_package_ref(r.package, error); ref && ref->kind != PackageRef::Kind::oci) {
    f.add(DiagKind::invalid_value, location_of(file, v), "verify",
          "a signature policy on a package that is not an OCI artifact",
          "an oci:// package (cosign signatures are stored next to it in its registry)");
    return;
  }
  if (!spec.key.empty() && (spec.key.front() == '/' || spec.key.find("..") != std::string::npos)) {
    f.add(DiagKind::invalid_value, location_of(file, v["key"]), "verify.key",
          "'" + scan::printable(spec.key) + "' leaves the repository",
          "a repository-relative path such as keys/cosign.pub (keyFile: for a file on the "
          "daemon's machine)");
    return;
  }
  spec.line = location_of(file, v).line;
  spec.where = file + ":" + std::to_string(spec.line);
  r.verify = std::move(spec);
}

void parse_registration(const std::string& file, const YAML::Node& doc, Fields& f,
                        const Policy& policy, Documents& out, Diagnostics& diags) {
  size_t before = diags.size();
  Registration r;
  r.source_kind = "WorkflowRegistration";
  r.where = location_of(file, doc);
  r.name = parse_metadata(file, doc, f, diags, true);
  r.project = f.str("project", true, "a project id");
  check_project_id(f, file, doc["project"], "project", r.project);
  r.domain = f.str("domain", true, "a domain");
  check_domain(f, file, doc, r.domain, policy);
  r.version = f.str("version", true, "a version such as v1.4.2");
  check_version(f, file, doc["version"], "version", r.version);
  r.package =
      f.str("package", true, "oci://host/repo:tag, oci://host/repo@sha256:…, https://… or a path");
  check_package(f, file, doc["package"], "package", r.package, policy);
  std::string activate = f.str("activate", false, "scheduled, all or none");
  if (activate.empty() || activate == "scheduled")
    r.activate = Activate::scheduled;
  else if (activate == "all")
    r.activate = Activate::all;
  else if (activate == "none")
    r.activate = Activate::none;
  else
    f.add(DiagKind::invalid_value, location_of(file, doc["activate"]), "activate",
          "unknown activation '" + scan::printable(activate) + "'", "scheduled, all or none");
  r.service_account = f.str("serviceAccount", false);
  r.iam_role = f.str("iamRole", false);
  r.raw_output_prefix = f.str("rawOutputDataPrefix", false);
  r.destination_dir = f.str("destinationDirectory", false);
  if (YAML::Node v = f.node("verify"); v.IsDefined() && !v.IsNull()) parse_verify(f, file, v, r);
  f.reject_unknown(
      "apiVersion, kind, metadata, project, domain, version, package, activate, serviceAccount, "
      "iamRole, rawOutputDataPrefix, destinationDirectory, verify");
  if (diags.size() == before) out.registrations.push_back(std::move(r));
}

// The existing Kubernetes operator's resource, accepted unchanged.
void parse_flyte_registration(const std::string& file, const YAML::Node& doc, Fields& f,
                              const Policy& policy, Documents& out, Diagnostics& diags) {
  size_t before = diags.size();
  Registration r;
  r.source_kind = "FlyteRegistration";
  r.where = location_of(file, doc);
  r.name = parse_metadata(file, doc, f, diags, true);
  f.node("status");  // never written by the operator; ignored
  YAML::Node spec = f.node("spec");
  f.reject_unknown("apiVersion, kind, metadata, spec, status");
  if (!spec.IsDefined() || !spec.IsMap()) {
    f.add(spec.IsDefined() ? DiagKind::wrong_type : DiagKind::missing_field,
          location_of(file, spec.IsDefined() ? spec : doc), "spec",
          "spec is missing or not a mapping",
          "spec: {workflowProject, workflowDomain, workflowVersion, workflowPackageUri}");
    return;
  }
  Fields sf(file, spec, "spec", diags);
  r.project = sf.str("workflowProject", true, "a project id");
  check_project_id(sf, file, spec["workflowProject"], "workflowProject", r.project);
  r.domain = sf.str("workflowDomain", true, "a domain");
  if (!r.domain.empty() &&
      std::find(policy.domains.begin(), policy.domains.end(), r.domain) == policy.domains.end())
    sf.add(
        DiagKind::invalid_value, location_of(file, spec["workflowDomain"]), "workflowDomain",
        "domain '" + scan::printable(r.domain) + "' is not one of FlyteAdmin's configured domains",
        "a configured domain");
  r.version = sf.str("workflowVersion", true, "a version");
  check_version(sf, file, spec["workflowVersion"], "workflowVersion", r.version);
  std::string uri =
      sf.str("workflowPackageUri", true, "a repository path in the configured registry");
  sf.reject_unknown("workflowProject, workflowDomain, workflowVersion, workflowPackageUri");
  if (uri.find("://") != std::string::npos) {
    r.package = uri;
    check_package(sf, file, spec["workflowPackageUri"], "workflowPackageUri", uri, policy);
  } else if (!uri.empty()) {
    // The operator pulls <registry>/<uri>:<workflowVersion> from its configured registry.
    r.registry_relative = true;
    r.package = uri;
    if (!valid_oci_repository(uri))
      sf.add(DiagKind::bad_package_uri, location_of(file, spec["workflowPackageUri"]),
             "workflowPackageUri",
             "'" + scan::printable(uri) + "' is not a valid registry repository path",
             "lowercase path components like team/workflows");
    else if (!r.version.empty() && !valid_oci_tag(r.version))
      sf.add(DiagKind::bad_version, location_of(file, spec["workflowVersion"]), "workflowVersion",
             "version '" + scan::printable(r.version) +
                 "' cannot be used as the OCI tag of the package",
             "[A-Za-z0-9_][A-Za-z0-9._-]*");
  }
  if (diags.size() == before) out.registrations.push_back(std::move(r));
}

// FlyteAdmin's ValidateProject (project_validator.go): refuse here what it refuses at apply.
void check_project_fields(Fields& f, const std::string& file, const YAML::Node& doc,
                          const ProjectDoc& p) {
  constexpr size_t k_max_name = 64;
  constexpr size_t k_max_description = 300;
  constexpr size_t k_max_labels = 16;
  // The name defaults to the id, so a long id without a name is reported at the id.
  const YAML::Node name_node = doc["name"].IsDefined() ? doc["name"] : doc["id"];
  if (p.name.size() > k_max_name)
    f.add(DiagKind::invalid_value, location_of(file, name_node), "name",
          "project name of " + std::to_string(p.name.size()) + " characters",
          "at most " + std::to_string(k_max_name) + " characters (FlyteAdmin's limit)");
  if (p.description.size() > k_max_description)
    f.add(DiagKind::invalid_value, location_of(file, doc["description"]), "description",
          "description of " + std::to_string(p.description.size()) + " characters",
          "at most " + std::to_string(k_max_description) + " characters (FlyteAdmin's limit)");
  if (p.labels.size() > k_max_labels)
    f.add(DiagKind::invalid_value, location_of(file, doc["labels"]), "labels",
          std::to_string(p.labels.size()) + " labels",
          "at most " + std::to_string(k_max_labels) + " labels (FlyteAdmin's limit)");
  for (const auto& [key, value] : p.labels) {
    if (!scan::is_k8s_qualified_name(key))
      f.add(DiagKind::invalid_value, location_of(file, doc["labels"]), "labels." + key,
            "label key '" + scan::printable(key) + "' is not a Kubernetes qualified name",
            "[prefix/]name: name of at most 63 letters, digits, '-', '_' or '.', starting and "
            "ending with a letter or digit; prefix a DNS subdomain");
    if (!scan::is_k8s_label_value(value))
      f.add(DiagKind::invalid_value, location_of(file, doc["labels"][key]), "labels." + key,
            "label value '" + scan::printable(value) + "' is not a Kubernetes label value",
            "empty, or at most 63 letters, digits, '-', '_' or '.', starting and ending with a "
            "letter or digit");
  }
}

void parse_project(const std::string& file, const YAML::Node& doc, Fields& f, Documents& out,
                   Diagnostics& diags) {
  size_t before = diags.size();
  ProjectDoc p;
  p.where = location_of(file, doc);
  parse_metadata(file, doc, f, diags, false);
  p.id = f.str("id", true, "a project id (DNS-1123 label)");
  check_project_id(f, file, doc["id"], "id", p.id);
  p.name = f.str("name", false);
  if (p.name.empty()) p.name = p.id;
  p.description = f.str("description", false);
  p.labels = f.string_map("labels");
  check_project_fields(f, file, doc, p);
  std::string state = f.str("state", false, "active or archived");
  if (state == "archived")
    p.archived = true;
  else if (!state.empty() && state != "active")
    f.add(DiagKind::invalid_value, location_of(file, doc["state"]), "state",
          "unknown state '" + scan::printable(state) + "'", "active or archived");
  f.reject_unknown("apiVersion, kind, metadata, id, name, description, labels, state");
  if (diags.size() == before) out.projects.push_back(std::move(p));
}

}  // namespace

size_t parse_file(const SourceFile& file, const Limits& limits, const Policy& policy,
                  Documents& out, Diagnostics& diags, NodeBudget* budget) {
  if (budget) {
    budget->last_file = 0;
    if (budget->exhausted) return 0;  // an earlier file's error says the rest is not read
  }
  // A path is bytes (Git and POSIX allow any name, e.g. a Latin-1 "caf\xe9.yaml"); every
  // diagnostic and field source names the file in UTF-8, ill-formed bytes shown as U+FFFD.
  const std::string path = text::to_utf8_lossy(file.path);
  if (file.size > limits.max_file_bytes || file.bytes.size() > limits.max_file_bytes) {
    diags.push_back(
        Diagnostic{Severity::error,
                   DiagKind::file_too_large,
                   Location{path, 0, 0},
                   "",
                   "file is " + std::to_string(std::max(file.size, file.bytes.size())) + " bytes",
                   "at most " + std::to_string(limits.max_file_bytes) + " bytes",
                   {}});
    return 0;
  }
  // One document at a time: each tree is converted and dropped before the next is built.
  auto convert_one = [&](const YamlDocument& yd) {
    const YAML::Node& doc = yd.root;
    if (!doc.IsMap()) {
      diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::not_a_mapping,
                                 location_of(path, doc),
                                 "",
                                 "document is not a mapping",
                                 "a mapping with apiVersion and kind",
                                 {}});
      return;
    }
    Fields f(path, doc, "", diags);
    std::string kind =
        f.str("kind", true,
              "Overrides, WorkflowRegistration, Project, PlatformDefaults or FlyteRegistration");
    std::string api = f.str("apiVersion", true, k_api_version);
    if (kind.empty() || api.empty()) return;
    const bool is_operator = kind == "FlyteRegistration";
    const bool known_kind = is_operator || kind == "Overrides" || kind == "WorkflowRegistration" ||
                            kind == "Project" || kind == "PlatformDefaults";
    if (!known_kind) {
      f.add(DiagKind::unknown_kind, location_of(path, doc["kind"]), "kind",
            "unknown kind '" + scan::printable(kind) + "'",
            "Overrides, WorkflowRegistration, Project, PlatformDefaults or FlyteRegistration");
      return;
    }
    const char* want_api = is_operator ? k_operator_api_version : k_api_version;
    if (api != want_api) {
      f.add(DiagKind::unknown_api_version, location_of(path, doc["apiVersion"]), "apiVersion",
            "unknown apiVersion '" + scan::printable(api) + "' for kind " + kind, want_api);
      return;
    }
    // Defence in depth: a library exception (yaml-cpp's InvalidNode, a bad conversion) in a
    // check must reject this document, never terminate the daemon on a commit.
    try {
      if (kind == "Overrides")
        parse_overrides(path, doc, f, policy, out, diags, false);
      else if (kind == "PlatformDefaults")
        parse_overrides(path, doc, f, policy, out, diags, true);
      else if (kind == "WorkflowRegistration")
        parse_registration(path, doc, f, policy, out, diags);
      else if (kind == "FlyteRegistration")
        parse_flyte_registration(path, doc, f, policy, out, diags);
      else
        parse_project(path, doc, f, out, diags);
    } catch (const std::exception& e) {
      diags.push_back(
          Diagnostic{Severity::error,
                     DiagKind::invalid_value,
                     location_of(path, doc),
                     "",
                     "this document could not be checked (" + scan::printable(e.what()) + ")",
                     "a document flytecd can read; this is a flytecd bug, please "
                     "report it with the document",
                     {}});
    }
  };
  // A document with an error is left out of `out`; it is counted, so a summary that counts
  // what was accepted also says how much was not (validate --require-digest, issue 21).
  auto convert = [&](const YamlDocument& yd) {
    const size_t before = diags.size();
    convert_one(yd);
    for (size_t i = before; i < diags.size(); ++i)
      if (diags[i].severity == Severity::error) {
        ++out.rejected_documents;
        break;
      }
  };
  return for_each_yaml_document(path, file.bytes, limits, diags, convert, budget);
}

void check_documents(const Documents& docs, const Limits& limits, Diagnostics& diags) {
  if (docs.document_count > limits.max_documents)
    diags.push_back(
        Diagnostic{Severity::error,
                   DiagKind::too_many_documents,
                   Location{"", 0, 0},
                   "",
                   "repository holds " + std::to_string(docs.document_count) + " documents",
                   "at most " + std::to_string(limits.max_documents),
                   {}});

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
  std::map<std::string, const ProjectDoc*> projects;
  for (const auto& p : docs.projects) {
    auto [it, inserted] = projects.emplace(p.id, &p);
    if (!inserted)
      diags.push_back(Diagnostic{Severity::error, DiagKind::duplicate_object, p.where, "id",
                                 "project '" + scan::printable(p.id) + "' is declared twice",
                                 "one Project document per id", it->second->where});
  }
  std::map<std::string, const Registration*> regs;
  for (const auto& r : docs.registrations) {
    auto [it, inserted] = regs.emplace(r.name, &r);
    if (!inserted)
      diags.push_back(Diagnostic{Severity::error, DiagKind::duplicate_object, r.where,
                                 "metadata.name",
                                 "registration '" + scan::printable(r.name) + "' is declared twice",
                                 "unique registration names", it->second->where});
  }
  if (!projects.empty()) {
    auto warn = [&](const std::string& project, const Location& where, const std::string& path) {
      if (!projects.count(project))
        diags.push_back(Diagnostic{
            Severity::warning,
            DiagKind::unknown_project,
            where,
            path,
            "project '" + scan::printable(project) + "' has no Project document in this repository",
            "a Project document, or the project to exist in FlyteAdmin already",
            {}});
    };
    std::set<std::string> warned;
    for (const auto& o : docs.overrides)
      if (warned.insert(o.scope.project).second) warn(o.scope.project, o.where, "project");
    for (const auto& r : docs.registrations)
      if (warned.insert(r.project).second) warn(r.project, r.where, "project");
  }
}

void sort_diagnostics(Diagnostics& diags) {
  std::stable_sort(diags.begin(), diags.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.where.file, a.where.line, a.where.column) <
           std::tie(b.where.file, b.where.line, b.where.column);
  });
}

LoadResult load_documents(const std::vector<SourceFile>& files, const Limits& limits,
                          const Policy& policy) {
  LoadResult result;
  NodeBudget nodes;
  for (const auto& file : files) {
    result.documents.document_count +=
        parse_file(file, limits, policy, result.documents, result.diagnostics, &nodes);
    ++result.documents.file_count;
  }
  check_documents(result.documents, limits, result.diagnostics);
  sort_diagnostics(result.diagnostics);
  return result;
}

}  // namespace flytecd::model
