#include "daemon/k8s/record_store.hpp"

#include <charconv>

#include "daemon/common/json_dump.hpp"

namespace flytecd::k8s {
namespace {

constexpr int k_record_timeout_ms = 10000;

class ConfigMapRecordStore final : public pass::RecordStore {
 public:
  ConfigMapRecordStore(std::shared_ptr<Client> client, std::string ns, std::string name)
      : m_client(std::move(client)), m_ns(std::move(ns)), m_name(std::move(name)) {}

  Result<std::optional<pass::StoredRecord>> read() override {
    auto r = m_client->request("GET", collection() + "/" + m_name, "", "", k_record_timeout_ms);
    if (!r) return r.error().wrap(describe());
    if (r->status == 404) return std::optional<pass::StoredRecord>{};
    if (r->status != 200) return failed("read", *r);
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (!j.is_object() || !j.contains("metadata") || !j["metadata"].is_object())
      return make_error(ErrorCode::invalid_input, describe() + ": response is not a ConfigMap");
    pass::StoredRecord stored;
    stored.token = json_string(j["metadata"], "resourceVersion");
    if (stored.token.empty())
      return make_error(ErrorCode::invalid_input, describe() + ": no metadata.resourceVersion");
    std::map<std::string, std::string> data;
    if (j.contains("data") && j["data"].is_object())
      for (auto it = j["data"].begin(); it != j["data"].end(); ++it)
        if (it.value().is_string()) data[it.key()] = it.value().get<std::string>();
    auto rec = record_from_data(data, describe());
    if (!rec) return rec.error();
    stored.record = std::move(*rec);
    return std::optional<pass::StoredRecord>(std::move(stored));
  }

  Result<std::string> write(const pass::AppliedRecord& record,
                            const std::string& expected_token) override {
    const std::string body = dump_json(record_config_map(m_name, m_ns, expected_token, record));
    const bool create = expected_token.empty();
    auto r = create ? m_client->request("POST", collection(), body, "application/json",
                                        k_record_timeout_ms)
                    : m_client->request("PUT", collection() + "/" + m_name, body,
                                        "application/json", k_record_timeout_ms);
    if (!r) return r.error().wrap(describe());
    if (create && r->status == 409)
      return make_error(ErrorCode::conflict, describe() + ": another writer created it first (" +
                                                 status_message(*r) + ")");
    if (!create && r->status == 409)
      return make_error(ErrorCode::conflict, describe() +
                                                 ": another writer updated it since "
                                                 "resourceVersion " +
                                                 expected_token + " (" + status_message(*r) + ")");
    if (!create && r->status == 404)
      return make_error(ErrorCode::conflict,
                        describe() + ": deleted since resourceVersion " + expected_token);
    if (r->status != 200 && r->status != 201) return failed(create ? "create" : "update", *r);
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    std::string token;
    if (j.is_object() && j.contains("metadata") && j["metadata"].is_object())
      token = json_string(j["metadata"], "resourceVersion");
    if (token.empty())
      return make_error(ErrorCode::internal,
                        describe() + ": the API server's answer has no resourceVersion");
    return token;
  }

  std::string describe() const override { return "ConfigMap " + m_ns + "/" + m_name; }

 private:
  std::string collection() const { return "/api/v1/namespaces/" + m_ns + "/configmaps"; }
  Error failed(const std::string& what, const Response& r) const {
    return make_error(code_for_status(r.status),
                      describe() + ": " + what + ": " + status_message(r));
  }

  std::shared_ptr<Client> m_client;
  std::string m_ns, m_name;
};

}  // namespace

std::map<std::string, std::string> record_data(const pass::AppliedRecord& r) {
  return {{"converged", r.converged},
          {"inFlight", r.in_flight},
          {"configFingerprint", r.config_fingerprint},
          {"version", r.version},
          {"writer", r.writer},
          {"updatedAt", std::to_string(r.updated_at)}};
}

Result<pass::AppliedRecord> record_from_data(const std::map<std::string, std::string>& data,
                                             const std::string& where) {
  auto get = [&](const char* k) {
    auto it = data.find(k);
    return it == data.end() ? std::string() : it->second;
  };
  pass::AppliedRecord r;
  r.converged = get("converged");
  r.in_flight = get("inFlight");
  r.config_fingerprint = get("configFingerprint");
  r.version = get("version");
  r.writer = get("writer");
  if (const std::string t = get("updatedAt"); !t.empty()) {
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), r.updated_at);
    if (ec != std::errc() || end != t.data() + t.size())
      return make_error(
          ErrorCode::invalid_input,
          where + ": data.updatedAt: expected unix seconds, got '" + t.substr(0, 40) + "'");
  }
  return r;
}

nlohmann::json record_config_map(const std::string& name, const std::string& ns,
                                 const std::string& resource_version,
                                 const pass::AppliedRecord& r) {
  nlohmann::json metadata = {
      {"name", name},
      {"namespace", ns},
      {"labels",
       {{"app.kubernetes.io/managed-by", "flytecd"},
        {"app.kubernetes.io/name", "flytecd"},
        {"app.kubernetes.io/component", "applied-revision"}}},
      {"annotations",
       {{"flytecd.io/description",
         "flytecd's applied-revision record: the revision that converged, from which a new "
         "leader rebuilds what flytecd owns. Written by the leader only; do not edit."}}}};
  if (!resource_version.empty()) metadata["resourceVersion"] = resource_version;
  nlohmann::json data = nlohmann::json::object();
  for (const auto& [k, v] : record_data(r)) data[k] = v;
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", metadata}, {"data", data}};
}

std::unique_ptr<pass::RecordStore> make_config_map_record_store(std::shared_ptr<Client> client,
                                                                std::string ns, std::string name) {
  return std::make_unique<ConfigMapRecordStore>(std::move(client), std::move(ns), std::move(name));
}

}  // namespace flytecd::k8s
