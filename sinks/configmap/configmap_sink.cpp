#include "sinks/configmap/configmap_sink.hpp"

#include <google/protobuf/util/json_util.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "daemon/common/digest.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/common/log.hpp"
#include "daemon/common/yaml_json.hpp"

namespace flytecd::sinks::configmap {
namespace {

namespace admin = flyteidl::admin;
namespace pb = google::protobuf;

// Entries ordered most general first: global, domain-wide, then projects by (project, domain,
// workflow) — project rows sort before their domain and workflow rows.
using EntryKey = std::tuple<int, std::string, std::string, std::string>;

EntryKey entry_key(const sinks::Scope& s) {
  if (s.project.empty()) return {s.domain.empty() ? 0 : 1, "", s.domain, ""};
  return {2, s.project, s.domain, s.workflow};
}

void merge_into(nlohmann::ordered_json& overrides, const admin::MatchingAttributes& value) {
  std::string text;
  pb::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = false;
  if (!pb::util::MessageToJsonString(value, &text, opts).ok()) return;
  // Parsed as (sorted) json first: nested keys come out alphabetically, as they always have.
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) overrides[it.key()] = it.value();
}

Error bad_entry(size_t index, const std::string& what) {
  return make_error(ErrorCode::invalid_input, "entry " + std::to_string(index + 1) + ": " + what);
}

Result<std::string> scope_field(const YAML::Node& entry, const char* name, size_t index) {
  const YAML::Node v = entry[name];
  if (!v) return std::string();
  if (!v.IsScalar() || v.Scalar().empty())
    return bad_entry(index, std::string(name) + ": expected a non-empty string");
  return v.Scalar();
}

// One entry's rows: each key of `overrides` is one MatchingAttributes field = one attribute type.
Status parse_entry(const YAML::Node& entry, size_t index, sinks::State& out) {
  if (!entry.IsMap()) return bad_entry(index, "expected a mapping");
  for (const auto& kv : entry) {
    const std::string k = kv.first.Scalar();
    if (k != "project" && k != "domain" && k != "workflow" && k != "overrides")
      return bad_entry(index,
                       "unknown key '" + k + "' (expected project, domain, workflow, overrides)");
  }
  sinks::Scope scope;
  auto project = scope_field(entry, "project", index);
  auto domain = scope_field(entry, "domain", index);
  auto workflow = scope_field(entry, "workflow", index);
  if (!project) return project.error();
  if (!domain) return domain.error();
  if (!workflow) return workflow.error();
  scope = {*project, *domain, *workflow};
  if (!scope.workflow.empty() && (scope.domain.empty() || scope.project.empty()))
    return bad_entry(index, "workflow needs a project and a domain");
  const YAML::Node overrides = entry["overrides"];
  if (!overrides || !overrides.IsMap()) return bad_entry(index, "overrides: expected a mapping");
  const nlohmann::json json = yaml_json::to_json(overrides);
  for (auto it = json.begin(); it != json.end(); ++it) {
    admin::MatchingAttributes value;
    pb::util::JsonParseOptions opts;
    opts.ignore_unknown_fields = false;
    const nlohmann::json one = {{it.key(), it.value()}};
    auto st = pb::util::JsonStringToMessage(dump_json(one), &value, opts);
    if (!st.ok())
      return bad_entry(index, "overrides." + it.key() + ": " + std::string(st.message()));
    auto type = sinks::attribute_type_of_field(static_cast<int>(value.target_case()));
    if (!type) return bad_entry(index, "overrides." + it.key() + ": not an attribute type");
    const std::string key = sinks::override_key(scope, *type);
    if (out.overrides.count(key) != 0)
      return bad_entry(index, "overrides." + it.key() + " of " +
                                  (scope.project.empty() && scope.domain.empty()
                                       ? std::string("the global scope")
                                       : sinks::to_string(scope)) +
                                  " is given twice");
    out.overrides[key] = sinks::OverrideState{scope, *type, std::move(value)};
  }
  return ok_status();
}

}  // namespace

std::string render_document(const sinks::State& rows) {
  // The proto JSON of each (scope, type) keyed by its attribute type's field, so keys come out
  // in MatchingAttributes field order whatever order the rows came in.
  std::map<EntryKey, std::map<int, const admin::MatchingAttributes*>> entries;
  for (const auto& [key, row] : rows.overrides)
    entries[entry_key(row.scope)][sinks::field_of_attribute_type(row.type)] = &row.value;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& [key, by_type] : entries) {
    const auto& [rank, project, domain, workflow] = key;
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    if (!project.empty()) entry["project"] = project;
    if (!domain.empty()) entry["domain"] = domain;
    if (!workflow.empty()) entry["workflow"] = workflow;
    nlohmann::ordered_json overrides = nlohmann::ordered_json::object();
    for (const auto& [field, value] : by_type) merge_into(overrides, *value);
    entry["overrides"] = overrides;
    list.push_back(entry);
  }
  std::string header =
      "# Flyte overrides (RFC 3749 ConfigMap document), rendered by flytecd from Git.\n"
      "# Do not edit: flytecd re-applies it (server-side apply, fieldManager=flytecd).\n";
  if (list.empty()) return header + "[]\n";
  return header + yaml_json::to_yaml(list);
}

