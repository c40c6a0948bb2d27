// Where flytecd's workflow compiler and FlyteAdmin's (flytepropeller pkg/compiler) disagreed
// (issue 22): output aliases, ParseVarName, AddNode, validateVarType, attribute paths into a
// plain STRUCT, interfaces without types, duplicate sub-workflows, branch conditions and
// validateReachable. Each case is upstream's outcome on a workflow built by hand.
#include <google/protobuf/text_format.h>

#include <catch2/catch.hpp>

#include "sinks/workflow_compiler.hpp"
#include "tests/unit/sinks/textproto.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::sinks::compiler;
namespace fa = flyteidl::admin;
namespace fc = flyteidl::core;

namespace {

using flytecd_test::parse_textproto;

// task_123 (x: INTEGER, y: INTEGER -> x: INTEGER), as upstream's ExampleCompileWorkflow uses;
// s (-> r: STRUCT) and l (-> xs: List[INTEGER]).
References refs() {
  References r;
  r.tasks["p/d/task_123/v"] = parse_textproto<fc::TypedInterface>(R"(
    inputs { variables { key: "x" value { type { simple: INTEGER } } }
             variables { key: "y" value { type { simple: INTEGER } } } }
    outputs { variables { key: "x" value { type { simple: INTEGER } } } })");
  r.tasks["p/d/s/v"] = parse_textproto<fc::TypedInterface>(R"(
    outputs { variables { key: "r" value { type { simple: STRUCT } } } })");
  r.tasks["p/d/l/v"] = parse_textproto<fc::TypedInterface>(R"(
    outputs { variables { key: "xs" value { type { collection_type { simple: INTEGER } } } } })");
  return r;
}

std::string ref(const std::string& task) {
  return "task_node { reference_id { resource_type: TASK project: \"p\" domain: \"d\" name: \"" +
         task + "\" version: \"v\" } }";
}

std::string promise(const std::string& var, const std::string& node, const std::string& out) {
  return "inputs { var: \"" + var + "\" binding { promise { node_id: \"" + node + "\" var: \"" +
         out + "\" } } }";
}

std::string int_input(const std::string& var) {
  return "inputs { var: \"" + var + "\" binding { scalar { primitive { integer: 124 } } } }";
}

// A workflow (wf_input: INTEGER -> wf_output: INTEGER) with `body` (nodes and outputs).
fa::WorkflowSpec workflow(const std::string& body) {
  return parse_textproto<fa::WorkflowSpec>(R"(template { id { resource_type: WORKFLOW project: "p"
      domain: "d" name: "repo" version: "v" }
    interface { inputs { variables { key: "wf_input" value { type { simple: INTEGER } } } }
                outputs { variables { key: "wf_output" value { type { simple: INTEGER } } } } } )" +
                                           body + " }");
}

std::vector<Issue> errors_of(const fa::WorkflowSpec& spec, const References& r = refs()) {
  std::vector<Issue> out;
  for (auto& i : compile_workflow(spec, r))
    if (!i.warning) out.push_back(i);
  return out;
}

std::string codes(const std::vector<Issue>& issues) {
  std::string s;
  for (const auto& i : issues) s += (s.empty() ? "" : " ") + i.code;
  return s;
}

// ExampleCompileWorkflow_inputsOutputsBinding: node_2's output x is aliased n2_output.
std::string aliased_pair(const std::string& aliases, const std::string& out_var) {
  return R"(nodes { id: "node_1" )" + promise("x", "", "wf_input") + int_input("y") +
         ref("task_123") + R"( } nodes { id: "node_2" )" + int_input("y") +
         promise("x", "node_1", "x") + aliases + ref("task_123") +
         R"( } outputs { var: "wf_output" binding { promise { node_id: "node_2"
         var: ")" +
         out_var + R"(" } } })";
}

}  // namespace

