#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/model/documents.hpp"

namespace flytecd::reconcile {

// Object identity in the ledger and in plans: "project/<id>" or
// "override/<project>/<domain>/<workflow>/<TYPE>" (empty segments stay empty).
enum class ObjectKind { project, override_attr };
std::string_view to_string(ObjectKind k);

struct ProjectState {
  std::string id;
  std::string name;
  std::string description;
  std::map<std::string, std::string> labels;
  bool archived = false;
  bool operator==(const ProjectState&) const = default;
};

struct OverrideState {
  model::Scope scope;
  model::AttributeType type{};
  flyteidl::admin::MatchingAttributes value;
};

// A set of projects and override rows: what Git wants, or what FlyteAdmin has.
struct State {
  std::map<std::string, ProjectState> projects;    // by id
  std::map<std::string, OverrideState> overrides;  // by override key
};

std::string project_key(const std::string& id);
std::string override_key(const model::Scope& scope, model::AttributeType type);

// Content hash (hex sha256 over deterministic bytes) — what the ledger stores.
std::string hash_of(const ProjectState& p);
std::string hash_of(const OverrideState& o);

// Desired state of one revision (projects and overrides; registrations are separate).
State desired_state(const model::Documents& docs);

}  // namespace flytecd::reconcile
