#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flyteidl/admin/matchable_resource.pb.h"

namespace google::protobuf {
class Message;
}

// The values that cross the Sink interface: what observe() returns (a State), what execute()
// carries out (a Step), and the scope and attribute type that name an override row. The core
// (desired state, plan, guard) computes with these same types.

namespace flytecd::sinks {

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

// Object identity in the ledger and in plans: "project/<id>",
// "override/<project>/<domain>/<workflow>/<TYPE>" (empty segments stay empty), or, for an object of
// any other document kind, "<kind>/<its name>" ("settings/flyte/development/flytesnacks").
enum class ObjectKind {
  project,
  override_attr,
  object,  // a generic object (ObjectValue): a key and a protobuf value, no FlyteAdmin quirks
};
std::string_view to_string(ObjectKind k);

struct ProjectState {
  std::string id;
  std::string name;
  std::string description;
  std::map<std::string, std::string> labels;
  bool archived = false;
  bool operator==(const ProjectState&) const = default;
};

// The line of each field of a desired value by its protobuf JSON path
// ("clusterResourceAttributes.attributes.projectQuotaCpu"). Held for every override of a
// revision, so it is one buffer of paths and one index (a map of strings cost 40 MiB on 36k
// overrides); a value has a few dozen fields at most, so lookup is a scan.
class FieldLines {
 public:
  // Sets the line of `path` (a later set of the same path replaces it).
  void set(std::string_view path, int line);
  // The line of `path`, or 0 when none was set.
  int find(std::string_view path) const;
  size_t size() const { return m_index.size(); }
  bool empty() const { return m_index.empty(); }
  // Gives back the slack of building (call once complete).
  void shrink();

 private:
  std::string m_paths;  // every path, each followed by '\0'
  struct Entry {
    uint32_t offset;  // of the path in m_paths
    uint32_t size;
    int line;
  };
  std::vector<Entry> m_index;
};

// Where Git declares an override's value: the file, the line of its spec key, and the line of each
// field. Shared (immutable) by the loaded document and every desired state built from it.
struct SourceLines {
  std::string file;
  int line = 0;
  FieldLines fields;
};

struct OverrideState {
  Scope scope;
  AttributeType type{};
  flyteidl::admin::MatchingAttributes value;
  // Desired state only (null for what a sink observes); shared, as states are copied freely.
  std::shared_ptr<const SourceLines> source = nullptr;
};

// An object of a document kind beyond FlyteAdmin's projects and override rows (Flyte 2's settings
// records): its value is a message of the kind's protobuf type, compared, hashed and diffed through
// protobuf reflection, so plan, guard, diff and views need no code for a new kind.
struct ObjectValue {
  std::string kind;  // its key's first segment, "settings": what a sink's capabilities name
  std::shared_ptr<const google::protobuf::Message> value;  // never null
  // Desired state only (null for what a sink observes).
  std::shared_ptr<const SourceLines> source = nullptr;
  // Observed only: the server's version of the record, for a sink whose writes are conditional on
  // it (optimistic locking). Opaque to the core; 0 when the server keeps none.
  uint64_t version = 0;
};

// A set of projects, override rows and other objects: what Git wants, or what a sink holds.
struct State {
  std::map<std::string, ProjectState> projects;    // by id
  std::map<std::string, OverrideState> overrides;  // by override key
  std::map<std::string, ObjectValue> objects;      // by object key ("settings/…")
};

// The kind of an object key: its first segment ("settings/a/b" -> "settings").
std::string object_kind_of(const std::string& key);

std::string project_key(const std::string& id);
std::string override_key(const Scope& scope, AttributeType type);

enum class Action {
  create,   // absent live
  update,   // live differs
  replace,  // PLUGIN_OVERRIDE holding entries Git removed: Update merges, so Delete then Update
  remove,   // Delete*Attributes (or archive, for projects)
  adopt,    // live already equals desired but the ledger does not know it: record only, no RPC
};
std::string_view to_string(Action a);

// One write of a plan, as a sink executes it. The values a step carries are shared, immutable:
// a step is copied into its result, and a cold plan holds ~40k of them (a deep copy of every
// protobuf value per copy cost ~1 KB a step).
template <class T>
using Shared = std::shared_ptr<const T>;
template <class T>
Shared<T> share(T value) {
  return std::make_shared<const T>(std::move(value));
}

struct Step {
  Action action = Action::create;
  ObjectKind kind = ObjectKind::override_attr;
  std::string key;
  Shared<ProjectState> project;               // desired (create/update) or live (remove)
  Shared<OverrideState> desired;              // override steps
  Shared<OverrideState> live;                 // override steps: live value before the step
  std::string reason;                         // human-readable why
  bool drift = false;                         // the step reverts drift
  Shared<ObjectValue> object = nullptr;       // object steps: desired (create, update, adopt)
  Shared<ObjectValue> object_live = nullptr;  // object steps: live value before
  // Number of RPCs the step issues (adopt: 0, replace: 2).
  int rpc_count() const { return action == Action::adopt ? 0 : action == Action::replace ? 2 : 1; }
};

}  // namespace flytecd::sinks
