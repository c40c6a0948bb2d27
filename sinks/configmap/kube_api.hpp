#pragma once

#include <map>
#include <optional>
#include <string>

#include "daemon/common/result.hpp"

namespace flytecd::sinks::configmap {

// The three Kubernetes API calls the ConfigMap sink makes. Implemented over flytecd's Kubernetes
// client (daemon/k8s/kube_api.hpp) and by fakes in tests. Errors keep the API's category
// (HTTP 409 conflict, 404 not_found, 401/403, 429/5xx retryable, transport unavailable/timeout);
// messages say what failed ("get: …") without naming the ConfigMap (the sink adds it).
// Thread-safe.
class KubeApi {
 public:
  virtual ~KubeApi() = default;

  // The ConfigMap's `data`, or nullopt when it does not exist (404).
  virtual Result<std::optional<std::map<std::string, std::string>>> get_config_map(
      const std::string& ns, const std::string& name) = 0;

  // Server-side apply (PATCH application/apply-patch+yaml, fieldManager=flytecd, force=true) of
  // a complete ConfigMap manifest, as JSON. Idempotent.
  virtual Status apply_config_map(const std::string& ns, const std::string& name,
                                  const std::string& manifest_json) = 0;

  // Sets a pod-template annotation of a Deployment (strategic merge patch, fieldManager=flytecd):
  // a rollout happens when the value changes, setting the same value again changes nothing.
  virtual Status annotate_pod_template(const std::string& ns, const std::string& deployment,
                                       const std::string& key, const std::string& value) = 0;
};

}  // namespace flytecd::sinks::configmap