Result<sinks::State> parse_document(const std::string& document) {
  sinks::State out;
  YAML::Node root;
  try {
    root = YAML::Load(document);
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::invalid_input, std::string("not YAML: ") + e.what());
  }
  if (!root || root.IsNull()) return out;  // an empty document holds nothing
  if (!root.IsSequence())
    return make_error(ErrorCode::invalid_input,
                      "expected a list of {project?, domain?, "
                      "workflow?, overrides} entries");
  try {
    for (size_t i = 0; i < root.size(); ++i)
      if (auto st = parse_entry(root[i], i, out); !st) return st.error();
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::invalid_input, std::string("malformed: ") + e.what());
  }
  return out;
}

ConfigMapSink::ConfigMapSink(std::shared_ptr<KubeApi> api, Settings settings)
    : m_api(std::move(api)), m_settings(std::move(settings)) {}

std::string ConfigMapSink::describe() const {
  return "configmap " + m_settings.cm_namespace + "/" + m_settings.name + " (" + m_settings.key +
         ")";
}

Result<std::map<std::string, sinks::OverrideState>> ConfigMapSink::read_live() {
  auto data = m_api->get_config_map(m_settings.cm_namespace, m_settings.name);
  if (!data) return data.error().wrap(describe());
  if (!*data) return std::map<std::string, sinks::OverrideState>{};  // absent: no overrides
  auto it = (*data)->find(m_settings.key);
  if (it == (*data)->end()) return std::map<std::string, sinks::OverrideState>{};
  auto parsed = parse_document(it->second);
  if (!parsed)
    return parsed.error().wrap(describe() +
                               ": cannot read its document (fix it, or delete the "
                               "ConfigMap and flytecd writes it anew)");
  return std::move(parsed->overrides);
}

Result<sinks::State> ConfigMapSink::observe() {
  auto live = read_live();
  if (!live) return live.error();
  std::lock_guard<std::mutex> lock(m_mu);
  m_staged = *live;
  m_loaded = true;
  sinks::State out;
  out.overrides = std::move(*live);
  return out;
}

Status ConfigMapSink::execute(const sinks::Step& step) {
  std::lock_guard<std::mutex> lock(m_mu);
  if (step.kind != sinks::ObjectKind::override_attr)
    return make_error(ErrorCode::invalid_input,
                      describe() + ": holds no projects (" + step.key + ")");
  if (!m_loaded) {
    auto live = read_live();
    if (!live) return live.error();
    m_staged = std::move(*live);
    m_loaded = true;
  }
  switch (step.action) {
    case sinks::Action::adopt:
      break;
    case sinks::Action::remove:
      // One entry of a document: nothing cascades to narrower scopes, unlike FlyteAdmin's Delete.
      m_staged.erase(step.key);
      break;
    case sinks::Action::create:
    case sinks::Action::update:
    case sinks::Action::replace:
      if (!step.desired)
        return make_error(ErrorCode::internal, describe() + ": " + step.key + ": no value");
      m_staged[step.key] = *step.desired;
      break;
  }
  return ok_status();
}

Status ConfigMapSink::commit(const std::string& revision) {
  std::string document;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    if (!m_loaded) return ok_status();  // nothing observed, nothing staged
    sinks::State rows;
    rows.overrides = m_staged;
    document = render_document(rows);
  }
  auto out = write(document, revision);
  if (!out) return out.error();
  if (out->changed)
    log::get("configmap")
        ->info("{}: applied overrides document sha256 {} (revision {}){}", describe(), out->sha256,
               revision, out->restart_requested ? ", FlyteAdmin restart requested" : "");
  std::lock_guard<std::mutex> lock(m_mu);
  m_last_commit = *out;
  return ok_status();
}

std::optional<ConfigMapSink::Outcome> ConfigMapSink::last_commit() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_last_commit;
}

Result<ConfigMapSink::Outcome> ConfigMapSink::write(const std::string& document,
                                                    const std::string& revision) {
  Outcome out;
  out.sha256 = digest::sha256_hex(document);
  auto live = m_api->get_config_map(m_settings.cm_namespace, m_settings.name);
  if (!live) return live.error().wrap(describe());
  std::optional<std::string> live_doc;
  if (*live) {
    auto it = (*live)->find(m_settings.key);
    if (it != (*live)->end()) live_doc = it->second;
  }
  if (live_doc != document) {
    // Server-side apply: flytecd owns exactly these fields; other managers' fields stay.
    nlohmann::json obj = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata",
         {{"name", m_settings.name},
          {"namespace", m_settings.cm_namespace},
          {"labels", {{"app.kubernetes.io/managed-by", "flytecd"}}},
          {"annotations",
           {{k_overrides_hash_annotation, out.sha256}, {k_revision_annotation, revision}}}}},
        {"data", {{m_settings.key, document}}}};
    if (auto st = m_api->apply_config_map(m_settings.cm_namespace, m_settings.name, dump_json(obj));
        !st)
      return st.error().wrap(describe());
    out.changed = true;
  }
  if (!m_settings.restart_deployment.empty()) {
    // Like `kubectl rollout restart`, but keyed on the content: setting the same value again
    // changes nothing, so FlyteAdmin restarts once per new document (also retried after a
    // failed restart, since this runs on every commit).
    if (auto st =
            m_api->annotate_pod_template(m_settings.cm_namespace, m_settings.restart_deployment,
                                         k_overrides_hash_annotation, out.sha256);
        !st)
      return st.error().wrap(describe());
    out.restart_requested = true;
  }
  return out;
}

}  // namespace flytecd::sinks::configmap
