// Flyte's type castability and the workflow compiler's error kinds (flytepropeller
// pkg/compiler/validators: typing.go, bindings.go, node.go, branch.go), on protos built by hand.
#include "sinks/workflow_compiler.hpp"
#include "tests/unit/sinks/textproto.hpp"

#include <google/protobuf/text_format.h>

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::sinks::compiler;
namespace fa = flyteidl::admin;
namespace fc = flyteidl::core;

namespace {

using flytecd_test::parse_textproto;

fc::LiteralType lt(const std::string& text) { return parse_textproto<fc::LiteralType>(text); }

bool casts(const std::string& up, const std::string& down) { return castable(lt(up), lt(down)); }

const char* k_int = "simple: INTEGER";
const char* k_str = "simple: STRING";
const char* k_float = "simple: FLOAT";
const char* k_none = "simple: NONE";

// A task t1 (a: INTEGER -> c: STRING, o: INTEGER) and t2 (a: STRING, b: Optional[STRING] -> o0:
// STRING), and a workflow (a: INTEGER -> out: STRING) whose nodes the tests fill in.
References refs() {
  References r;
  r.tasks["p/d/t1/v"] = parse_textproto<fc::TypedInterface>(R"(
    inputs { variables { key: "a" value { type { simple: INTEGER } } } }
    outputs { variables { key: "c" value { type { simple: STRING } } }
              variables { key: "o" value { type { simple: INTEGER } } } })");
  r.tasks["p/d/t2/v"] = parse_textproto<fc::TypedInterface>(R"(
    inputs { variables { key: "a" value { type { simple: STRING } } }
             variables { key: "b" value { type { union_type { variants { simple: STRING }
                                                              variants { simple: NONE } } } } } }
    outputs { variables { key: "o0" value { type { simple: STRING } } } })");
  return r;
}

std::string task_node(const std::string& id, const std::string& task, const std::string& inputs) {
  return "nodes { id: \"" + id + "\" " + inputs +
         " task_node { reference_id { resource_type: TASK project: \"p\" domain: \"d\" name: \"" +
         task + "\" version: \"v\" } } }";
}

std::string promise(const std::string& var, const std::string& node, const std::string& out) {
  return "inputs { var: \"" + var + "\" binding { promise { node_id: \"" + node + "\" var: \"" +
         out + "\" } } }";
}

fa::WorkflowSpec workflow(const std::string& nodes, const std::string& outputs) {
  return parse_textproto<fa::WorkflowSpec>(R"(template { id { resource_type: WORKFLOW project: "p"
      domain: "d" name: "wf" version: "v" }
    interface { inputs { variables { key: "a" value { type { simple: INTEGER } } } }
                outputs { variables { key: "out" value { type { simple: STRING } } } } } )" +
                                           nodes + " " + outputs + " }");
}

const std::string k_out_from_n1 = R"(outputs { var: "out" binding { promise { node_id: "n1"
    var: "o0" } } })";

std::vector<Issue> errors_of(const fa::WorkflowSpec& spec, const References& r = refs()) {
  std::vector<Issue> out;
  for (auto& i : compile_workflow(spec, r))
    if (!i.warning) out.push_back(i);
  return out;
}

}  // namespace

TEST_CASE("compiler: simple types cast only to themselves", "[compile]") {
  CHECK(casts(k_int, k_int));
  CHECK_FALSE(casts(k_int, k_str));
  CHECK_FALSE(casts(k_int, k_float));
  CHECK_FALSE(casts(k_str, k_int));
  // Metadata and annotations never take part.
  CHECK(casts("simple: INTEGER metadata { fields { key: \"x\" value { string_value: \"y\" } } }",
              k_int));
}

TEST_CASE("compiler: NONE casts only to NONE, optionals and structured datasets", "[compile]") {
  CHECK(casts(k_none, k_none));
  CHECK_FALSE(casts(k_int, k_none));
  CHECK_FALSE(casts(k_none, k_int));
  CHECK(casts(k_none, "union_type { variants { simple: INTEGER } variants { simple: NONE } }"));
  CHECK(casts(k_none, "structured_dataset_type { format: \"parquet\" }"));
}

