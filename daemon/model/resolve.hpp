#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "daemon/model/documents.hpp"

namespace flytecd::model {

// Where an effective value came from.
struct Origin {
  Level level = Level::project;
  Scope scope;     // for platform levels only `domain` is meaningful
  Location where;  // the document that declared it
};

struct EffectiveAttribute {
  AttributeType type{};
  flyteidl::admin::MatchingAttributes value;
  Origin origin;  // the most specific contributor
  // Field-wise merges (WORKFLOW_EXECUTION_CONFIG fields, CLUSTER_RESOURCE keys): the origin of
  // each part, keyed by its JSON name.
  std::map<std::string, Origin> parts;
};

// The override hierarchy of one revision, indexed for lookups. Pure.
class Hierarchy {
 public:
  explicit Hierarchy(const Documents& docs);

  // Exact-scope row, as FlyteAdmin stores it (nullptr when absent).
  const Override* row(const Scope& scope, AttributeType type) const;
  // PlatformDefaults for a domain ("" = global), nullptr when absent.
  const PlatformDefault* platform(const std::string& domain, AttributeType type) const;

  // Effective attributes at `at` (project, project+domain or project+domain+workflow), resolved as
  // FlyteAdmin resolves them at execution time (flyte-semantics §3.9):
  //  - generally the most specific row wins whole (workflow > project-domain > project), else the
  //    platform default for the domain, else the global platform default;
  //  - WORKFLOW_EXECUTION_CONFIG fills unset fields field-wise: most specific row, then the
  //    project-level row again, then platform defaults;
  //  - CLUSTER_RESOURCE overlays the row's keys on the platform's per-domain map (row wins).
  std::vector<EffectiveAttribute> resolve(const Scope& at) const;

  // All workflow-level scopes declared under (project, domain) ("" = any domain).
  std::vector<Scope> workflow_scopes(const std::string& project, const std::string& domain) const;

 private:
  std::map<std::pair<Scope, int>, const Override*> m_rows;
  std::map<std::pair<std::string, int>, const PlatformDefault*> m_platform;
};

// The collated document for one level: every attribute type that applies, each with its value,
// `inherited` and `source` (RFC 3749 "sane overridable defaults" layout). Keys in stable order.
nlohmann::ordered_json collate(const Scope& at, const std::vector<EffectiveAttribute>& attrs);

}  // namespace flytecd::model
