#include "daemon/k8s/kube_api.hpp"

#include <nlohmann/json.hpp>

#include "daemon/common/json_dump.hpp"

namespace flytecd::k8s {
namespace {

constexpr int k_api_timeout_ms = 15000;

Error failed(const std::string& what, const Response& r) {
  return make_error(code_for_status(r.status), what + ": " + status_message(r));
}

class ClientKubeApi final : public sinks::configmap::KubeApi {
 public:
  explicit ClientKubeApi(std::shared_ptr<Client> client) : m_client(std::move(client)) {}

  Result<std::optional<std::map<std::string, std::string>>> get_config_map(
      const std::string& ns, const std::string& name) override {
    auto r = m_client->request("GET", path(ns, name), "", "", k_api_timeout_ms);
    if (!r) return r.error();
    if (r->status == 404) return std::optional<std::map<std::string, std::string>>{};
    if (r->status != 200) return failed("get", *r);
    std::map<std::string, std::string> data;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_object() && j.contains("data") && j["data"].is_object())
      for (auto it = j["data"].begin(); it != j["data"].end(); ++it)
        if (it.value().is_string()) data[it.key()] = it.value().get<std::string>();
    return std::optional<std::map<std::string, std::string>>(std::move(data));
  }

  Status apply_config_map(const std::string& ns, const std::string& name,
                          const std::string& manifest_json) override {
    auto r = m_client->request("PATCH", path(ns, name) + "?fieldManager=flytecd&force=true",
                               manifest_json, "application/apply-patch+yaml", k_api_timeout_ms);
    if (!r) return r.error();
    if (r->status != 200 && r->status != 201) return failed("apply", *r);
    return ok_status();
  }

  Status annotate_pod_template(const std::string& ns, const std::string& deployment,
                               const std::string& key, const std::string& value) override {
    nlohmann::json patch = {
        {"spec", {{"template", {{"metadata", {{"annotations", {{key, value}}}}}}}}}};
    auto r = m_client->request(
        "PATCH",
        "/apis/apps/v1/namespaces/" + ns + "/deployments/" + deployment + "?fieldManager=flytecd",
        dump_json(patch), "application/strategic-merge-patch+json", k_api_timeout_ms);
    if (!r) return r.error();
    if (r->status != 200) return failed("restart deployment " + deployment, *r);
    return ok_status();
  }

 private:
  static std::string path(const std::string& ns, const std::string& name) {
    return "/api/v1/namespaces/" + ns + "/configmaps/" + name;
  }
  std::shared_ptr<Client> m_client;
};

}  // namespace

std::shared_ptr<sinks::configmap::KubeApi> make_kube_api(std::shared_ptr<Client> client) {
  return std::make_shared<ClientKubeApi>(std::move(client));
}

}  // namespace flytecd::k8s
