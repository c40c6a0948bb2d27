#pragma once

// Checks on attribute values that FlyteAdmin stores without looking at them but that fail later
// (in the cluster-resource sync or the workflow engine). Pure; used by the loader.

#include <yaml-cpp/yaml.h>

#include <string>

#include "daemon/model/diagnostic.hpp"

namespace flytecd::model {

// The cluster-resource template keys holding Kubernetes quantities (projectQuotaCpu,
// projectQuotaMemory, projectQuotaNvidiaGpu): FlyteAdmin substitutes them into the
// ResourceQuota of each namespace, where a value like "4x" or "-1" fails every sync.
bool is_quantity_template_key(const std::string& key);

// `node` is a clusterResourceAttributes value (its `attributes` map) at `path`; appends a
// bad_quantity diagnostic (file:line of the value, naming the key) for each well-known key whose
// value is not a non-negative Kubernetes quantity.
void check_cluster_resource_quantities(const std::string& file, const YAML::Node& node,
                                       const std::string& path, Diagnostics& diags);

// `node` is a workflowExecutionConfig value at `path`; a negative maxParallelism (or
// max_parallelism) is an invalid_value diagnostic.
void check_max_parallelism(const std::string& file, const YAML::Node& node, const std::string& path,
                           Diagnostics& diags);

}  // namespace flytecd::model
