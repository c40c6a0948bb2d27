// compile_workflow: the graph half of the compiler (nodes, bindings, references); the type rules
// are in workflow_compiler.cpp.
#include <google/protobuf/util/message_differencer.h>

#include <functional>
#include <map>
#include <set>

#include "sinks/workflow_compiler.hpp"
#include "sinks/workflow_compiler_flow.hpp"

namespace flytecd::sinks::compiler {
namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;

namespace {

constexpr const char* k_start = "start-node";
constexpr const char* k_end = "end-node";

using Vars = std::map<std::string, fc::LiteralType>;

// The interface a node shows its neighbours.
struct Iface {
  bool known = false;        // false: not known here (a reference outside `refs`): not checked
  bool typed_inputs = true;  // false: a branch, gate or array node takes what is bound to it
  Vars inputs;
  std::set<std::string> optional;  // inputs that need no binding
  Vars outputs;
};

Iface unknown_iface() { return Iface{}; }

// A protobuf map in key order (its own order is unspecified): messages come out stable.
template <typename V>
std::map<std::string, const V*> sorted(const google::protobuf::Map<std::string, V>& m) {
  std::map<std::string, const V*> out;
  for (const auto& [k, v] : m) out[k] = &v;
  return out;
}

// Go's %v of an identifier, as FlyteAdmin prints it in its reference errors.
std::string go_id(const fc::Identifier& id) {
  return "resource_type:" + fc::ResourceType_Name(id.resource_type()) + " project:\"" +
         id.project() + "\" domain:\"" + id.domain() + "\" name:\"" + id.name() + "\" version:\"" +
         id.version() + "\"";
}

// FlyteAdmin prints types with LiteralTypeToStr (the proto's text); close enough for people.
std::string go_type(const fc::LiteralType& t) {
  return t.has_simple() ? "simple:" + fc::SimpleType_Name(t.simple()) : type_text(t);
}

std::string names_of(const Vars& vars) {
  std::string s;
  for (const auto& [k, v] : vars) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none" : s;
}

bool is_optional(const fc::LiteralType& t) {
  if (!t.has_union_type()) return false;
  for (const auto& v : t.union_type().variants())
    if (v.has_simple() && v.simple() == fc::NONE) return true;
  return false;
}

Vars vars_of(const fc::VariableMap& m) {
  Vars out;
  for (const auto& [k, v] : m.variables()) out[k] = v.type();
  return out;
}

Iface iface_of(const fc::TypedInterface& t) {
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

  void run(const fc::WorkflowTemplate& wf) {
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

 private:
  struct Entry {
    const fc::Node* node = nullptr;
    Iface iface;
    bool done = false, computing = false;
  };

  // A top-level node's interface as its downstream nodes see it (output aliases applied),
  // computed on first use (an approve gate reads its upstream's); a node that needs itself is
  // unknown.
  const Iface& upstream_iface(const std::string& id, Entry& entry) {
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
  Vars aliased_outputs(const fc::Node& n, const Iface& i, const std::string& label) {
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
  bool typed_vars(const fc::VariableMap& vars, const std::string& node_id,
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

  void add(bool warning, const std::string& node, const std::string& code, const std::string& text,
           const std::string& description) {
    m_out.push_back(Issue{warning, node, code, m_prefix + text, description});
  }
  void error(const std::string& node, const std::string& code, const std::string& text,
             const std::string& description) {
    add(false, node, code, text, description);
  }

  // The node's interface; reference errors are reported once, here (cached per node).
  Iface interface_of(const fc::Node& n, const std::string& label) {
    if (auto it = m_ifaces.find(&n); it != m_ifaces.end()) return it->second;
    Iface i = compute_interface(n, label);
    m_ifaces[&n] = i;
    return i;
  }

  Iface missing_reference(const fc::Node& n, const std::string& label, const char* kind,
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

  Iface compute_interface(const fc::Node& n, const std::string& label) {
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
  Iface checked_iface(const fc::TypedInterface& t, const std::string& node_id,
                      const std::string& what) {
    const bool inputs_ok = typed_vars(t.inputs(), node_id, what + " input");
    if (!(typed_vars(t.outputs(), node_id, what + " output") && inputs_ok)) return unknown_iface();
    return iface_of(t);
  }

  Iface workflow_node_interface(const fc::Node& n, const std::string& label) {
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
  Iface branch_interface(const fc::Node& n, const std::string& label) {
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

  void check_node(const fc::Node& n, const std::string& label, const std::string& id) {
    Iface i = interface_of(n, label);
    if (i.known) aliased_outputs(n, i, label);
    check_bindings(label, id, n.inputs(), i);
    if (n.has_branch_node()) {
      const auto& ie = n.branch_node().if_else();
      detail::BoundInputs bound = bound_inputs(n);
      std::vector<Issue> found;
      if (ie.has_case_())
        detail::check_condition(ie.case_().has_condition() ? &ie.case_().condition() : nullptr,
                                bound, id, label + " case 1", found);
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

  // What a branch node's condition can read: each bound name, typed as its binding resolves
  // (a promise: the upstream output's own type, before any index or attribute path).
  detail::BoundInputs bound_inputs(const fc::Node& n) {
    detail::BoundInputs out;
    for (const auto& b : n.inputs()) {
      std::optional<fc::LiteralType> t;
      if (b.binding().has_promise()) {
        fc::LiteralType raw;
        if (resolve(b.binding().promise(), "", "", nullptr, /*quiet=*/true, &raw)) t = raw;
      } else if (b.binding().has_scalar()) {
        fc::Literal l;
        *l.mutable_scalar() = b.binding().scalar();
        t = type_of(l);
      }
      out[b.var()] = t;
    }
    return out;
  }

  // validateReachable over the edges AddEdges draws: from each upstream_node_ids entry and each
  // promise's node to the node (a workflow input: from start-node; the workflow's outputs: to
  // end-node), then start-node to every node that waits for none and every node nothing waits
  // for to end-node.
  void check_reachable(const fc::WorkflowTemplate& wf, const std::vector<const fc::Node*>& nodes) {
    std::map<std::string, std::set<std::string>> down, up;
    auto edge = [&](std::string from, const std::string& to) {
      if (from.empty()) from = k_start;
      down[from].insert(to);
      up[to].insert(from);
    };
    std::function<void(const fc::BindingData&, const std::string&)> promises =
        [&](const fc::BindingData& b, const std::string& to) {
          if (b.has_promise() &&
              (b.promise().node_id().empty() || m_nodes.count(b.promise().node_id())))
            edge(b.promise().node_id(), to);
          for (const auto& e : b.collection().bindings()) promises(e, to);
          for (const auto& [k, e] : b.map().bindings()) promises(e, to);
        };
    std::set<std::string> ids = {k_start, k_end};
    for (const fc::Node* n : nodes) {
      ids.insert(n->id());
      for (const auto& u : n->upstream_node_ids()) edge(u, n->id());
      for (const auto& b : n->inputs()) promises(b.binding(), n->id());
    }
    for (const auto& b : wf.outputs()) promises(b.binding(), k_end);
    for (const auto& id : ids) {
      if (id == k_start || id == k_end) continue;
      if (!up.count(id)) edge(k_start, id);
      if (!down.count(id)) edge(id, k_end);
    }
    std::vector<Issue> found;
    detail::check_reachable(down, ids, found);
    for (auto& f : found) add(false, f.node, f.code, f.text, f.description);
  }

  // The type of upstream output `p` names, without reporting anything (nullopt: unknown).
  std::optional<fc::LiteralType> peek_promise(const fc::OutputReference& p) {
    return resolve(p, "", "", nullptr, /*quiet=*/true);
  }

  // The type of upstream output `p`; errors (no such node or output) are reported.
  // `raw`: also the output's own type, before any index or attribute path.
  std::optional<fc::LiteralType> resolve(const fc::OutputReference& p, const std::string& ctx,
                                         const std::string& node_id, std::string* shown,
                                         bool quiet = false, fc::LiteralType* raw = nullptr) {
    // Quiet: only this promise's own findings are kept back, never those of the interfaces
    // it computes on the way (they are reported once, where they are found).
    auto error = [&](const std::string& node, const std::string& code, const std::string& text,
                     const std::string& description) {
      if (!quiet) this->error(node, code, text, description);
    };
    const std::string up_id = p.node_id().empty() ? k_start : p.node_id();
    const std::string from = (p.node_id().empty() ? std::string() : p.node_id() + ".") + p.var();
    if (shown) *shown = from;
    auto it = m_nodes.find(up_id);
    if (it == m_nodes.end()) {
      error(node_id, "NodeReferenceNotFound", ctx + ": no node " + up_id + " (" + from + ")",
            "Referenced node [" + up_id + "] not found.");
      return std::nullopt;
    }
    const auto name = parse_var_name(p.var());
    if (!name) {
      error(node_id, "SyntaxError",
            ctx + ": cannot read the output name '" + p.var() +
                "' (expected a name of letters, digits and '_', or [index].name)",
            "Failed to parse element [" + p.var() + "].");
      return std::nullopt;
    }
    const std::string& var = name->name;
    const Iface& up = upstream_iface(it->first, it->second);
    if (!up.known) return std::nullopt;
    auto out = up.outputs.find(var);
    if (out == up.outputs.end()) {
      const std::string whose =
          up_id == k_start ? "the workflow has no input " + var : up_id + " has no output " + var;
      error(node_id, "VariableNameNotFound",
            ctx + ": " + whose + " (" + (up_id == k_start ? "inputs" : "outputs") + ": " +
                names_of(up.outputs) + ")",
            "Variable [" + var + "] not found on node [" + up_id + "].");
      return std::nullopt;
    }
    fc::LiteralType t = out->second;
    if (raw) *raw = t;
    if (name->indexed) {
      if (!t.has_collection_type()) {
        error(node_id, "MismatchingTypes",
              ctx + ": " + from + " indexes " + type_text(t) + ", which is not a list",
              "Variable [" + p.var() + "] (type [" + go_type(t) + "]) is not a collection.");
        return std::nullopt;
      }
      fc::LiteralType elem = t.collection_type();
      t = std::move(elem);
    }
    for (const auto& attr : p.attr_path()) {
      if (t.has_collection_type()) {
        fc::LiteralType next = t.collection_type();
        t = std::move(next);
      } else if (t.has_map_value_type()) {
        fc::LiteralType next = t.map_value_type();
        t = std::move(next);
      } else if (!t.structure().dataclass_type().empty()) {
        const auto& fields = t.structure().dataclass_type();
        auto f = fields.find(attr.string_value());
        if (f == fields.end()) {
          error(node_id, "FieldNotFound",
                ctx + ": " + from + " has no attribute " + attr.string_value(),
                "Field [" + attr.string_value() + "] not found in the dataclass.");
          return std::nullopt;
        }
        fc::LiteralType next = f->second;
        t = std::move(next);
      }
      // Anything else (a STRUCT without a dataclass structure, a simple type) keeps its type and
      // is checked as it is, as bindings.go does.
    }
    return t;
  }

  // `what`: "node n1 input a" / "output o0"; `expected` null = untyped (only references checked).
  void check_binding(const std::string& what, const std::string& var, const std::string& node_id,
                     const fc::BindingData& b, const fc::LiteralType* expected) {
    if (expected && expected->has_union_type() && (b.has_collection() || b.has_map())) {
      int fits = 0;
      for (const auto& variant : expected->union_type().variants()) {
        std::vector<Issue> trial;
        std::swap(trial, m_out);
        check_binding(what, var, node_id, b, &variant);
        std::swap(trial, m_out);
        bool ok = true;
        for (const auto& t : trial) ok = ok && t.warning;
        fits += ok;
      }
      if (fits == 1) return;
      error(node_id, fits ? "AmbiguousBindingUnionValue" : "IncompatibleBindingUnionValue",
            what + ": the bound " + (b.has_collection() ? "list" : "map") +
                (fits ? " fits more than one variant of " : " fits no variant of ") +
                type_text(*expected),
            "Input [" + var + "] on node [" + node_id + "] expects bindings of union type [" +
                go_type(*expected) + "].  Received a binding which does not match " +
                (fits ? "exactly one of" : "any of") + " the variants.");
      return;
    }
    switch (b.value_case()) {
      case fc::BindingData::kCollection:
      case fc::BindingData::kMap: {
        const bool list = b.has_collection();
        const fc::LiteralType* elem = nullptr;
        if (expected) {
          if (list ? !expected->has_collection_type() : !expected->has_map_value_type()) {
            error(node_id, "MismatchingBindings",
                  what + ": " + type_text(*expected) + " is not castable from a bound " +
                      (list ? "list" : "map"),
                  "Input [" + var + "] on node [" + node_id + "] expects bindings of type [" +
                      go_type(*expected) + "].  Received [" + (list ? "collection" : "map") + "]");
            return;
          }
          elem = list ? &expected->collection_type() : &expected->map_value_type();
        }
        if (list) {
          for (const auto& e : b.collection().bindings())
            check_binding(what, var, node_id, e, elem);
        } else {
          for (const auto& [k, e] : b.map().bindings()) check_binding(what, var, node_id, e, elem);
        }
        return;
      }
      case fc::BindingData::kPromise: {
        std::string from;
        auto t = resolve(b.promise(), what, node_id, &from);
        if (expected && t && !castable(*t, *expected))
          error(node_id, "MismatchingTypes",
                what + ": " + type_text(*expected) + " is not castable from " + type_text(*t) +
                    " (" + from + ")",
                "The output variable '" + from + "' has type [" + go_type(*t) +
                    "], but it's assigned to the input variable '" + node_id + "." + var +
                    "' which has type type [" + go_type(*expected) + "].");
        return;
      }
      case fc::BindingData::kScalar: {
        fc::Literal l;
        *l.mutable_scalar() = b.scalar();
        auto t = type_of(l);
        if (!t) {
          error(node_id, "UnrecognizedValue", what + ": the bound value has no known type",
                "Cannot recognize value type [scalar].");
          return;
        }
        if (expected && !castable(*t, *expected))
          error(node_id, "MismatchingTypes",
                what + ": " + type_text(*expected) + " is not castable from " + type_text(*t) +
                    " (a literal)",
                "Variable [" + var + "] (type [" + go_type(*t) +
                    "]) doesn't match expected type [" + go_type(*expected) + "].");
        if (expected && expected->has_enum_type()) {
          const auto& v = b.scalar().primitive().string_value();
          const auto& values = expected->enum_type().values();
          if (std::find(values.begin(), values.end(), v) == values.end())
            error(node_id, "IllegalEnumValue",
                  what + ": '" + v + "' is not one of " + type_text(*expected),
                  "Invalid enum value [" + v + "].");
        }
        return;
      }
      default:
        error(node_id, "MismatchingBindings", what + ": the binding has no value",
              "Input [" + var + "] on node [" + node_id + "] expects bindings of type [" +
                  (expected ? go_type(*expected) : "") + "].  Received []");
    }
  }

  void check_bindings(const std::string& label, const std::string& node_id,
                      const google::protobuf::RepeatedPtrField<fc::Binding>& bindings,
                      const Iface& i) {
    const bool typed = i.known && i.typed_inputs;
    // A branch or approve gate reads its inputs' types off the bindings (ValidateBindings against
    // an empty interface, where a list or map binding has no type to match).
    const bool untyped = i.known && !i.typed_inputs;
    const bool end = node_id == k_end;
    std::set<std::string> bound;
    for (const auto& b : bindings) {
      const std::string what = end ? "output " + b.var() : label + " input " + b.var();
      auto in = i.inputs.find(b.var());
      if (typed && in == i.inputs.end()) {
        error(node_id, "VariableNameNotFound",
              what + ": no such " + (end ? "output" : "input") + " (" +
                  (end ? "outputs" : "inputs") + ": " + names_of(i.inputs) + ")",
              "Variable [" + b.var() + "] not found on node [" + node_id + "].");
      } else if (!b.has_binding()) {
        error(node_id, "ValueRequired", what + ": binding without a value",
              "Value required [Binding].");
      } else if (!bound.insert(b.var()).second) {
        error(node_id, "ParameterBoundMoreThanOnce", what + ": bound more than once",
              "Input [" + b.var() + "] is bound more than once.");
      } else if (untyped && (b.binding().has_collection() || b.binding().has_map())) {
        const bool list = b.binding().has_collection();
        error(node_id, "MismatchingBindings",
              what + ": a bound " + (list ? "list" : "map") +
                  " has no type here (FlyteAdmin types a branch's or gate's inputs by their "
                  "bindings; bind a promise or a literal)",
              "Input [" + b.var() + "] on node [" + node_id +
                  "] expects bindings of type [simple:NONE].  Received [" +
                  (list ? "collection" : "map") + "]");
      } else {
        check_binding(what, b.var(), node_id, b.binding(), typed ? &in->second : nullptr);
      }
    }
    if (!typed) return;
    for (const auto& [name, t] : i.inputs)
      if (!bound.count(name) && !i.optional.count(name))
        error(node_id, "ParameterNotBound",
              (end ? "output " + name : label + " input " + name) + ": not bound (" + type_text(t) +
                  ")",
              "Parameter not bound [" + name + "].");
  }

  const fa::WorkflowSpec& m_spec;
  const References& m_refs;
  std::vector<Issue>& m_out;
  std::set<std::string>& m_subs;
  std::string m_prefix;
  const fc::WorkflowTemplate* m_wf = nullptr;
  std::map<std::string, Entry> m_nodes;
  std::map<const fc::Node*, Iface> m_ifaces;
};

}  // namespace

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
