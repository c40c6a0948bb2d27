#pragma once

#include <memory>

#include "daemon/k8s/client.hpp"
#include "sinks/configmap/kube_api.hpp"

namespace flytecd::k8s {

// The ConfigMap sink's Kubernetes calls over flytecd's API client (one request each, 15 s
// deadline). HTTP errors map with code_for_status and carry the API's Status message.
std::shared_ptr<sinks::configmap::KubeApi> make_kube_api(std::shared_ptr<Client> client);

}  // namespace flytecd::k8s