TEST_CASE("compiler: an output alias renames the node's output (upstream's inputsOutputsBinding)",
          "[compile][issue22]") {
  const std::string alias = R"(output_aliases { var: "x" alias: "n2_output" })";
  CHECK(errors_of(workflow(aliased_pair(alias, "n2_output"))).empty());
  // The original name is gone once aliased.
  auto errs = errors_of(workflow(aliased_pair(alias, "x")));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "VariableNameNotFound");
  CHECK(errs[0].text == "output wf_output: node_2 has no output x (outputs: n2_output)");
}

TEST_CASE("compiler: an alias of no output and a second alias of one output are refused",
          "[compile][issue22]") {
  auto errs = errors_of(
      workflow(aliased_pair(R"(output_aliases { var: "nope" alias: "n2_output" })", "x")));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "ParameterNotBound");
  CHECK(errs[0].node == "node_2");
  CHECK(errs[0].description == "Parameter not bound [n2_output].");

  errs = errors_of(workflow(aliased_pair(
      R"(output_aliases { var: "x" alias: "a1" } output_aliases { var: "x" alias: "a2" })", "a1")));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "DuplicateAlias");
  CHECK(errs[0].description ==
        "Duplicate alias [a2] found. An output alias can only be used once in the Workflow.");
}

TEST_CASE("compiler: promise names read as ParseVarName: name or [index].name, one match only",
          "[compile][issue22]") {
  auto v = parse_var_name("o");
  REQUIRE(v);
  CHECK(v->name == "o");
  CHECK_FALSE(v->indexed);
  v = parse_var_name("[0].o");
  REQUIRE(v);
  CHECK(v->name == "o");
  CHECK(v->indexed);
  CHECK(v->index == 0);
  v = parse_var_name("[12].out_1");
  REQUIRE(v);
  CHECK(v->index == 12);
  // One match of \w+ anywhere in the text: what surrounds it is ignored.
  v = parse_var_name("-x");
  REQUIRE(v);
  CHECK(v->name == "x");
  CHECK_FALSE(parse_var_name("o[0]"));
  CHECK_FALSE(parse_var_name("out-1"));
  CHECK_FALSE(parse_var_name("a.b"));
  CHECK_FALSE(parse_var_name(""));
  v = parse_var_name("[0]");  // no ".name": the one \w+ match is "0"
  REQUIRE(v);
  CHECK(v->name == "0");
  CHECK_FALSE(v->indexed);
  CHECK_FALSE(parse_var_name("[99999999999999999999].o"));

  // [0].xs indexes l's List[INTEGER]: an INTEGER for task_123's x.
  auto spec = workflow(R"(nodes { id: "n0" )" + ref("l") + R"( } nodes { id: "n1" )" +
                       promise("x", "n0", "[0].xs") + int_input("y") + ref("task_123") +
                       R"( } outputs { var: "wf_output" binding { promise { node_id: "n1"
                       var: "x" } } })");
  CHECK(errors_of(spec).empty());
  for (const char* bad : {"xs[0]", "out-1"}) {
    spec = workflow(R"(nodes { id: "n0" )" + ref("l") + R"( } nodes { id: "n1" )" +
                    promise("x", "n0", bad) + int_input("y") + ref("task_123") +
                    R"( } outputs { var: "wf_output" binding { promise { node_id: "n1"
                    var: "x" } } })");
    auto errs = errors_of(spec);
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].code == "SyntaxError");
    CHECK(errs[0].description == std::string("Failed to parse element [") + bad + "].");
  }
}

TEST_CASE("compiler: a repeated node id is dropped silently, the first node counts (AddNode)",
          "[compile][issue22]") {
  auto spec = workflow(R"(nodes { id: "n" )" + promise("x", "", "wf_input") + int_input("y") +
                       ref("task_123") + R"( } nodes { id: "n" )" + ref("task_123") +
                       R"( } outputs { var: "wf_output" binding { promise { node_id: "n"
                       var: "x" } } })");
  CHECK(errors_of(spec).empty());
  // Its references are still validated.
  spec.mutable_template_()->mutable_nodes(1)->mutable_task_node()->mutable_reference_id()->set_name(
      "gone");
  CHECK(codes(errors_of(spec)) == "TaskReferenceNotFound");
}

