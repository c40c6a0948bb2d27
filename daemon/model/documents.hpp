#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/model/diagnostic.hpp"
#include "flyteidl/admin/matchable_resource.pb.h"
#include "sinks/types.hpp"
#include "sources/verify_policy.hpp"

namespace flytecd::model {

// The scope and attribute type that name an override row cross the Sink interface, so they are
// declared with it (sinks/types.hpp); the model keeps its names for them.
using sinks::AttributeType;
using sinks::Level;
using sinks::Scope;
using sinks::to_string;

using sinks::all_attribute_types;
using sinks::attribute_json_key;
using sinks::attribute_type_from_name;
using sinks::attribute_type_name;
using sinks::attribute_type_of_field;
using sinks::field_of_attribute_type;

// A MatchingAttributes value held in its protobuf wire form. A revision's documents keep every
// accepted value until the next revision replaces them; as a message, each list element costs
// a heap std::string and a pointer (~57 bytes for a one-character tag, against 3 on the wire),
// so a repository of wide lists took 45 bytes per YAML node (issue 27 item 5). Lossless: get()
// returns a message equal to the one packed (unknown fields included). Copies share nothing.
class PackedAttributes {
 public:
  PackedAttributes() = default;
  // Packs `value` (implicit, so documents built by hand still read `Override{scope, type, v}`).
  PackedAttributes(const flyteidl::admin::MatchingAttributes& value);  // NOLINT
  // Replaces the value.
  void set(const flyteidl::admin::MatchingAttributes& value);
  // The value, decoded (a new message each call; keep it while using references into it).
  flyteidl::admin::MatchingAttributes get() const;
  // Decodes, lets `change` edit the message, packs the result.
  template <class F>
  void edit(F&& change) {
    auto value = get();
    change(value);
    set(value);
  }
  // The wire bytes (empty for an empty value).
  const std::string& bytes() const { return m_bytes; }
  bool operator==(const PackedAttributes&) const = default;

 private:
  std::string m_bytes;
};

// One (scope, type) override from an `Overrides` document.
struct Override {
  Scope scope;
  AttributeType type{};
  PackedAttributes value;
  Location where;  // position of the spec key
  // The file, spec line and line of each field of the value (file:line beside field changes);
  // shared with every desired state built from this document. Null for values built by hand.
  std::shared_ptr<const sinks::SourceLines> source = nullptr;
};

// Domain-wide ("domain" set) or global defaults kept in FlyteAdmin's configuration.
struct PlatformDefault {
  std::string domain;  // empty = global
  AttributeType type{};
  PackedAttributes value;
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
  // verify: who must have signed the package (cosign); packages.verify in the configuration
  // gives a default by address prefix.
  std::optional<sources::VerifySpec> verify;
  Location where;
};

// An object of a document kind whose desired state is a generic object (sinks::ObjectValue): the
// kind's row builds its key and value (Settings: kind_settings.cpp).
struct ObjectDoc {
  std::string kind;  // "settings"
  std::string key;   // "settings/flyte/development/flytesnacks"
  std::shared_ptr<const google::protobuf::Message> value;
  Location where;
  std::shared_ptr<const sinks::SourceLines> source = nullptr;
};

// The object key of Flyte 2 settings at a scope: "settings/<org>/<domain>/<project>", an empty
// org read as Flyte 2 reads it ("flyte"), empty segments kept. Pure.
std::string settings_object_key(const std::string& org, const std::string& domain,
                                const std::string& project);
// Every settings key a deployment with these projects and domains can hold under the default
// org: the org, each domain, each project in each domain (what `import` asks a Flyte 2 target
// for: its settings service cannot list). Pure.
std::set<std::string> settings_candidate_keys(const std::set<std::string>& projects,
                                              const std::vector<std::string>& domains);

// Everything one repository revision declares, after per-document validation.
struct Documents {
  std::vector<Override> overrides;
  std::vector<PlatformDefault> platform_defaults;
  std::vector<ProjectDoc> projects;
  std::vector<Registration> registrations;
  std::vector<ObjectDoc> objects;  // generic objects, by the kinds that declare them
  size_t document_count = 0;
  size_t file_count = 0;
  size_t rejected_documents = 0;  // documents with an error, left out of the lists above
};

}  // namespace flytecd::model
