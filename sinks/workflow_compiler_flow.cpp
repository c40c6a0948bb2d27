#include "sinks/workflow_compiler_flow.hpp"

#include <google/protobuf/util/message_differencer.h>

#include <functional>

namespace flytecd::sinks::compiler::detail {
namespace fc = ::flyteidl::core;

namespace {

Issue issue(std::string node, std::string code, std::string text, std::string description) {
  return Issue{false, std::move(node), std::move(code), std::move(text), std::move(description)};
}

// validateOperand: the operand's type, nullopt when it has none that can be compared (an error,
// or a bound input whose type is not known).
std::optional<fc::LiteralType> operand_type(const fc::ComparisonExpression& cmp, bool right,
                                            const BoundInputs& inputs, const std::string& node_id,
                                            const std::string& label, std::vector<Issue>& out) {
  const char* side = right ? "RightValue" : "LeftValue";
  const char* side_text = right ? "right operand" : "left operand";
  const bool has = right ? cmp.has_right_value() : cmp.has_left_value();
  if (!has) {
    out.push_back(issue(node_id, "ValueRequired", label + ": the comparison has no " + side_text,
                        std::string("Value required [") + side + "]."));
    return std::nullopt;
  }
  const fc::Operand& op = right ? cmp.right_value() : cmp.left_value();
  // Operand.primitive is deprecated in the IDL (scalar replaces it), yet it is the only constant
  // FlyteAdmin's compiler takes.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (op.has_primitive()) {
    fc::Literal l;
    *l.mutable_scalar()->mutable_primitive() = op.primitive();
    return type_of(l);
  }
#pragma GCC diagnostic pop
  if (!op.var().empty()) {
    auto it = inputs.find(op.var());
    if (it == inputs.end()) {
      out.push_back(issue(
          node_id, "VariableNameNotFound",
          label + ": the condition reads " + op.var() + ", which is not bound to the branch node",
          "Variable [" + op.var() + "] not found on node [" + node_id + "]."));
      return std::nullopt;
    }
    return it->second;
  }
  // FlyteAdmin's compiler takes a constant only as a primitive (a scalar operand is refused).
  out.push_back(issue(node_id, "ValueRequired",
                      label + ": the " + side_text +
                          (op.has_scalar() ? " is a scalar (FlyteAdmin compares only primitives "
                                             "and bound inputs)"
                                           : " has neither a value nor a variable"),
                      std::string("Value required [") + side + ".Val]."));
  return std::nullopt;
}

}  // namespace

void check_condition(const fc::BooleanExpression* expr, const BoundInputs& inputs,
                     const std::string& node_id, const std::string& label,
                     std::vector<Issue>& out) {
  if (!expr) {
    out.push_back(issue(node_id, "BranchNodeHasNoCondition", label + ": no condition",
                        "One of the branches on the node doesn't have a condition."));
    return;
  }
  if (expr->has_comparison()) {
    const auto& cmp = expr->comparison();
    auto right = operand_type(cmp, true, inputs, node_id, label, out);
    auto left = operand_type(cmp, false, inputs, node_id, label, out);
    if (right && left && !google::protobuf::util::MessageDifferencer::Equals(*right, *left))
      out.push_back(issue(
          node_id, "MismatchingTypes",
          label + ": the condition compares " + type_text(*left) + " with " + type_text(*right),
          "Variable [RightValue] (type [" + go_type(*right) + "]) doesn't match expected type [" +
              go_type(*left) + "]."));
  } else if (expr->has_conjunction()) {
    const auto& c = expr->conjunction();
    check_condition(c.has_left_expression() ? &c.left_expression() : nullptr, inputs, node_id,
                    label, out);
    check_condition(c.has_right_expression() ? &c.right_expression() : nullptr, inputs, node_id,
                    label, out);
  } else {
    out.push_back(issue(node_id, "ValueRequired",
                        label + ": the condition is neither a comparison nor a conjunction",
                        "Value required [Expr]."));
  }
}

void check_reachable(const std::map<std::string, std::set<std::string>>& downstream,
                     const std::set<std::string>& nodes, std::vector<Issue>& out) {
  std::set<std::string> visited, visiting;
  std::vector<std::string> cycle;
  static const std::set<std::string> k_none;
  std::function<bool(const std::string&)> walk = [&](const std::string& id) {
    if (visiting.count(id)) return true;
    visiting.insert(id);
    visited.insert(id);
    auto it = downstream.find(id);
    for (const auto& next : it == downstream.end() ? k_none : it->second)
      if (walk(next)) {
        cycle.insert(cycle.begin(), next);
        return true;
      }
    visiting.erase(id);
    return false;
  };
  if (walk(k_start)) {
    std::string path = k_start;
    for (const auto& id : cycle) path += ">" + id;
    out.push_back(issue(k_start, "CycleDetected", "the nodes form a cycle: " + path,
                        "A cycle has been detected while traversing the Workflow [" + path + "]."));
    return;
  }
  std::string unreachable;
  for (const auto& id : nodes)
    if (!visited.count(id) && id != k_end) unreachable += (unreachable.empty() ? "" : ",") + id;
  if (!unreachable.empty())
    out.push_back(issue(k_start, "UnreachableNodes",
                        "nodes " + unreachable +
                            " can never run: nothing that runs leads to them (an upstream id "
                            "that is no node, or a cycle)",
                        "The Workflow contain unreachable nodes [" + unreachable + "]."));
}

}  // namespace flytecd::sinks::compiler::detail
