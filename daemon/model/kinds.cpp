#include "daemon/model/kinds.hpp"

#include "daemon/model/document_fields.hpp"

namespace flytecd::model {

// Each kind's functions, defined in its file (kind_<name>.cpp).
void parse_overrides_kind(const KindInput&, Fields&, Documents&, Diagnostics&);
void check_overrides_kind(const Documents&, Diagnostics&);
void parse_platform_defaults_kind(const KindInput&, Fields&, Documents&, Diagnostics&);
void check_platform_defaults_kind(const Documents&, Diagnostics&);
void parse_registration_kind(const KindInput&, Fields&, Documents&, Diagnostics&);
void parse_flyte_registration_kind(const KindInput&, Fields&, Documents&, Diagnostics&);
void check_registrations_kind(const Documents&, Diagnostics&);
void parse_project_kind(const KindInput&, Fields&, Documents&, Diagnostics&);
void check_projects_kind(const Documents&, Diagnostics&);
void parse_settings_kind(const KindInput&, Fields&, Documents&, Diagnostics&);
void check_settings_kind(const Documents&, Diagnostics&);

const std::vector<DocumentKind>& document_kinds() {
  static const std::vector<DocumentKind> k_kinds = {
      {"Overrides", k_api_version, parse_overrides_kind, check_overrides_kind},
      {"WorkflowRegistration", k_api_version, parse_registration_kind, check_registrations_kind},
      {"Project", k_api_version, parse_project_kind, check_projects_kind},
      {"PlatformDefaults", k_api_version, parse_platform_defaults_kind,
       check_platform_defaults_kind},
      // Flyte 2's settings service (flyteidl2.settings): one record per org, domain, project.
      {"Settings", k_api_version, parse_settings_kind, check_settings_kind},
      // The Kubernetes operator's resource (its registrations are checked with the others).
      {"FlyteRegistration", k_operator_api_version, parse_flyte_registration_kind, nullptr},
  };
  return k_kinds;
}

const DocumentKind* find_document_kind(std::string_view kind) {
  for (const auto& k : document_kinds())
    if (k.kind == kind) return &k;
  return nullptr;
}

const std::string& document_kind_names() {
  static const std::string k_names = [] {
    std::string out;
    const auto& kinds = document_kinds();
    for (size_t i = 0; i < kinds.size(); ++i)
      out += std::string(i == 0                  ? ""
                         : i + 1 == kinds.size() ? " or "
                                                 : ", ") +
             std::string(kinds[i].kind);
    return out;
  }();
  return k_names;
}

}  // namespace flytecd::model
