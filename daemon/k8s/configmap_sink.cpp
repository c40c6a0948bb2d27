#include "daemon/k8s/configmap_sink.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "daemon/common/digest.hpp"
#include "daemon/model/proto_yaml.hpp"

namespace flytecd::k8s {
namespace {

// Entries ordered most general first: global, domain-wide, then projects by (project, domain,
// workflow) — project rows sort before their domain and workflow rows.
using EntryKey = std::tuple<int, std::string, std::string, std::string>;

void merge_into(nlohmann::ordered_json& overrides,
                const flyteidl::admin::MatchingAttributes& value) {
  nlohmann::json j = model::message_to_json(value);
  for (auto it = j.begin(); it != j.end(); ++it) overrides[it.key()] = it.value();
}

}  // namespace

std::string render_overrides_document(const model::Documents& docs) {
  // The proto JSON of each (scope, type) keyed by its attribute type, so keys come out in
  // MatchingAttributes field order whatever the file order in the repository was.
  std::map<EntryKey, std::map<int, flyteidl::admin::MatchingAttributes>> entries;
  for (const auto& p : docs.platform_defaults)
    entries[{p.domain.empty() ? 0 : 1, "", p.domain, ""}][model::field_of_attribute_type(p.type)] =
        p.value;
  for (const auto& o : docs.overrides)
    entries[{2, o.scope.project, o.scope.domain, o.scope.workflow}]
           [model::field_of_attribute_type(o.type)] = o.value;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& [key, by_type] : entries) {
    const auto& [rank, project, domain, workflow] = key;
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    if (!project.empty()) entry["project"] = project;
    if (!domain.empty()) entry["domain"] = domain;
    if (!workflow.empty()) entry["workflow"] = workflow;
    nlohmann::ordered_json overrides = nlohmann::ordered_json::object();
    for (const auto& [field, value] : by_type) merge_into(overrides, value);
    entry["overrides"] = overrides;
    list.push_back(entry);
  }
  std::string header =
      "# Flyte overrides (RFC 3749 ConfigMap document), rendered by flytecd from Git.\n"
      "# Do not edit: flytecd re-applies it (server-side apply, fieldManager=flytecd).\n";
  if (list.empty()) return header + "[]\n";
  return header + model::json_to_yaml(list);
}

ConfigMapSink::ConfigMapSink(std::shared_ptr<Client> client, ConfigMapSettings settings)
    : m_client(std::move(client)), m_settings(std::move(settings)) {}

std::string ConfigMapSink::describe() const {
  return "configmap " + m_settings.cm_namespace + "/" + m_settings.name + " (" + m_settings.key +
         ")";
}

Result<ConfigMapSink::Outcome> ConfigMapSink::apply(const std::string& document,
                                                    const std::string& revision) {
  constexpr int k_timeout_ms = 15000;
  Outcome out;
  out.sha256 = digest::sha256_hex(document);
  const std::string cm_path =
      "/api/v1/namespaces/" + m_settings.cm_namespace + "/configmaps/" + m_settings.name;
  auto fail = [&](const std::string& what, const Response& r) {
    return make_error(code_for_status(r.status),
                      describe() + ": " + what + ": " + status_message(r));
  };
  auto live = m_client->request("GET", cm_path, "", "", k_timeout_ms);
  if (!live) return live.error().wrap(describe());
  std::string live_doc;
  if (live->status == 200) {
    auto j = nlohmann::json::parse(live->body, nullptr, false);
    if (j.is_object() && j.contains("data") && j["data"].is_object() &&
        j["data"].contains(m_settings.key) && j["data"][m_settings.key].is_string())
      live_doc = j["data"][m_settings.key].get<std::string>();
  } else if (live->status != 404) {
    return fail("get", *live);
  }
  if (live->status == 404 || live_doc != document) {
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
    auto applied = m_client->request("PATCH", cm_path + "?fieldManager=flytecd&force=true",
                                     obj.dump(), "application/apply-patch+yaml", k_timeout_ms);
    if (!applied) return applied.error().wrap(describe());
    if (applied->status != 200 && applied->status != 201) return fail("apply", *applied);
    out.changed = true;
  }
  if (!m_settings.restart_deployment.empty()) {
    // Like `kubectl rollout restart`, but keyed on the content: setting the same value again
    // changes nothing, so FlyteAdmin restarts once per new document (also retried after a
    // failed restart, since this runs on every reconcile).
    nlohmann::json patch = {
        {"spec",
         {{"template",
           {{"metadata", {{"annotations", {{k_overrides_hash_annotation, out.sha256}}}}}}}}}};
    auto restarted =
        m_client->request("PATCH",
                          "/apis/apps/v1/namespaces/" + m_settings.cm_namespace + "/deployments/" +
                              m_settings.restart_deployment + "?fieldManager=flytecd",
                          patch.dump(), "application/strategic-merge-patch+json", k_timeout_ms);
    if (!restarted) return restarted.error().wrap(describe());
    if (restarted->status != 200)
      return fail("restart deployment " + m_settings.restart_deployment, *restarted);
    out.restart_requested = true;
  }
  return out;
}

}  // namespace flytecd::k8s
