#pragma once

// Internal to the workflow compiler (sinks/workflow_compiler*.cpp): one workflow template being
// compiled (the primary, or a sub-workflow) against FlyteAdmin's compiler rules: nodes and their
// interfaces (workflow_compiler_graph.cpp); bindings, promises and reachability
// (workflow_compiler_bindings.cpp).

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sinks/workflow_compiler.hpp"
#include "sinks/workflow_compiler_flow.hpp"

namespace flytecd::sinks::compiler::detail {
namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;

using Vars = std::map<std::string, fc::LiteralType>;

// The interface a node shows its neighbours.
struct Iface {
  bool known = false;        // false: not known here (a reference outside `refs`): not checked
  bool typed_inputs = true;  // false: a branch, gate or array node takes what is bound to it
  Vars inputs;
  std::set<std::string> optional;  // inputs that need no binding
  Vars outputs;
};

inline Iface unknown_iface() { return Iface{}; }

// A protobuf map in key order (its own order is unspecified): messages come out stable.
template <typename V>
inline std::map<std::string, const V*> sorted(const google::protobuf::Map<std::string, V>& m) {
  std::map<std::string, const V*> out;
  for (const auto& [k, v] : m) out[k] = &v;
  return out;
}

// Go's %v of an identifier, as FlyteAdmin prints it in its reference errors.
inline std::string go_id(const fc::Identifier& id) {
  return "resource_type:" + fc::ResourceType_Name(id.resource_type()) + " project:\"" +
         id.project() + "\" domain:\"" + id.domain() + "\" name:\"" + id.name() + "\" version:\"" +
         id.version() + "\"";
}

inline std::string names_of(const Vars& vars) {
  std::string s;
  for (const auto& [k, v] : vars) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none" : s;
}

inline bool is_optional(const fc::LiteralType& t) {
  if (!t.has_union_type()) return false;
  for (const auto& v : t.union_type().variants())
    if (v.has_simple() && v.simple() == fc::NONE) return true;
  return false;
}

inline Vars vars_of(const fc::VariableMap& m) {
  Vars out;
  for (const auto& [k, v] : m.variables()) out[k] = v.type();
  return out;
}

inline Iface iface_of(const fc::TypedInterface& t) {
  Iface i;
  i.known = true;
  i.inputs = vars_of(t.inputs());
  for (const auto& [k, v] : i.inputs)
    if (is_optional(v)) i.optional.insert(k);
  i.outputs = vars_of(t.outputs());
  return i;
}

// One workflow template being compiled (the primary, or a sub-workflow).
class Checker {
 public:
  Checker(const fa::WorkflowSpec& spec, const References& refs, std::vector<Issue>& out,
          std::set<std::string>& compiled_subs, std::string prefix)
      : m_spec(spec),
        m_refs(refs),
        m_out(out),
        m_subs(compiled_subs),
        m_prefix(std::move(prefix)) {}

  void run(const fc::WorkflowTemplate& wf);

 private:
  struct Entry {
    const fc::Node* node = nullptr;
    Iface iface;
    bool done = false, computing = false;
  };

  // A top-level node's interface as its downstream nodes see it (output aliases applied),
  // computed on first use (an approve gate reads its upstream's); a node that needs itself is
  // unknown.
  const Iface& upstream_iface(const std::string& id, Entry& entry);

  // validateEffectiveOutputParameters: each alias renames one output (the original name is gone);
  // two aliases of one output are DuplicateAlias, an alias of no output ParameterNotBound.
  // `label` empty: quiet (the findings are reported once, by check_node).
  Vars aliased_outputs(const fc::Node& n, const Iface& i, const std::string& label);

  // validateVariables: every variable needs a name and a type (ValueRequired otherwise).
  bool typed_vars(const fc::VariableMap& vars, const std::string& node_id, const std::string& what);

  void add(bool warning, const std::string& node, const std::string& code, const std::string& text,
           const std::string& description);
  void error(const std::string& node, const std::string& code, const std::string& text,
             const std::string& description);

  // The node's interface; reference errors are reported once, here (cached per node).
  Iface interface_of(const fc::Node& n, const std::string& label);

  Iface missing_reference(const fc::Node& n, const std::string& label, const char* kind,
                          const fc::Identifier& id, const char* code,
                          const std::string& description);

  Iface compute_interface(const fc::Node& n, const std::string& label);

  // ValidateInterface on a referenced interface: unknown when a variable lacks a name or type.
  Iface checked_iface(const fc::TypedInterface& t, const std::string& node_id,
                      const std::string& what);

  Iface workflow_node_interface(const fc::Node& n, const std::string& label);

  // Outputs common to every case, with identical types (validateVarType); inputs are what is
  // bound.
  Iface branch_interface(const fc::Node& n, const std::string& label);

  void check_node(const fc::Node& n, const std::string& label, const std::string& id);

  // What a branch node's condition can read: each bound name, typed as its binding resolves
  // (a promise: the upstream output's own type, before any index or attribute path).
  detail::BoundInputs bound_inputs(const fc::Node& n);

  // validateReachable over the edges AddEdges draws: from each upstream_node_ids entry and each
  // promise's node to the node (a workflow input: from start-node; the workflow's outputs: to
  // end-node), then start-node to every node that waits for none and every node nothing waits
  // for to end-node.
  void check_reachable(const fc::WorkflowTemplate& wf, const std::vector<const fc::Node*>& nodes);

  // The type of upstream output `p` names, without reporting anything (nullopt: unknown).
  std::optional<fc::LiteralType> peek_promise(const fc::OutputReference& p);

  // The type of upstream output `p`; errors (no such node or output) are reported.
  // `raw`: also the output's own type, before any index or attribute path.
  std::optional<fc::LiteralType> resolve(const fc::OutputReference& p, const std::string& ctx,
                                         const std::string& node_id, std::string* shown,
                                         bool quiet = false, fc::LiteralType* raw = nullptr);

  // `what`: "node n1 input a" / "output o0"; `expected` null = untyped (only references checked).
  void check_binding(const std::string& what, const std::string& var, const std::string& node_id,
                     const fc::BindingData& b, const fc::LiteralType* expected);

  void check_bindings(const std::string& label, const std::string& node_id,
                      const google::protobuf::RepeatedPtrField<fc::Binding>& bindings,
                      const Iface& i);

  const fa::WorkflowSpec& m_spec;
  const References& m_refs;
  std::vector<Issue>& m_out;
  std::set<std::string>& m_subs;
  std::string m_prefix;
  const fc::WorkflowTemplate* m_wf = nullptr;
  std::map<std::string, Entry> m_nodes;
  std::map<const fc::Node*, Iface> m_ifaces;
};

}  // namespace flytecd::sinks::compiler::detail
