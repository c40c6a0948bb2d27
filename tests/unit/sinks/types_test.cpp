#include "sinks/types.hpp"

#include <catch2/catch.hpp>
#include <type_traits>

#include "daemon/model/documents.hpp"
#include "daemon/reconcile/plan.hpp"
#include "daemon/reconcile/state.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

// The core computes with the very types the Sink interface carries (no conversion layer).
static_assert(std::is_same_v<reconcile::State, sinks::State>);
static_assert(std::is_same_v<reconcile::Step, sinks::Step>);
static_assert(std::is_same_v<reconcile::OverrideState, sinks::OverrideState>);
static_assert(std::is_same_v<model::Scope, sinks::Scope>);
static_assert(std::is_same_v<model::AttributeType, sinks::AttributeType>);

TEST_CASE("sink types: object keys name the scope and the attribute type", "[sinks]") {
  CHECK(sinks::project_key("flytesnacks") == "project/flytesnacks");
  CHECK(sinks::override_key(sinks::Scope{"p", "development", ""}, flyteidl::admin::TASK_RESOURCE) ==
        "override/p/development//TASK_RESOURCE");
  CHECK(sinks::to_string(sinks::Scope{"p", "d", "wf"}) == "p/d/wf");
  CHECK(sinks::Scope{"p", "d", "wf"}.level() == sinks::Level::workflow);
  CHECK(sinks::to_string(sinks::Action::remove) == "delete");
  CHECK(sinks::to_string(sinks::ObjectKind::override_attr) == "override");
}

TEST_CASE("sink types: every MatchingAttributes field maps to its attribute type and back",
          "[sinks]") {
  const auto all = sinks::all_attribute_types();
  CHECK(all.size() == 8);
  for (auto t : all) {
    const int field = sinks::field_of_attribute_type(t);
    REQUIRE(field != 0);
    CHECK(sinks::attribute_type_of_field(field) == t);
    CHECK(sinks::attribute_type_from_name(sinks::attribute_type_name(t)) == t);
    CHECK_FALSE(sinks::attribute_json_key(t).empty());
  }
}

TEST_CASE("field lines: set, replace and find by exact path", "[sinks]") {
  flytecd::sinks::FieldLines lines;
  CHECK(lines.empty());
  CHECK(lines.find("a") == 0);
  lines.set("taskResourceAttributes", 4);
  lines.set("taskResourceAttributes.defaults", 5);
  lines.set("taskResourceAttributes.defaults.cpu", 6);
  lines.set("taskResourceAttributes.defaults", 9);  // a later set replaces
  lines.shrink();
  CHECK(lines.size() == 3);
  CHECK(lines.find("taskResourceAttributes") == 4);
  CHECK(lines.find("taskResourceAttributes.defaults") == 9);
  CHECK(lines.find("taskResourceAttributes.defaults.cpu") == 6);
  CHECK(lines.find("taskResourceAttributes.default") == 0);  // a prefix is not a path
  CHECK(lines.find("taskResourceAttributes.defaults.cpux") == 0);
  CHECK(lines.find("") == 0);
}

}  // namespace FLYTECD_UNITY_ID