TEST_CASE("compiler: unions pick exactly one variant, union to union needs every variant",
          "[compile]") {
  const std::string opt_int =
      "union_type { variants { simple: INTEGER } variants { simple: NONE } }";
  CHECK(casts(k_int, opt_int));
  CHECK_FALSE(casts(k_str, opt_int));
  // Ambiguous: two variants take an INTEGER.
  CHECK_FALSE(casts(k_int,
                    "union_type { variants { simple: INTEGER } variants { simple: INTEGER "
                    "} }"));
  CHECK(casts("union_type { variants { simple: INTEGER } }", opt_int));
  CHECK(casts("union_type { variants { simple: INTEGER } variants { simple: NONE } }",
              "union_type { variants { simple: NONE } variants { simple: INTEGER } "
              "variants { simple: STRING } }"));
  CHECK_FALSE(
      casts("union_type { variants { simple: INTEGER } variants { simple: FLOAT } }", opt_int));
  // A union of one variant is consumed as that variant; a wider union is not.
  CHECK(casts("union_type { variants { simple: INTEGER } }", k_int));
  CHECK_FALSE(casts(opt_int, k_int));
}

TEST_CASE("compiler: collections and maps cast element-wise, empty ones fit any", "[compile]") {
  CHECK(casts("collection_type { simple: INTEGER }", "collection_type { simple: INTEGER }"));
  CHECK_FALSE(casts("collection_type { simple: INTEGER }", "collection_type { simple: STRING }"));
  CHECK(casts("collection_type { simple: NONE }", "collection_type { simple: STRING }"));
  CHECK_FALSE(casts(k_int, "collection_type { simple: INTEGER }"));
  CHECK_FALSE(casts("collection_type { simple: INTEGER }", k_int));
  CHECK(casts("collection_type { collection_type { simple: FLOAT } }",
              "collection_type { collection_type { simple: FLOAT } }"));
  CHECK(casts("map_value_type { simple: FLOAT }", "map_value_type { simple: FLOAT }"));
  CHECK_FALSE(casts("map_value_type { simple: FLOAT }", "map_value_type { simple: INTEGER }"));
  CHECK(casts("map_value_type { simple: NONE }", "map_value_type { simple: INTEGER }"));
  CHECK_FALSE(casts("collection_type { simple: FLOAT }", "map_value_type { simple: FLOAT }"));
}

TEST_CASE("compiler: blobs cast when formats match or either is generic", "[compile]") {
  CHECK(casts("blob { format: \"csv\" }", "blob { format: \"csv\" }"));
  CHECK_FALSE(casts("blob { format: \"csv\" }", "blob { format: \"parquet\" }"));
  CHECK(casts("blob { }", "blob { format: \"csv\" }"));
  CHECK(casts("blob { format: \"csv\" }", "blob { }"));
  CHECK_FALSE(casts(k_str, "blob { }"));
}

TEST_CASE("compiler: enums and strings cast both ways, enums compare their values", "[compile]") {
  const std::string e = "enum_type { values: \"a\" values: \"b\" }";
  CHECK(casts(e, k_str));
  CHECK(casts(k_str, e));
  CHECK(casts(e, e));
  CHECK_FALSE(casts(e, "enum_type { values: \"a\" }"));
  CHECK_FALSE(casts(e, k_int));
}

TEST_CASE("compiler: schemas and structured datasets cast on a subset of columns", "[compile]") {
  const std::string sd_ab = R"(structured_dataset_type { format: "parquet"
      columns { name: "a" literal_type { simple: INTEGER } }
      columns { name: "b" literal_type { simple: STRING } } })";
  const std::string sd_a = R"(structured_dataset_type { columns { name: "a"
      literal_type { simple: INTEGER } } })";
  const std::string sd_a_str = R"(structured_dataset_type { columns { name: "a"
      literal_type { simple: STRING } } })";
  CHECK(casts(sd_ab, sd_a));
  CHECK_FALSE(casts(sd_a, sd_ab));
  CHECK_FALSE(casts(sd_ab, sd_a_str));
  CHECK(casts(sd_ab, "structured_dataset_type { }"));
  CHECK_FALSE(casts("structured_dataset_type { format: \"csv\" }",
                    "structured_dataset_type { format: \"parquet\" }"));
  CHECK(casts("structured_dataset_type { format: \"CSV\" }",
              "structured_dataset_type { format: \"csv\" }"));
  const std::string schema_a = "schema { columns { name: \"a\" type: INTEGER } }";
  CHECK(casts(schema_a, "schema { }"));
  CHECK(casts(schema_a, schema_a));
  CHECK_FALSE(casts(schema_a, "schema { columns { name: \"a\" type: STRING } }"));
  CHECK(casts(schema_a, sd_a));   // schema -> structured dataset
  CHECK(casts(sd_ab, schema_a));  // structured dataset -> schema
  CHECK_FALSE(casts("structured_dataset_type { format: \"csv\" }", schema_a));
  CHECK_FALSE(casts(k_str, schema_a));
}

