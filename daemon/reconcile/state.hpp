#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/model/documents.hpp"
#include "sinks/types.hpp"

namespace flytecd::reconcile {

// The states a sink observes and the core compares are declared with the Sink interface
// (sinks/types.hpp); the reconcile core keeps its names for them.
using sinks::ObjectKind;
using sinks::ObjectValue;
using sinks::override_key;
using sinks::OverrideState;
using sinks::project_key;
using sinks::ProjectState;
using sinks::State;
using sinks::to_string;

// Content hash (hex sha256 over deterministic bytes) — what the ledger stores.
std::string hash_of(const ProjectState& p);
std::string hash_of(const OverrideState& o);
// hash_of(OverrideState) from model::canonical_bytes of its value, already at hand.
std::string hash_of_canonical(const std::string& canonical);
std::string hash_of(const ObjectValue& o);

// Desired state of one revision (projects, overrides and generic objects; registrations are
// separate).
State desired_state(const model::Documents& docs);

}  // namespace flytecd::reconcile