namespace {

// A branch node b (bound x = wf_input) running task `a` when x == 1, else task `b`; the
// workflow's output is b.o when `out` is set.
fa::WorkflowSpec branch(const std::string& a, const std::string& b,
                        const std::string& condition = R"(condition { comparison {
                            operator: EQ left_value { var: "x" }
                            right_value { primitive { integer: 1 } } } })") {
  return parse_textproto<fa::WorkflowSpec>(R"(template { id { resource_type: WORKFLOW project: "p"
      domain: "d" name: "repo" version: "v" }
    interface { inputs { variables { key: "wf_input" value { type { simple: INTEGER } } } } }
    nodes { id: "b" inputs { var: "x" binding { promise { var: "wf_input" } } }
      branch_node { if_else {
        case { )" + condition + R"( then_node { id: "a" )" +
                                           ref(a) + R"( } }
        else_node { id: "e" )" + ref(b) + R"( } } } } })");
}

References typed_refs() {
  References r = refs();
  auto out = [](const std::string& type) {
    return parse_textproto<fc::TypedInterface>("outputs { variables { key: \"o\" value { type { " +
                                               type + " } } } }");
  };
  r.tasks["p/d/str/v"] = out("simple: STRING");
  r.tasks["p/d/enum/v"] = out("enum_type { values: \"a\" }");
  r.tasks["p/d/csv/v"] = out("blob { format: \"csv\" }");
  r.tasks["p/d/blob/v"] = out("blob { }");
  r.tasks["p/d/meta/v"] =
      out("simple: STRING metadata { fields { key: \"k\" value { string_value: \"v\" } } }");
  return r;
}

}  // namespace

TEST_CASE("compiler: branch cases must give an output the very same type (validateVarType)",
          "[compile][issue22]") {
  CHECK(errors_of(branch("str", "str"), typed_refs()).empty());
  for (const auto& [a, b] : {std::pair{"str", "enum"}, {"csv", "blob"}, {"str", "meta"}}) {
    auto errs = errors_of(branch(a, b), typed_refs());
    INFO(a << " vs " << b);
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].code == "MismatchingTypes");
    CHECK(errs[0].node == "b-e");
  }
}

TEST_CASE("compiler: branch conditions need both operands, of one type, read from bound inputs",
          "[compile][issue22]") {
  auto r = typed_refs();
  // No condition at all.
  CHECK(codes(errors_of(branch("str", "str", ""), r)) == "BranchNodeHasNoCondition");
  // INTEGER input against a FLOAT constant.
  auto errs = errors_of(branch("str", "str", R"(condition { comparison { operator: GT
      left_value { var: "x" } right_value { primitive { float_value: 0.5 } } } })"),
                        r);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "MismatchingTypes");
  CHECK(errs[0].text == "node b case 1: the condition compares INTEGER with FLOAT");
  // A variable that is not bound to the branch node.
  errs = errors_of(branch("str", "str", R"(condition { comparison { operator: EQ
      left_value { var: "nope" } right_value { primitive { integer: 1 } } } })"),
                   r);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "VariableNameNotFound");
  // A missing operand, one in a conjunction.
  errs = errors_of(branch("str", "str", R"(condition { conjunction { operator: AND
      left_expression { comparison { left_value { var: "x" } } }
      right_expression { comparison { left_value { var: "x" } right_value { var: "x" } } } } })"),
                   r);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "ValueRequired");
  CHECK(errs[0].description == "Value required [RightValue].");
  // An operand with no value, and an expression with neither comparison nor conjunction.
  errs =
      errors_of(branch("str", "str",
                       R"(condition { comparison { left_value { } right_value { var: "x" } } })"),
                r);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].description == "Value required [LeftValue.Val].");
  CHECK(codes(errors_of(branch("str", "str", "condition { }"), r)) == "ValueRequired");
}