TEST_CASE("compiler: a type tag must match, structs cast to structs", "[compile]") {
  CHECK_FALSE(
      casts("simple: STRUCT structure { tag: \"A\" }", "simple: STRUCT structure { tag: \"B\" }"));
  CHECK(
      casts("simple: STRUCT structure { tag: \"A\" }", "simple: STRUCT structure { tag: \"A\" }"));
  CHECK(casts("simple: STRUCT", "simple: STRUCT"));
  CHECK_FALSE(casts("simple: STRUCT", k_str));
}

TEST_CASE("compiler: a literal's type is inferred as FlyteAdmin does", "[compile]") {
  auto t = type_of(parse_textproto<fc::Literal>("scalar { primitive { integer: 3 } }"));
  REQUIRE(t);
  CHECK(type_text(*t) == "INTEGER");
  t = type_of(parse_textproto<fc::Literal>(
      "collection { literals { scalar { primitive { string_value: \"x\" } } } }"));
  REQUIRE(t);
  CHECK(type_text(*t) == "List[STRING]");
  t = type_of(parse_textproto<fc::Literal>("collection { }"));
  REQUIRE(t);
  CHECK(type_text(*t) == "List[NONE]");
  CHECK(castable(*t, lt("collection_type { simple: FLOAT }")));
  t = type_of(parse_textproto<fc::Literal>(R"(map { literals { key: "k" value { scalar { primitive {
      float_value: 1 } } } } literals { key: "j" value { scalar { primitive { integer: 1 } } } } })"));
  REQUIRE(t);
  // Variants in the order of their prototext, as literalTypeForLiterals sorts them.
  CHECK(type_text(*t) == "Dict[str, Union[FLOAT, INTEGER]]");
  CHECK_FALSE(type_of(parse_textproto<fc::Literal>("scalar { blob { uri: \"s3://x\" } }")));
}

TEST_CASE("compiler: a workflow whose bindings all fit compiles", "[compile]") {
  auto spec = workflow(
      task_node("n0", "t1", promise("a", "", "a")) + task_node("n1", "t2", promise("a", "n0", "c")),
      k_out_from_n1);
  CHECK(compile_workflow(spec, refs()).empty());
}

TEST_CASE("compiler: a promise of the wrong type names node, input, both types and source",
          "[compile]") {
  auto spec = workflow(
      task_node("n0", "t1", promise("a", "", "a")) + task_node("n1", "t2", promise("a", "n0", "o")),
      k_out_from_n1);
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "node n1 input a: STRING is not castable from INTEGER (n0.o)");
  CHECK(errs[0].code == "MismatchingTypes");
  CHECK(errs[0].node == "n1");
  CHECK(admin_text(errs).rfind("Collected Errors: 1\n\tError 0: Code: MismatchingTypes, Node Id: "
                               "n1, Description: The output variable 'n0.o' has type "
                               "[simple:INTEGER]",
                               0) == 0);
}

TEST_CASE("compiler: workflow inputs are the start node's outputs", "[compile]") {
  // t2.a is a STRING; the workflow's a is an INTEGER.
  auto spec = workflow(task_node("n1", "t2", promise("a", "", "a")), k_out_from_n1);
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "node n1 input a: STRING is not castable from INTEGER (a)");
  spec = workflow(task_node("n1", "t2", promise("a", "", "zz")), k_out_from_n1);
  errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "node n1 input a: the workflow has no input zz (inputs: a)");
}

