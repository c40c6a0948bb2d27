// compile_workflow: the graph half of the compiler (nodes, their interfaces, references; the
// checker's bindings half is workflow_compiler_bindings.cpp); the type rules are in
// workflow_compiler.cpp.
#include <google/protobuf/util/message_differencer.h>

#include <functional>
#include <map>
#include <set>

#include "sinks/workflow_compiler_checker.hpp"

namespace flytecd::sinks::compiler {
namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;

namespace detail {

void Checker::run(const fc::WorkflowTemplate& wf) {
  m_wf = &wf;
  if (wf.nodes().empty()) {
    error(wf.id().name(), "NoNodesFound", "workflow has no nodes",
          "Can't find any nodes in workflow [" + go_id(wf.id()) + "].");
    return;
  }
  // ValidateInterface: the workflow's own variables need names and types, or nothing more is
  // checked.
  const bool inputs_ok = typed_vars(wf.interface().inputs(), k_start, "the workflow's input");
  if (!(typed_vars(wf.interface().outputs(), k_start, "the workflow's output") && inputs_ok))
    return;
  Iface start;
  start.known = true;
  start.outputs = vars_of(wf.interface().inputs());
  m_nodes[k_start] = {nullptr, start, true, false};
  std::vector<const fc::Node*> nodes, repeated;
  for (const auto& n : wf.nodes()) {
    if (n.id().empty()) {
      error("<node>", "ValueRequired", "a node has no id", "Value required [Id].");
      continue;
    }
    // AddNode keeps the first node of an id and drops a later one without a word.
    if (m_nodes.count(n.id())) {
      repeated.push_back(&n);
      continue;
    }
    m_nodes[n.id()] = {&n, Iface{}, false, false};
    nodes.push_back(&n);
  }
  // Interfaces first: a binding may name a node declared after it.
  for (auto& [id, entry] : m_nodes) upstream_iface(id, entry);
  for (const fc::Node* n : nodes) check_node(*n, "node " + n->id(), n->id());
  // A dropped node still has its references validated (ValidateNode), never its bindings.
  for (const fc::Node* n : repeated) interface_of(*n, "node " + n->id() + " (repeated id)");
  if (wf.has_failure_node()) {
    const fc::Node& f = wf.failure_node();
    check_node(f, "failure node " + f.id(), f.id());
  }
  // The workflow's outputs are the end node's inputs.
  Iface end = iface_of(fc::TypedInterface());
  end.inputs = vars_of(wf.interface().outputs());
  for (const auto& [k, v] : end.inputs)
    if (is_optional(v)) end.optional.insert(k);
  check_bindings("output", k_end, wf.outputs(), end);
  check_reachable(wf, nodes);
}

// A top-level node's interface as its downstream nodes see it (output aliases applied),
// computed on first use (an approve gate reads its upstream's); a node that needs itself is
// unknown.
const Iface& Checker::upstream_iface(const std::string& id, Entry& entry) {
  if (!entry.done && entry.node && !entry.computing) {
    entry.computing = true;
    entry.iface = interface_of(*entry.node, "node " + id);
    if (entry.iface.known) entry.iface.outputs = aliased_outputs(*entry.node, entry.iface, "");
    entry.computing = false;
    entry.done = true;
  }
  return entry.iface;
}

// validateEffectiveOutputParameters: each alias renames one output (the original name is gone);
// two aliases of one output are DuplicateAlias, an alias of no output ParameterNotBound.
// `label` empty: quiet (the findings are reported once, by check_node).
Vars Checker::aliased_outputs(const fc::Node& n, const Iface& i, const std::string& label) {
  std::map<std::string, std::string> aliases;
  std::vector<std::string> order;
  for (const auto& a : n.output_aliases()) {
    if (aliases.count(a.var())) {
      if (!label.empty())
        error(n.id(), "DuplicateAlias",
              label + ": output " + a.var() + " is aliased twice (" + aliases[a.var()] + ", " +
                  a.alias() + ")",
              "Duplicate alias [" + a.alias() +
                  "] found. An output alias can only be used once in the Workflow.");
      continue;
    }
    aliases[a.var()] = a.alias();
    order.push_back(a.var());
  }
  Vars out;
  for (const auto& [name, t] : i.outputs) {
    auto a = aliases.find(name);
    out[a == aliases.end() ? name : a->second] = t;
  }
  for (const auto& var : order)
    if (!i.outputs.count(var) && !label.empty())
      error(n.id(), "ParameterNotBound",
            label + ": alias " + aliases[var] + " names no output " + var +
                " (outputs: " + names_of(i.outputs) + ")",
            "Parameter not bound [" + aliases[var] + "].");
  return out;
}

// validateVariables: every variable needs a name and a type (ValueRequired otherwise).
bool Checker::typed_vars(const fc::VariableMap& vars, const std::string& node_id,
                         const std::string& what) {
  bool ok = true;
  for (const auto& [name, v] : sorted(vars.variables())) {
    if (name.empty()) {
      error(node_id, "ValueRequired", what + " has no name", "Value required [paramName].");
      ok = false;
    }
    if (!v->has_type()) {
      error(node_id, "ValueRequired", what + " " + name + " has no type",
            "Value required [param.Type].");
      ok = false;
    }
  }
  return ok;
}

void Checker::add(bool warning, const std::string& node, const std::string& code,
                  const std::string& text, const std::string& description) {
  m_out.push_back(Issue{warning, node, code, m_prefix + text, description});
}

void Checker::error(const std::string& node, const std::string& code, const std::string& text,
                    const std::string& description) {
  add(false, node, code, text, description);
}

// The node's interface; reference errors are reported once, here (cached per node).
Iface Checker::interface_of(const fc::Node& n, const std::string& label) {
  if (auto it = m_ifaces.find(&n); it != m_ifaces.end()) return it->second;
  Iface i = compute_interface(n, label);
  m_ifaces[&n] = i;
  return i;
}

Iface Checker::missing_reference(const fc::Node& n, const std::string& label, const char* kind,
                                 const fc::Identifier& id, const char* code,
                                 const std::string& description) {
  const std::string what = std::string(kind) + " " + id.name() + "@" + id.version();
  if (m_refs.complete) {
    error(n.id(), code, label + ": " + what + " not found", description);
  } else {
    add(true, n.id(), code,
        label + ": " + what +
            " is not in the package; not checked (it must be registered "
            "already)",
        description);
  }
  return unknown_iface();
}

Iface Checker::compute_interface(const fc::Node& n, const std::string& label) {
  switch (n.target_case()) {
    case fc::Node::kTaskNode: {
      if (!n.task_node().has_reference_id()) {
        error(n.id(), "ValueRequired", label + ": task node without reference_id",
              "Value required [TaskNode.ReferenceId].");
        return unknown_iface();
      }
      const auto& id = n.task_node().reference_id();
      auto it = m_refs.tasks.find(id_key(id));
      if (it == m_refs.tasks.end())
        return missing_reference(n, label, "task", id, "TaskReferenceNotFound",
                                 "Referenced Task [" + go_id(id) + "] not found.");
      return checked_iface(it->second, n.id(), label + ": task " + id.name());
    }
    case fc::Node::kWorkflowNode:
      return workflow_node_interface(n, label);
    case fc::Node::kBranchNode:
      return branch_interface(n, label);
    case fc::Node::kGateNode: {
      const auto& g = n.gate_node();
      Iface i;
      i.known = true;
      if (g.has_approve()) {
        // The approve gate passes its inputs through as outputs.
        i.typed_inputs = false;
        for (const auto& b : n.inputs()) {
          auto t = b.binding().has_promise() ? peek_promise(b.binding().promise()) : std::nullopt;
          if (!t) {
            i.known = false;
            continue;
          }
          i.outputs[b.var()] = *t;
        }
      } else if (g.has_signal()) {
        if (!g.signal().has_type() || g.signal().output_variable_name().empty()) {
          error(n.id(), "ValueRequired", label + ": signal gate without type or output name",
                "Value required [GateNode.Signal.Type].");
          return unknown_iface();
        }
        i.outputs[g.signal().output_variable_name()] = g.signal().type();
      } else if (!g.has_sleep()) {
        error(n.id(), "NoConditionFound", label + ": gate node without a condition",
              "Can't find any condition in gate node [" + n.id() + "].");
        return unknown_iface();
      }
      return i;
    }
    case fc::Node::kArrayNode: {
      // The inner node's references are still checked; its typing is not (see the header).
      if (n.array_node().has_node()) interface_of(n.array_node().node(), label + " (array)");
      return unknown_iface();
    }
    default:
      error(n.id(), "ValueRequired", label + ": node has no target (task, workflow, branch…)",
            "Value required [Target].");
      return unknown_iface();
  }
}

// ValidateInterface on a referenced interface: unknown when a variable lacks a name or type.
Iface Checker::checked_iface(const fc::TypedInterface& t, const std::string& node_id,
                             const std::string& what) {
  const bool inputs_ok = typed_vars(t.inputs(), node_id, what + " input");
  if (!(typed_vars(t.outputs(), node_id, what + " output") && inputs_ok)) return unknown_iface();
  return iface_of(t);
}

Iface Checker::workflow_node_interface(const fc::Node& n, const std::string& label) {
  const auto& wn = n.workflow_node();
  if (wn.has_launchplan_ref()) {
    const auto& id = wn.launchplan_ref();
    if (go_id(id) == go_id(m_wf->id())) return iface_of(m_wf->interface());
    auto it = m_refs.launch_plans.find(id_key(id));
    if (it == m_refs.launch_plans.end())
      return missing_reference(n, label, "launch plan", id, "WorkflowReferenceNotFound",
                               "Referenced Workflow [" + go_id(id) + "] not found.");
    // Exposed: required inputs, and those with a default that the node binds anyway.
    Iface i;
    i.known = true;
    std::set<std::string> bound;
    for (const auto& b : n.inputs()) bound.insert(b.var());
    fc::TypedInterface exposed;
    for (const auto& [name, p] : it->second.inputs.parameters())
      if (p.required() || bound.count(name))
        (*exposed.mutable_inputs()->mutable_variables())[name] = p.var();
    *exposed.mutable_outputs() = it->second.outputs;
    return checked_iface(exposed, n.id(), label + ": launch plan " + id.name());
  }
  if (wn.has_sub_workflow_ref()) {
    const auto& id = wn.sub_workflow_ref();
    const fc::WorkflowTemplate* sub = nullptr;
    for (const auto& s : m_spec.sub_workflows())
      if (id_key(s.id()) == id_key(id)) sub = &s;
    if (!sub) {
      // Sub-workflows travel with the workflow (spec.sub_workflows), never from the database.
      error(n.id(), "WorkflowReferenceNotFound",
            label + ": sub-workflow " + id.name() + "@" + id.version() +
                " is not among the workflow's sub_workflows",
            "Referenced Workflow [" + go_id(id) + "] not found.");
      return unknown_iface();
    }
    if (m_subs.insert(id_key(id)).second) {
      Checker inner(m_spec, m_refs, m_out, m_subs, m_prefix + "sub-workflow " + id.name() + ": ");
      inner.run(*sub);
    }
    return checked_iface(sub->interface(), n.id(), label + ": sub-workflow " + id.name());
  }
  error(n.id(), "WorkflowReferenceNotFound",
        label + ": workflow node names neither a launch plan nor a sub-workflow",
        "Referenced Workflow [/] not found.");
  return unknown_iface();
}

// Outputs common to every case, with identical types (validateVarType); inputs are what is
// bound.
Iface Checker::branch_interface(const fc::Node& n, const std::string& label) {
  const auto& ie = n.branch_node().if_else();
  std::vector<const fc::Node*> cases;
  if (!ie.has_case_()) {
    error(n.id(), "BranchNodeHasNoCondition", label + ": branch without a case",
          "One of the branches on the node doesn't have a condition.");
  } else if (!ie.case_().has_then_node()) {
    error(n.id(), "BranchNodeIdNotFound", label + ": branch case without a then node",
          "BranchNode not assigned");
  } else {
    cases.push_back(&ie.case_().then_node());
  }
  for (const auto& o : ie.other()) {
    if (o.has_then_node())
      cases.push_back(&o.then_node());
    else
      error(n.id(), "BranchNodeIdNotFound", label + ": branch case without a then node",
            "BranchNode not assigned");
  }
  if (ie.has_else_node())
    cases.push_back(&ie.else_node());
  else if (!ie.has_error())
    error(n.id(), "BranchNodeHasNoDefault",
          label + ": branch has neither an else node nor a default error",
          "Branch Node must have either the else case set or a default error.");

  Iface i;
  i.known = !cases.empty();
  i.typed_inputs = false;
  bool first = true;
  for (const fc::Node* c : cases) {
    const std::string inner = n.id() + "-" + c->id();
    Iface ci = interface_of(*c, "node " + inner);
    if (!ci.known) {
      i.known = false;
      continue;
    }
    if (first) {
      i.outputs = ci.outputs;
      first = false;
      continue;
    }
    Vars common;
    for (const auto& [name, t] : i.outputs) {
      auto it = ci.outputs.find(name);
      if (it == ci.outputs.end()) continue;
      if (!google::protobuf::util::MessageDifferencer::Equals(t, it->second))
        error(inner, "MismatchingTypes",
              label + " output " + name + ": " + type_text(t) + " in one case, " +
                  type_text(it->second) + " in " + inner,
              "Variable [" + name + "] (type [" + go_type(it->second) +
                  "]) doesn't match expected type [" + go_type(t) + "].");
      common[name] = t;
    }
    i.outputs = std::move(common);
  }
  return i;
}

void Checker::check_node(const fc::Node& n, const std::string& label, const std::string& id) {
  Iface i = interface_of(n, label);
  if (i.known) aliased_outputs(n, i, label);
  check_bindings(label, id, n.inputs(), i);
  if (n.has_branch_node()) {
    const auto& ie = n.branch_node().if_else();
    detail::BoundInputs bound = bound_inputs(n);
    std::vector<Issue> found;
    if (ie.has_case_())
      detail::check_condition(ie.case_().has_condition() ? &ie.case_().condition() : nullptr, bound,
                              id, label + " case 1", found);
    for (int k = 0; k < ie.other_size(); ++k)
      detail::check_condition(ie.other(k).has_condition() ? &ie.other(k).condition() : nullptr,
                              bound, id, label + " case " + std::to_string(k + 2), found);
    for (auto& f : found) add(false, f.node, f.code, f.text, f.description);
    std::vector<const fc::Node*> cases;
    if (ie.case_().has_then_node()) cases.push_back(&ie.case_().then_node());
    for (const auto& o : ie.other())
      if (o.has_then_node()) cases.push_back(&o.then_node());
    if (ie.has_else_node()) cases.push_back(&ie.else_node());
    for (const fc::Node* c : cases) {
      const std::string inner = n.id() + "-" + c->id();
      check_node(*c, "node " + inner, inner);
    }
  }
}

}  // namespace detail

using detail::Checker;
using detail::go_id;

std::vector<Issue> compile_workflow(const fa::WorkflowSpec& spec, const References& refs) {
  std::vector<Issue> out;
  // NewWorkflowIndex: two sub-workflows of one id stop the compilation.
  std::set<std::string> sub_ids;
  for (const auto& s : spec.sub_workflows())
    if (!sub_ids.insert(go_id(s.id())).second)
      out.push_back(Issue{false, go_id(s.id()), "DuplicateId",
                          "sub-workflow " + s.id().name() + "@" + s.id().version() +
                              " is given twice in sub_workflows",
                          "Trying to insert two nodes with the same id."});
  if (!out.empty()) return out;
  std::set<std::string> subs;
  Checker(spec, refs, out, subs, "").run(spec.template_());
  return out;
}

}  // namespace flytecd::sinks::compiler
