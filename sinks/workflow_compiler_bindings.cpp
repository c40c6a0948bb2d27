// The bindings half of the workflow compiler's checker (workflow_compiler_checker.hpp): promises
// resolved against upstream outputs, bindings type-checked against the interface they feed, a
// branch's bound inputs, and reachability.
#include <functional>

#include "sinks/workflow_compiler_checker.hpp"

namespace flytecd::sinks::compiler::detail {

// What a branch node's condition can read: each bound name, typed as its binding resolves
// (a promise: the upstream output's own type, before any index or attribute path).
detail::BoundInputs Checker::bound_inputs(const fc::Node& n) {
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
void Checker::check_reachable(const fc::WorkflowTemplate& wf,
                              const std::vector<const fc::Node*>& nodes) {
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
std::optional<fc::LiteralType> Checker::peek_promise(const fc::OutputReference& p) {
  return resolve(p, "", "", nullptr, /*quiet=*/true);
}

// The type of upstream output `p`; errors (no such node or output) are reported.
// `raw`: also the output's own type, before any index or attribute path.
std::optional<fc::LiteralType> Checker::resolve(const fc::OutputReference& p,
                                                const std::string& ctx, const std::string& node_id,
                                                std::string* shown, bool quiet,
                                                fc::LiteralType* raw) {
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
void Checker::check_binding(const std::string& what, const std::string& var,
                            const std::string& node_id, const fc::BindingData& b,
                            const fc::LiteralType* expected) {
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
        for (const auto& e : b.collection().bindings()) check_binding(what, var, node_id, e, elem);
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
              what + ": " + type_text(*expected) + " is not castable from " + type_text(*t) + " (" +
                  from + ")",
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
              "Variable [" + var + "] (type [" + go_type(*t) + "]) doesn't match expected type [" +
                  go_type(*expected) + "].");
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

void Checker::check_bindings(const std::string& label, const std::string& node_id,
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
            what + ": no such " + (end ? "output" : "input") + " (" + (end ? "outputs" : "inputs") +
                ": " + names_of(i.inputs) + ")",
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

}  // namespace flytecd::sinks::compiler::detail