TEST_CASE("compiler: unknown nodes, outputs and inputs, unbound and twice-bound inputs",
          "[compile]") {
  auto errs = errors_of(workflow(task_node("n1", "t2", promise("a", "n9", "o0")), k_out_from_n1));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "NodeReferenceNotFound");
  CHECK(errs[0].text == "node n1 input a: no node n9 (n9.o0)");

  errs = errors_of(workflow(task_node("n0", "t1", promise("a", "", "a")) +
                                task_node("n1", "t2", promise("a", "n0", "nope")),
                            k_out_from_n1));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "node n1 input a: n0 has no output nope (outputs: c, o)");

  errs = errors_of(
      workflow(task_node("n0", "t1", promise("a", "", "a") + promise("x", "", "a")),
               R"(outputs { var: "out" binding { promise { node_id: "n0" var: "c" } } })"));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "VariableNameNotFound");
  CHECK(errs[0].text == "node n0 input x: no such input (inputs: a)");

  // t2's b is optional, a is not.
  errs = errors_of(workflow(task_node("n1", "t2", ""), k_out_from_n1));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "ParameterNotBound");
  CHECK(errs[0].text == "node n1 input a: not bound (STRING)");

  errs = errors_of(
      workflow(task_node("n0", "t1", promise("a", "", "a") + promise("a", "", "a")),
               R"(outputs { var: "out" binding { promise { node_id: "n0" var: "c" } } })"));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "ParameterBoundMoreThanOnce");
}

TEST_CASE("compiler: the workflow's outputs are checked like a node's inputs", "[compile]") {
  auto errs = errors_of(workflow(task_node("n0", "t1", promise("a", "", "a")),
                                 R"(outputs { var: "out" binding { promise { node_id: "n0"
                                    var: "o" } } })"));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "output out: STRING is not castable from INTEGER (n0.o)");
  CHECK(errs[0].node == "end-node");
  errs = errors_of(workflow(task_node("n0", "t1", promise("a", "", "a")), ""));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "output out: not bound (STRING)");
}

TEST_CASE("compiler: literals, lists and maps bound to inputs are typed", "[compile]") {
  auto spec = workflow(task_node("n0", "t1",
                                 R"(inputs { var: "a" binding { scalar { primitive {
                                     string_value: "x" } } } })"),
                       R"(outputs { var: "out" binding { promise { node_id: "n0" var: "c" } } })");
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "node n0 input a: INTEGER is not castable from STRING (a literal)");

  spec = workflow(task_node("n0", "t1",
                            R"(inputs { var: "a" binding { collection { bindings { promise {
                                var: "a" } } } } })"),
                  R"(outputs { var: "out" binding { promise { node_id: "n0" var: "c" } } })");
  errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "MismatchingBindings");
  CHECK(errs[0].text == "node n0 input a: INTEGER is not castable from a bound list");

  // A list of promises bound to a List[STRING] output: each element is checked.
  spec = parse_textproto<fa::WorkflowSpec>(R"(template {
      interface { inputs { variables { key: "a" value { type { simple: INTEGER } } } }
                  outputs { variables { key: "out" value { type { collection_type {
                      simple: STRING } } } } } }
      nodes { id: "n0" inputs { var: "a" binding { promise { var: "a" } } }
              task_node { reference_id { resource_type: TASK project: "p" domain: "d"
                                         name: "t1" version: "v" } } }
      outputs { var: "out" binding { collection {
          bindings { promise { node_id: "n0" var: "c" } }
          bindings { promise { node_id: "n0" var: "o" } } } } } })");
  errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "output out: STRING is not castable from INTEGER (n0.o)");
}

TEST_CASE("compiler: missing task and sub-workflow references, incomplete references warn",
          "[compile]") {
  auto spec = workflow(task_node("n0", "gone", promise("a", "", "a")),
                       R"(outputs { var: "out" binding { promise { node_id: "n0" var: "c" } } })");
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "TaskReferenceNotFound");
  CHECK(errs[0].text == "node n0: task gone@v not found");
  References r = refs();
  r.complete = false;
  auto all = compile_workflow(spec, r);
  REQUIRE(all.size() == 1);
  CHECK(all[0].warning);

  spec = workflow(R"(nodes { id: "s" workflow_node { sub_workflow_ref { resource_type: WORKFLOW
                      name: "sub" version: "v" } } })",
                  R"(outputs { var: "out" binding { promise { node_id: "s" var: "x" } } })");
  errs = errors_of(spec, r);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "WorkflowReferenceNotFound");
}

