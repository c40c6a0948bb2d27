// compile_task: FlyteAdmin's task compiler (flytepropeller pkg/compiler/task_compiler.go), the
// cases of its task_compiler_test.go and what validateK8sPod / validateContainerCommand refuse.
#include <google/protobuf/text_format.h>

#include <catch2/catch.hpp>

#include "sinks/workflow_compiler.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::sinks::compiler;
namespace fc = flyteidl::core;

namespace {

fc::TaskTemplate task(const std::string& text) {
  fc::TaskTemplate t;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      R"(id { resource_type: TASK project: "p" domain: "d" name: "t" version: "v" } )" + text, &t));
  return t;
}

const char* k_io = R"(interface { inputs { variables { key: "a" value {
    type { simple: INTEGER } } } } } )";

std::string pod(const std::string& containers) {
  return "k8s_pod { pod_spec { fields { key: \"containers\" value { list_value { " + containers +
         " } } } } }";
}

std::string named(const std::string& name) {
  return "values { struct_value { fields { key: \"name\" value { string_value: \"" + name +
         "\" } } } }";
}

}  // namespace

TEST_CASE("task compiler: a container with image and command compiles", "[compile][task]") {
  CHECK(
      compile_task(task(std::string(k_io) + R"(container { image: "img" args: "run" })")).empty());
  // No inputs or outputs: no command needed.
  CHECK(compile_task(task(R"(container { image: "img" })")).empty());
}

TEST_CASE("task compiler: inputs or outputs need a container command or args", "[compile][task]") {
  auto issues = compile_task(task(std::string(k_io) + R"(container { image: "img" })"));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].code == "ValueRequired");
  CHECK(issues[0].node == "container");
  CHECK(admin_text(issues) ==
        "Collected Errors: 1\n\tError 0: Code: ValueRequired, Node Id: container, Description: "
        "Value required [command].\n");
}

TEST_CASE("task compiler: a container needs an image, resources must be quantities",
          "[compile][task]") {
  auto issues = compile_task(task(R"(container { resources { requests { name: CPU value: "lots" }
                                         limits { name: MEMORY value: "1Gi" } } })"));
  REQUIRE(issues.size() == 2);
  CHECK(issues[0].description == "Value required [image].");
  CHECK(issues[1].code == "UnrecognizedValue");
  CHECK(issues[1].node == "resources.CPU");
  CHECK(issues[1].description == "Unrecognized value [lots].");
}

TEST_CASE("task compiler: pod containers need DNS-1123 label names", "[compile][task]") {
  CHECK(compile_task(task(pod(named("primary") + named("side-car")))).empty());
  auto issues = compile_task(task(pod("values { struct_value { } }")));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].code == "InvalidValue");
  CHECK(issues[0].description == "Invalid value [k8s pod spec container name].");
  CHECK(compile_task(task(pod(named("Primary")))).size() == 1);
  CHECK(compile_task(task(pod(named(std::string(64, 'a'))))).size() == 1);
  // Not a PodSpec at all.
  issues = compile_task(task(pod("values { string_value: \"x\" }")));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].description == "Invalid value [k8s pod spec].");
}

}  // namespace FLYTECD_UNITY_ID
