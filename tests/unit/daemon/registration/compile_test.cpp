// Packages compiled as FlyteAdmin compiles their workflows, and launch-plan inputs checked as
// launch_plan_validator.go checkAndFetchExpectedInputForLaunchPlan does.
#include "daemon/registration/compile.hpp"

#include <google/protobuf/text_format.h>

#include <catch2/catch.hpp>

#include "tests/unit/daemon/registration/mismatch_package.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::registration;
using flytecd::testing::binding_mismatch_package;
using flytecd::testing::package_fixtures;
using flytecd::testing::read_bytes;
namespace fc = flyteidl::core;

namespace {

Package load(const std::string& file) {
  auto pkg = read_package(read_bytes(package_fixtures() / file), file);
  REQUIRE(pkg.ok());
  return std::move(*pkg);
}

Entity& entity(Package& pkg, EntityKind kind) {
  for (auto& e : pkg.entities)
    if (e.kind == kind) return e;
  FAIL("no such entity");
  throw;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

HydrateParams params() {
  HydrateParams p;
  p.project = "flytesnacks";
  p.domain = "development";
  p.version = "v1";
  return p;
}

}  // namespace

TEST_CASE("compile: every real package compiles, hydrated or not, without warnings", "[compile]") {
  for (const char* file : {"valid-register.tgz", "flyte-package.tgz", "flytesnacks-core.tgz",
                           "valid-fast-register.tgz"}) {
    INFO(file);
    Package pkg = load(file);
    auto report = compile_package(pkg, file);
    CHECK(joined(report.errors) == "");
    CHECK(joined(report.warnings) == "");
    CHECK(hydrate_and_compile(pkg, params(), file).ok());
    report = compile_package(pkg, file);
    CHECK(joined(report.errors) == "");
  }
}

TEST_CASE("compile: a binding type mismatch names package, workflow, node, input and types",
          "[compile]") {
  auto pkg = read_package(binding_mismatch_package(), "valid-register.tgz");
  REQUIRE(pkg.ok());
  auto report = compile_package(*pkg, "valid-register.tgz");
  REQUIRE(report.errors.size() == 1);
  CHECK(report.errors[0] ==
        "valid-register.tgz: workflow recipes.core.basic.basic_workflow.my_wf: node n1 input a: "
        "STRING is not castable from INTEGER (n0.t1_int_output)");
  auto s = hydrate_and_compile(*pkg, params(), "valid-register.tgz");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == flytecd::ErrorCode::invalid_input);
  CHECK_FALSE(s.error().retryable());
  CHECK_THAT(s.error().message,
             Catch::Contains("does not compile") &&
                 Catch::Contains("node n1 input a: STRING is not castable from INTEGER"));
}

TEST_CASE("compile: a task the package lacks is a warning, and its node is not checked",
          "[compile]") {
  Package pkg = load("valid-register.tgz");
  auto& wf = entity(pkg, EntityKind::workflow);
  wf.workflow.mutable_template_()
      ->mutable_nodes(0)
      ->mutable_task_node()
      ->mutable_reference_id()
      ->set_name("elsewhere.t1");
  auto report = compile_package(pkg, "p.tgz");
  CHECK(report.errors.empty());
  REQUIRE(report.warnings.size() == 1);
  CHECK(report.warnings[0] ==
        "p.tgz: workflow recipes.core.basic.basic_workflow.my_wf: node n0: task "
        "elsewhere.t1@{{ registration.version }} is not in the package; not checked (it must be "
        "registered already)");
}

TEST_CASE("compile: launch-plan default and fixed inputs against the workflow interface",
          "[compile]") {
  Package pkg = load("valid-register.tgz");
  auto& lp = entity(pkg, EntityKind::launch_plan);
  auto* spec = lp.launch_plan.mutable_spec();
  // The workflow takes a: INTEGER, b: STRING.
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      R"(parameters { key: "a" value { var { type { simple: STRING } } } }
         parameters { key: "zz" value { var { type { simple: STRING } } } })",
      spec->mutable_default_inputs()));
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      R"(literals { key: "b" value { scalar { primitive { integer: 4 } } } }
         literals { key: "yy" value { scalar { primitive { integer: 4 } } } })",
      spec->mutable_fixed_inputs()));
  auto report = compile_package(pkg, "p.tgz");
  const std::string lp_name = "p.tgz: launch plan " + lp.id().name() + ": ";
  CHECK(joined(report.errors) ==
        lp_name + "default input a: INTEGER is not castable from STRING\n" + lp_name +
            "default input zz: the workflow has no such input (inputs: a, b)\n" + lp_name +
            "fixed input b: STRING is not castable from INTEGER\n" + lp_name +
            "fixed input yy: the workflow has no such input (inputs: a, b)\n");

  spec->clear_default_inputs();
  spec->clear_fixed_inputs();
  CHECK(compile_package(pkg, "p.tgz").ok());
}

TEST_CASE("compile: a launch plan of a workflow outside the package is a warning", "[compile]") {
  Package pkg = load("valid-register.tgz");
  entity(pkg, EntityKind::launch_plan)
      .launch_plan.mutable_spec()
      ->mutable_workflow_id()
      ->set_name("other.wf");
  auto report = compile_package(pkg, "p.tgz");
  CHECK(report.errors.empty());
  REQUIRE(report.warnings.size() == 1);
  CHECK_THAT(report.warnings[0],
             Catch::Contains("workflow other.wf@") && Catch::Contains("is not in the package"));
}

}  // namespace FLYTECD_UNITY_ID