TEST_CASE("compiler: sub-workflows are compiled and expose their interface", "[compile]") {
  auto spec = workflow(R"(nodes { id: "s" inputs { var: "a" binding { promise { var: "a" } } }
                      workflow_node { sub_workflow_ref { resource_type: WORKFLOW
                      project: "p" domain: "d" name: "sub" version: "v" } } })",
                       R"(outputs { var: "out" binding { promise { node_id: "s" var: "x" } } })");
  *spec.add_sub_workflows() = parse_textproto<fc::WorkflowTemplate>(R"(
      id { resource_type: WORKFLOW project: "p" domain: "d" name: "sub" version: "v" }
      interface { inputs { variables { key: "a" value { type { simple: INTEGER } } } }
                  outputs { variables { key: "x" value { type { simple: INTEGER } } } } }
      nodes { id: "m" inputs { var: "a" binding { promise { var: "a" } } }
              task_node { reference_id { resource_type: TASK project: "p" domain: "d"
                                         name: "t2" version: "v" } } }
      outputs { var: "x" binding { promise { node_id: "m" var: "o0" } } })");
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 3);
  CHECK(errs[0].text ==
        "sub-workflow sub: node m input a: STRING is not castable from INTEGER (a)");
  CHECK(errs[1].text == "sub-workflow sub: output x: INTEGER is not castable from STRING (m.o0)");
  CHECK(errs[2].text == "output out: STRING is not castable from INTEGER (s.x)");
}

TEST_CASE("compiler: launch plan nodes expose required inputs and the workflow's outputs",
          "[compile]") {
  References r = refs();
  r.launch_plans["p/d/lp/v"] =
      LaunchPlanInterface{parse_textproto<fc::ParameterMap>(
                              R"(parameters { key: "x" value { var { type { simple: STRING } }
                                   required: true } }
                                 parameters { key: "y" value { var { type { simple: INTEGER } }
                                   default { scalar { primitive { integer: 1 } } } } })"),
                          parse_textproto<fc::VariableMap>(
                              R"(variables { key: "r" value { type { simple: STRING } } })")};
  auto spec = workflow(R"(nodes { id: "l" inputs { var: "y" binding { promise { var: "a" } } }
                      workflow_node { launchplan_ref { resource_type: LAUNCH_PLAN
                      project: "p" domain: "d" name: "lp" version: "v" } } })",
                       R"(outputs { var: "out" binding { promise { node_id: "l" var: "r" } } })");
  auto errs = errors_of(spec, r);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "node l input x: not bound (STRING)");
}

TEST_CASE("compiler: branch nodes need a case and an else, their nodes are checked", "[compile]") {
  const std::string then_ok = task_node("t", "t2", promise("a", "n0", "c"));
  const std::string then_bad = task_node("e", "t2", promise("a", "n0", "o"));
  auto strip = [](std::string s) { return s.substr(std::string("nodes ").size()); };
  auto spec = workflow(task_node("n0", "t1", promise("a", "", "a")) +
                           R"(nodes { id: "b" branch_node { if_else {
                               case { condition { comparison { left_value { primitive { integer: 1 } }
                               right_value { primitive { integer: 1 } } } } then_node )" +
                           strip(then_ok) + R"( }
                               else_node )" +
                           strip(then_bad) + R"( } } })",
                       R"(outputs { var: "out" binding { promise { node_id: "b" var: "o0" } } })");
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "node b-e input a: STRING is not castable from INTEGER (n0.o)");

  spec = workflow(
      task_node("n0", "t1", promise("a", "", "a")) +
          R"(nodes { id: "b" branch_node { if_else { case { condition { comparison { left_value { primitive { integer: 1 } }
                               right_value { primitive { integer: 1 } } } } then_node )" +
          strip(then_ok) + R"( } } } })",
      R"(outputs { var: "out" binding { promise { node_id: "b" var: "o0" } } })");
  errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "BranchNodeHasNoDefault");

  spec = workflow(R"(nodes { id: "b" branch_node { if_else { error { message: "no" } } } })", "");
  errs = errors_of(spec);
  REQUIRE(errs.size() == 2);
  CHECK(errs[0].code == "BranchNodeHasNoCondition");
  CHECK(errs[1].text == "output out: not bound (STRING)");
}

