#include "daemon/model/document_fields.hpp"

#include <algorithm>

namespace flytecd::model {

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
  if (!id.empty() && !scan::is_dns1123_label(id))
    fields.add(DiagKind::invalid_value, location_of(file, node), key,
               "project id '" + scan::printable(id) + "' is not a DNS-1123 label",
               "lowercase letters, digits and '-', at most 63 characters");
}

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

}  // namespace flytecd::model
