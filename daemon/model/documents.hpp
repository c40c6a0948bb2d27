#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/model/diagnostic.hpp"
#include "flyteidl/admin/matchable_resource.pb.h"

namespace flytecd::model {

// A level in FlyteAdmin's matchable-attribute hierarchy. Platform levels live in FlyteAdmin's
// configuration (not its database): `platform_domain` (one domain) and `platform_global`.
enum class Level { workflow, project_domain, project, platform_domain, platform_global };
std::string_view to_string(Level level);

struct Scope {
  std::string project;
  std::string domain;    // empty at project level
  std::string workflow;  // empty unless workflow level

  Level level() const {
    if (!workflow.empty()) return Level::workflow;
    if (!domain.empty()) return Level::project_domain;
    return Level::project;
  }
  auto operator<=>(const Scope&) const = default;
};
std::string to_string(const Scope& scope);  // "flytesnacks/development/core.hello"

using AttributeType = flyteidl::admin::MatchableResource;

// The MatchingAttributes oneof field that carries a resource type, and back.
std::optional<AttributeType> attribute_type_of_field(int field_number);
int field_of_attribute_type(AttributeType type);
std::string attribute_type_name(AttributeType type);  // "TASK_RESOURCE"
std::string attribute_json_key(AttributeType type);   // "taskResourceAttributes"
std::optional<AttributeType> attribute_type_from_name(const std::string& name);
std::vector<AttributeType> all_attribute_types();

// One (scope, type) override from an `Overrides` document.
struct Override {
  Scope scope;
  AttributeType type{};
  flyteidl::admin::MatchingAttributes value;
  Location where;  // position of the spec key
};

// Domain-wide ("domain" set) or global defaults kept in FlyteAdmin's configuration.
struct PlatformDefault {
  std::string domain;  // empty = global
  AttributeType type{};
  flyteidl::admin::MatchingAttributes value;
  Location where;
};

struct ProjectDoc {
  std::string id;
  std::string name;
  std::string description;
  std::map<std::string, std::string> labels;
  bool archived = false;
  Location where;
};

enum class Activate { scheduled, all, none };
std::string_view to_string(Activate a);

struct Registration {
  std::string name;  // metadata.name (operator resources: the resource's name)
  std::string project;
  std::string domain;
  std::string version;
  std::string package;  // oci://…, https://…, or a repository-relative path
  bool registry_relative =
      false;  // FlyteRegistration: package is a path in the configured registry
  Activate activate = Activate::scheduled;
  std::string service_account;
  std::string iam_role;
  std::string raw_output_prefix;
  std::string destination_dir;
  std::string source_kind;  // "WorkflowRegistration" or "FlyteRegistration"
  Location where;
};

// Everything one repository revision declares, after per-document validation.
struct Documents {
  std::vector<Override> overrides;
  std::vector<PlatformDefault> platform_defaults;
  std::vector<ProjectDoc> projects;
  std::vector<Registration> registrations;
  size_t document_count = 0;
  size_t file_count = 0;
};

}  // namespace flytecd::model