TEST_CASE("compiler: the failure node is checked, no nodes, no target, repeated ids", "[compile]") {
  auto spec = workflow(task_node("n0", "t1", promise("a", "", "a")),
                       R"(outputs { var: "out" binding { promise { node_id: "n0" var: "c" } } })");
  *spec.mutable_template_()->mutable_failure_node() = parse_textproto<fc::Node>(
      R"(id: "fn" inputs { var: "a" binding { promise { var: "a" } } }
         task_node { reference_id { resource_type: TASK project: "p" domain: "d" name: "t2"
                                    version: "v" } })");
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "failure node fn input a: STRING is not castable from INTEGER (a)");

  errs = errors_of(workflow("", ""));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "NoNodesFound");

  errs = errors_of(workflow(R"(nodes { id: "x" })", ""));
  REQUIRE(errs.size() == 2);
  CHECK(errs[0].code == "ValueRequired");

  // FlyteAdmin's AddNode keeps the first of two nodes with one id (see
  // workflow_compiler_graph_test.cpp).
  errs = errors_of(workflow(
      task_node("n0", "t1", promise("a", "", "a")) + task_node("n0", "t1", promise("a", "", "a")),
      R"(outputs { var: "out" binding { promise { node_id: "n0" var: "c" } } })"));
  CHECK(errs.empty());
}

TEST_CASE("compiler: a literal bound to an enum must be one of its values", "[compile]") {
  References r;
  r.tasks["p/d/t/v"] = parse_textproto<fc::TypedInterface>(R"(inputs { variables { key: "e" value {
      type { enum_type { values: "red" values: "blue" } } } } })");
  auto spec = parse_textproto<fa::WorkflowSpec>(R"(template {
      nodes { id: "n" inputs { var: "e" binding { scalar { primitive { string_value: "green" } } } }
              task_node { reference_id { resource_type: TASK project: "p" domain: "d" name: "t"
                                         version: "v" } } } })");
  auto errs = errors_of(spec, r);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "IllegalEnumValue");
  CHECK(errs[0].text == "node n input e: 'green' is not one of Enum[red, blue]");
}

TEST_CASE("compiler: gate nodes expose a signal's type and pass approved inputs through",
          "[compile]") {
  auto spec = workflow(R"(nodes { id: "g" gate_node { signal { signal_id: "s"
                          type { simple: INTEGER } output_variable_name: "o" } } })" +
                           task_node("n1", "t2", promise("a", "g", "o")),
                       k_out_from_n1);
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "node n1 input a: STRING is not castable from INTEGER (g.o)");

  spec = workflow(task_node("n0", "t1", promise("a", "", "a")) +
                      R"(nodes { id: "g" inputs { var: "x" binding { promise { node_id: "n0"
                          var: "o" } } } gate_node { approve { signal_id: "ok" } } })" +
                      task_node("n1", "t2", promise("a", "g", "x")),
                  k_out_from_n1);
  errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].text == "node n1 input a: STRING is not castable from INTEGER (g.x)");

  errs = errors_of(workflow(R"(nodes { id: "g" gate_node { } })", ""));
  REQUIRE(errs.size() == 2);
  CHECK(errs[0].code == "NoConditionFound");
}

TEST_CASE("compiler: array nodes check their inner node's references, not its typing",
          "[compile]") {
  auto spec = workflow(R"(nodes { id: "m" inputs { var: "a" binding { promise { var: "a" } } }
                          array_node { node { id: "inner" task_node { reference_id {
                          resource_type: TASK project: "p" domain: "d" name: "t2"
                          version: "v" } } } } })",
                       R"(outputs { var: "out" binding { promise { node_id: "m" var: "o0" } } })");
  CHECK(errors_of(spec).empty());
  spec.mutable_template_()
      ->mutable_nodes(0)
      ->mutable_array_node()
      ->mutable_node()
      ->mutable_task_node()
      ->mutable_reference_id()
      ->set_name("gone");
  auto errs = errors_of(spec);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].code == "TaskReferenceNotFound");
}

}  // namespace FLYTECD_UNITY_ID
