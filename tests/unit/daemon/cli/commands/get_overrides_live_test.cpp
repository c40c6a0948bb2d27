// `flytecd get overrides --live`: one scope's rows in FlyteAdmin beside Git's, type by type.
#include "daemon/cli/commands/get_overrides_live.hpp"

#include <catch2/catch.hpp>

#include "tests/unit/daemon/pass/pass_fixtures.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace admin = flyteidl::admin;

namespace {

reconcile::OverrideState queue(const model::Scope& scope, const std::string& tag) {
  reconcile::OverrideState o;
  o.scope = scope;
  o.type = admin::EXECUTION_QUEUE;
  o.value.mutable_execution_queue_attributes()->add_tags(tag);
  return o;
}

void put(reconcile::State& s, const reconcile::OverrideState& o) {
  s.overrides[reconcile::override_key(o.scope, o.type)] = o;
}

}  // namespace

TEST_CASE("get overrides --live: each type at exactly the scope, live beside Git",
          "[live-overrides]") {
  const model::Scope at{"p", "development", ""}, other{"p", "", ""};
  reconcile::State desired, live;
  auto git_queue = queue(at, "gpu");
  auto lines = std::make_shared<sinks::SourceLines>();
  lines->file = "projects/p/development.yaml";
  lines->line = 7;
  git_queue.source = lines;
  put(desired, git_queue);
  put(live, queue(at, "cpu"));
  put(desired, pass_test::label_state(at, "blue"));  // missing in FlyteAdmin
  put(live, pass_test::label_state(other, "red"));   // another scope: not shown
  const model::Scope wf{"p", "development", "wf"};
  put(live, pass_test::label_state(wf, "green"));  // another scope: not shown
  reconcile::Managed managed{{reconcile::override_key(at, admin::EXECUTION_QUEUE), {}}};
  const auto doc = cli::live_overrides_document(at, desired, live, managed);
  CHECK(doc["level"] == "project-domain");
  REQUIRE(doc["attributes"].size() == 2);
  const auto& q = doc["attributes"][0]["type"] == "EXECUTION_QUEUE" ? doc["attributes"][0]
                                                                    : doc["attributes"][1];
  const auto& l = doc["attributes"][0]["type"] == "EXECUTION_QUEUE" ? doc["attributes"][1]
                                                                    : doc["attributes"][0];
  CHECK(q["state"] == "differs");
  CHECK(q["managed"] == true);
  CHECK(q["source"] == "projects/p/development.yaml:7");
  CHECK(q["live"]["tags"] == nlohmann::ordered_json::array({"cpu"}));
  CHECK(q["git"]["tags"] == nlohmann::ordered_json::array({"gpu"}));
  REQUIRE(q["changes"].size() == 1);
  CHECK(q["changes"][0]["live"] == nlohmann::ordered_json::array({"cpu"}));
  CHECK(l["state"] == "git-only");
  CHECK(l["live"].is_null());
  CHECK(l["managed"] == false);

  auto d2 = desired;
  auto same = queue(at, "cpu");
  same.source = lines;
  put(d2, same);
  auto doc2 = cli::live_overrides_document(at, d2, live, managed);
  doc2["target"] = "flyteadmin x";
  doc2["revision"] = "abc";
  const auto text = cli::live_overrides_text(doc2);
  CHECK(text.find("# p/development (project-domain level) in flyteadmin x beside Git at abc") !=
        std::string::npos);
  CHECK(text.find("EXECUTION_QUEUE: in-sync (managed), Git projects/p/development.yaml:7\n") !=
        std::string::npos);
  CHECK(text.find("EXECUTION_CLUSTER_LABEL: git-only (not managed by flytecd)") !=
        std::string::npos);

  const auto only_live = cli::live_overrides_document(other, desired, live, managed);
  REQUIRE(only_live["attributes"].size() == 1);
  CHECK(only_live["attributes"][0]["state"] == "live-only");
  CHECK(only_live["level"] == "project");
}

}  // namespace FLYTECD_UNITY_ID
