#pragma once

// A fake of the ConfigMap sink's Kubernetes calls: one cluster's ConfigMaps and Deployment
// annotations in memory, every call recorded. Not thread-safe (the sink serializes its calls).
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sinks/configmap/kube_api.hpp"

namespace flytecd::testing {

using flytecd::Result;
using flytecd::Status;
using flytecd::sinks::configmap::KubeApi;

// One namespace's ConfigMaps and Deployment annotations; records every write.
class FakeKubeApi final : public KubeApi {
 public:
  std::map<std::string, std::map<std::string, std::string>> configmaps;  // "ns/name" -> data
  std::map<std::string, std::string> annotations;  // "ns/deployment/key" -> value
  std::vector<std::string> calls;                  // "GET ns/name", "APPLY ns/name", …
  std::optional<flytecd::Error> fail_get;
  std::optional<flytecd::Error> fail_apply;
  nlohmann::json last_manifest;

  Result<std::optional<std::map<std::string, std::string>>> get_config_map(
      const std::string& ns, const std::string& name) override {
    calls.push_back("GET " + ns + "/" + name);
    if (fail_get) return *fail_get;
    auto it = configmaps.find(ns + "/" + name);
    if (it == configmaps.end()) return std::optional<std::map<std::string, std::string>>{};
    return std::optional<std::map<std::string, std::string>>(it->second);
  }
  Status apply_config_map(const std::string& ns, const std::string& name,
                          const std::string& manifest_json) override {
    calls.push_back("APPLY " + ns + "/" + name);
    if (fail_apply) return *fail_apply;
    last_manifest = nlohmann::json::parse(manifest_json);
    for (auto it = last_manifest["data"].begin(); it != last_manifest["data"].end(); ++it)
      configmaps[ns + "/" + name][it.key()] = it.value().get<std::string>();
    return flytecd::ok_status();
  }
  Status annotate_pod_template(const std::string& ns, const std::string& deployment,
                               const std::string& key, const std::string& value) override {
    calls.push_back("ANNOTATE " + ns + "/" + deployment);
    annotations[ns + "/" + deployment + "/" + key] = value;
    return flytecd::ok_status();
  }
  size_t count(const std::string& prefix) const {
    size_t n = 0;
    for (const auto& c : calls) n += c.rfind(prefix, 0) == 0;
    return n;
  }
};

}  // namespace flytecd::testing
