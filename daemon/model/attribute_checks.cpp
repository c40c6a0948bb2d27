#include "daemon/model/attribute_checks.hpp"

#include <array>

#include "daemon/common/quantity.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/model/yaml_safe.hpp"

namespace flytecd::model {
namespace {

constexpr std::array<const char*, 3> k_quantity_keys = {"projectQuotaCpu", "projectQuotaMemory",
                                                        "projectQuotaNvidiaGpu"};

// The first child of a mapping under either spelling of a field.
YAML::Node child(const YAML::Node& map, const char* json_name, const char* proto_name) {
  for (const auto& kv : map) {
    if (kv.first.IsScalar() && (kv.first.Scalar() == json_name || kv.first.Scalar() == proto_name))
      return kv.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

}  // namespace

bool is_quantity_template_key(const std::string& key) {
  for (const char* k : k_quantity_keys)
    if (key == k) return true;
  return false;
}

void check_cluster_resource_quantities(const std::string& file, const YAML::Node& node,
                                       const std::string& path, Diagnostics& diags) {
  if (!node.IsMap()) return;
  const YAML::Node attrs = child(node, "attributes", "attributes");
  if (!attrs.IsMap()) return;
  for (const auto& kv : attrs) {
    if (!kv.first.IsScalar() || !kv.second.IsScalar()) continue;
    const std::string& key = kv.first.Scalar();
    if (!is_quantity_template_key(key)) continue;
    const std::string& text = kv.second.Scalar();
    auto q = quantity::parse_quantity(text);
    std::string message;
    if (!q) {
      message = "'" + scan::printable(text) + "' is not a Kubernetes quantity (template key " +
                key + ", substituted into the namespace's ResourceQuota)";
    } else if (q->negative && !q->digits.empty()) {
      message = "negative quantity '" + scan::printable(text) + "' for template key " + key;
    } else {
      continue;
    }
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::bad_quantity,
                               location_of(file, kv.second),
                               path + ".attributes." + key,
                               std::move(message),
                               "a non-negative quantity like 16, 500m, 64Gi",
                               {}});
  }
}

void check_max_parallelism(const std::string& file, const YAML::Node& node, const std::string& path,
                           Diagnostics& diags) {
  if (!node.IsMap()) return;
  const YAML::Node v = child(node, "maxParallelism", "max_parallelism");
  if (!v.IsScalar()) return;
  const std::string& text = v.Scalar();
  // Only a negative integer is reported here; other non-integers are the proto conversion's.
  if (text.size() < 2 || text[0] != '-') return;
  for (size_t i = 1; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return;
  if (text.find_first_not_of("-0") == std::string::npos) return;  // "-0" is zero
  diags.push_back(Diagnostic{
      Severity::error,
      DiagKind::invalid_value,
      location_of(file, v),
      path + ".maxParallelism",
      "maxParallelism " + scan::printable(text) + " is negative (0 means FlyteAdmin's default)",
      "an integer >= 0",
      {}});
}

}  // namespace flytecd::model
