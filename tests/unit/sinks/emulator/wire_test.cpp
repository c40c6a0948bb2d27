// The emulator's ListLaunchPlans writes each stored launch plan with its state and update time
// without decoding it: the bytes must be what decoding, setting and encoding again gives.
#include "sinks/emulator/wire.hpp"

#include <google/protobuf/util/message_differencer.h>
#include <catch2/catch.hpp>

#include "sinks/emulator/admin_common.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {
namespace fa = flyteidl::admin;
namespace fc = flyteidl::core;
using flytecd::sinks::emulator::launch_plan_with_state;

// What the emulator did before: decode, set the two closure fields, encode.
std::string decoded_way(const std::string& blob, int state, int64_t ms) {
  fa::LaunchPlan lp;
  REQUIRE(lp.ParseFromString(blob));
  lp.mutable_closure()->set_state(static_cast<fa::LaunchPlanState>(state));
  flytecd::sinks::emulator::detail::set_timestamp(lp.mutable_closure()->mutable_updated_at(), ms);
  return lp.SerializeAsString();
}

fa::LaunchPlan full_plan() {
  fa::LaunchPlan lp;
  auto* id = lp.mutable_id();
  id->set_resource_type(fc::LAUNCH_PLAN);
  id->set_project("flytesnacks");
  id->set_domain("development");
  id->set_name("core.flow.lp");
  id->set_version("v1");
  lp.mutable_spec()->mutable_workflow_id()->set_name("core.flow.wf");
  lp.mutable_spec()->mutable_labels()->mutable_values()->insert({"team", "ml"});
  auto* closure = lp.mutable_closure();
  closure->set_state(fa::ACTIVE);
  (*closure->mutable_expected_inputs()->mutable_parameters())["x"].set_required(true);
  (*closure->mutable_expected_outputs()->mutable_variables())["o0"].set_description("out");
  closure->mutable_created_at()->set_seconds(1700000000);
  closure->mutable_created_at()->set_nanos(5);
  closure->mutable_updated_at()->set_seconds(1700000001);
  return lp;
}

}  // namespace

TEST_CASE("emulator wire: a stored launch plan with its state and update time is the decoded one",
          "[emulator][wire]") {
  std::vector<std::pair<std::string, std::string>> blobs;
  const fa::LaunchPlan full = full_plan();
  blobs.emplace_back("every closure field set", full.SerializeAsString());
  fa::LaunchPlan no_closure = full;
  no_closure.clear_closure();
  blobs.emplace_back("no closure", no_closure.SerializeAsString());
  fa::LaunchPlan only_id;
  *only_id.mutable_id() = full.id();
  blobs.emplace_back("only an id", only_id.SerializeAsString());
  blobs.emplace_back("nothing", std::string());
  fa::LaunchPlan empty_closure = full;
  empty_closure.mutable_closure()->Clear();
  blobs.emplace_back("an empty closure", empty_closure.SerializeAsString());
  fa::LaunchPlan only_closure;
  only_closure.mutable_closure()->mutable_created_at()->set_seconds(3);
  blobs.emplace_back("only a closure", only_closure.SerializeAsString());
  // Fields this build does not know: protobuf keeps them and writes them after the known ones.
  fa::LaunchPlan unknown = full;
  unknown.GetReflection()->MutableUnknownFields(&unknown)->AddVarint(17, 4);
  unknown.mutable_closure()
      ->GetReflection()
      ->MutableUnknownFields(unknown.mutable_closure())
      ->AddLengthDelimited(9, "later");
  blobs.emplace_back("unknown fields", unknown.SerializeAsString());

  for (const auto& [what, blob] : blobs) {
    for (int state : {fa::INACTIVE, fa::ACTIVE, fa::LaunchPlanState(2)}) {
      for (int64_t ms :
           {int64_t{0}, int64_t{999}, int64_t{1000}, int64_t{1764979200123}, int64_t{-1500}}) {
        CAPTURE(what, state, ms);
        const auto edited = launch_plan_with_state(blob, state, ms);
        REQUIRE(edited);
        CHECK(*edited == decoded_way(blob, state, ms));
        fa::LaunchPlan got;
        REQUIRE(got.ParseFromString(*edited));
        CHECK(got.closure().state() == state);
        CHECK(got.closure().updated_at().seconds() == ms / 1000);
      }
    }
  }
}

TEST_CASE("emulator wire: bytes not in protobuf's own shape are left to the decoder",
          "[emulator][wire]") {
  const std::string blob = full_plan().SerializeAsString();
  CHECK(launch_plan_with_state(blob, 1, 5));
  // Truncated in the middle of a field.
  CHECK_FALSE(launch_plan_with_state(blob.substr(0, blob.size() - 3), 1, 5));
  // A closure written twice (a parser merges them; a copy would not).
  fa::LaunchPlan closure_only;
  closure_only.mutable_closure()->set_state(fa::ACTIVE);
  CHECK_FALSE(launch_plan_with_state(blob + closure_only.SerializeAsString(), 1, 5));
  // Fields out of order: the id after the closure.
  fa::LaunchPlan id_only;
  id_only.mutable_id()->set_name("late");
  CHECK_FALSE(launch_plan_with_state(blob + id_only.SerializeAsString(), 1, 5));
  // A closure that is not length-delimited (field 3 as a varint), and a group.
  CHECK_FALSE(launch_plan_with_state(std::string("\x18\x01", 2), 1, 5));
  CHECK_FALSE(launch_plan_with_state(std::string("\x0b\x0c", 2), 1, 5));
  // Inside the closure: truncated, or out of order.
  CHECK_FALSE(launch_plan_with_state(std::string("\x1a\x02\x08", 3), 1, 5));
  CHECK_FALSE(launch_plan_with_state(std::string("\x1a\x04\x22\x00\x12\x00", 6), 1, 5));
  // Each of these still decodes (or fails to) the long way; the wire edit never guesses.
  fa::LaunchPlan merged;
  CHECK(merged.ParseFromString(blob + closure_only.SerializeAsString()));
  CHECK(merged.closure().state() == fa::ACTIVE);
}

}  // namespace FLYTECD_UNITY_ID