TEST_CASE("compiler: an attribute path into a STRUCT without a dataclass is typed as STRUCT",
          "[compile][issue22]") {
  auto spec = workflow(R"(nodes { id: "n0" )" + ref("s") +
                       R"( } nodes { id: "n1" inputs { var: "x" binding { promise {
                       node_id: "n0" var: "r" attr_path { string_value: "a" } } } } )" +
                       int_input("y") + ref("task_123") +
                       R"( } outputs { var: "wf_output" binding { promise { node_id: "n1"
                       var: "x" } } })");
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "MismatchingTypes");
  CHECK(errs[0].text == "node n1 input x: INTEGER is not castable from STRUCT (n0.r)");
}

TEST_CASE("compiler: interface variables need a type, a sub-workflow id given twice stops all",
          "[compile][issue22]") {
  auto spec = workflow(R"(nodes { id: "n" )" + promise("x", "", "wf_input") + int_input("y") +
                       ref("task_123") + R"( } outputs { var: "wf_output" binding { promise {
                       node_id: "n" var: "x" } } })");
  (*spec.mutable_template_()->mutable_interface()->mutable_inputs()->mutable_variables())["u"] =
      fc::Variable();
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "ValueRequired");
  CHECK(errs[0].node == "start-node");
  CHECK(errs[0].description == "Value required [param.Type].");

  // A task whose output has no type: the node's interface is refused where it is used.
  References r = refs();
  (*r.tasks["p/d/task_123/v"].mutable_outputs()->mutable_variables())["bad"] = fc::Variable();
  spec.mutable_template_()->mutable_interface()->mutable_inputs()->mutable_variables()->erase("u");
  errs = errors_of(spec, r);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].node == "n");
  CHECK(errs[0].text == "node n: task task_123 output bad has no type");

  spec = workflow(R"(nodes { id: "n" )" + promise("x", "", "wf_input") + int_input("y") +
                  ref("task_123") + R"( } outputs { var: "wf_output" binding { promise {
                  node_id: "n" var: "x" } } })");
  const auto sub =
      parse_textproto<fc::WorkflowTemplate>(R"(id { resource_type: WORKFLOW project: "p"
      domain: "d" name: "sub" version: "v" } nodes { id: "m" )" +
                                            ref("l") + " }");
  *spec.add_sub_workflows() = sub;
  CHECK(errors_of(spec).empty());
  *spec.add_sub_workflows() = sub;
  errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "DuplicateId");
}

TEST_CASE("compiler: a cycle and nodes nothing leads to are refused (validateReachable)",
          "[compile][issue22]") {
  // n1 waits for n2 and n2 for n1, both after the workflow's input: a cycle from start-node.
  auto spec = workflow(R"(nodes { id: "n1" )" + promise("x", "", "wf_input") +
                       promise("y", "n2", "x") + ref("task_123") + R"( }
      nodes { id: "n2" )" +
                       promise("x", "n1", "x") + int_input("y") + ref("task_123") +
                       R"( } outputs { var: "wf_output" binding { promise { node_id: "n2"
                       var: "x" } } })");
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "CycleDetected");
  CHECK(errs[0].description ==
        "A cycle has been detected while traversing the Workflow [start-node>n1>n2>n1].");

  // The same two nodes, neither reading the workflow's input: nothing leads to them.
  spec = workflow(R"(nodes { id: "n1" )" + int_input("x") + promise("y", "n2", "x") +
                  ref("task_123") + R"( } nodes { id: "n2" )" + promise("x", "n1", "x") +
                  int_input("y") + ref("task_123") +
                  R"( } outputs { var: "wf_output" binding { promise { node_id: "n2"
                  var: "x" } } })");
  errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "UnreachableNodes");
  CHECK(errs[0].description == "The Workflow contain unreachable nodes [n1,n2].");

  // An explicit upstream id that is no node.
  spec = workflow(R"(nodes { id: "n" upstream_node_ids: "ghost" )" + int_input("x") +
                  int_input("y") + ref("task_123") +
                  R"( } outputs { var: "wf_output" binding { promise { node_id: "n"
                  var: "x" } } })");
  CHECK(codes(errors_of(spec)) == "UnreachableNodes");
}

}  // namespace FLYTECD_UNITY_ID
