#pragma once

// Internal to the workflow compiler (sinks/workflow_compiler*.cpp): the checks on a workflow's
// control flow that need no interfaces: branch conditions (validators/condition.go) and
// reachability (workflow_compiler.go validateReachable). Pure.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "flyteidl/core/condition.pb.h"
#include "sinks/workflow_compiler.hpp"

namespace flytecd::sinks::compiler::detail {

// A branch node's inputs as its condition sees them: every bound name, with the type the binding
// resolved to (nullopt: bound, but its type is not known here).
using BoundInputs = std::map<std::string, std::optional<flyteidl::core::LiteralType>>;

// The two nodes FlyteAdmin's compiler adds to every workflow.
inline constexpr const char* k_start = "start-node";
inline constexpr const char* k_end = "end-node";

// FlyteAdmin prints types with LiteralTypeToStr (the proto's text); close enough for people.
inline std::string go_type(const flyteidl::core::LiteralType& t) {
  return t.has_simple() ? "simple:" + flyteidl::core::SimpleType_Name(t.simple()) : type_text(t);
}

// ValidateBooleanExpression on one case's condition: it must be there; a comparison needs both
// operands (a constant primitive or a bound input) with the very same type; a conjunction
// checks both sides. `label` starts the texts ("node b case 1").
void check_condition(const flyteidl::core::BooleanExpression* expr, const BoundInputs& inputs,
                     const std::string& node_id, const std::string& label, std::vector<Issue>& out);

// validateReachable: a depth-first walk from start-node along `downstream` (node -> the nodes
// that run after it); a cycle on the way is CycleDetected, otherwise every node of `nodes` not
// reached (end-node aside) is UnreachableNodes. Neighbours are walked in name order.
void check_reachable(const std::map<std::string, std::set<std::string>>& downstream,
                     const std::set<std::string>& nodes, std::vector<Issue>& out);

}  // namespace flytecd::sinks::compiler::detail
