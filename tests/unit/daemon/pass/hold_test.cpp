// Suspended projects (daemon/pass/hold): planned like the others, nothing of theirs executed,
// while the other projects apply.
#include "daemon/pass/hold.hpp"

#include <catch2/catch.hpp>

#include "daemon/pass/pass.hpp"
#include "daemon/pass/views.hpp"
#include "tests/unit/daemon/pass/pass_fixtures.hpp"
#include "tests/unit/sinks/memory_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace admin = flyteidl::admin;

namespace {

using pass_test::documents;

pass::Report run(testing::MemorySink& sink, ledger::Ledger& ledger, const model::Documents& docs,
                 pass::HeldProjects held = {}) {
  auto o = pass_test::options(pass::Mode::execute);
  o.held = std::move(held);
  return pass_test::run_pass(sink, ledger, docs, o);
}

std::string label_key(const std::string& project) {
  return reconcile::override_key(model::Scope{project, "development", ""},
                                 admin::EXECUTION_CLUSTER_LABEL);
}

std::string label_of(const testing::MemorySink& sink, const std::string& project) {
  return sink.state().overrides.at(label_key(project)).value.execution_cluster_label().value();
}

}  // namespace

TEST_CASE("hold: the project of a key, and platform defaults are never held", "[hold]") {
  CHECK(pass::key_project("project/a") == "a");
  CHECK(pass::key_project("override/a/development/wf/TASK_RESOURCE") == "a");
  CHECK(pass::key_project("registration/a/development/etl") == "a");
  CHECK(pass::key_project("override//development//TASK_RESOURCE").empty());
  CHECK(pass::key_project("other/a").empty());
  const pass::HeldProjects held{"a"};
  CHECK(pass::is_held(held, "override/a///TASK_RESOURCE"));
  CHECK_FALSE(pass::is_held(held, "override/ab///TASK_RESOURCE"));
  CHECK_FALSE(pass::is_held(held, "override//development//TASK_RESOURCE"));
  CHECK_FALSE(pass::is_held({}, "project/a"));
  CHECK(pass::describe(pass::HeldProjects{"b", "a"}) == "a, b");
}

TEST_CASE("hold: registration items of held projects are split off, the observation kept",
          "[hold]") {
  registration::RegistrationPlan plan;
  for (const char* key : {"registration/a/development/x", "registration/b/development/y"}) {
    registration::PlanItem item;
    item.key = key;
    item.state = registration::ItemState::register_;
    plan.items.push_back(item);
  }
  auto held = pass::split_held(plan, {"a"});
  REQUIRE(held.items.size() == 1);
  CHECK(held.items[0].key == "registration/a/development/x");
  REQUIRE(plan.items.size() == 1);
  CHECK(plan.items[0].key == "registration/b/development/y");
}

TEST_CASE("hold: a suspended project is planned and not written while the others apply",
          "[hold][pass]") {
  testing::MemorySink sink;
  auto ledger = ledger::Ledger::open(":memory:");
  REQUIRE(ledger);
  REQUIRE(run(sink, **ledger, documents({"a", "b"}, "blue")).outcome == pass::Outcome::success);
  // Git changes both projects' label; a is suspended.
  auto r = run(sink, **ledger, documents({"a", "b"}, "green"), {"a"});
  CHECK(r.outcome == pass::Outcome::success);
  CHECK(label_of(sink, "a") == "blue");   // held: not written
  CHECK(label_of(sink, "b") == "green");  // applied
  CHECK(r.held_steps == 1);
  CHECK(r.plan.steps.size() == 2);  // the plan shows both
  const auto v = pass::apply_verdict(r);
  CHECK(v.exit_code == 0);
  CHECK(v.line == "converged (suspended: project a, 1 step(s) planned, not written)");
  bool seen = false;
  for (const auto& o : r.applied.objects)
    if (o.key == label_key("a")) {
      seen = true;
      CHECK(o.state == pass::ObjectState::pending);
      CHECK(o.detail == "project a suspended: update planned, not written");
    } else if (o.key == label_key("b")) {
      CHECK(o.state == pass::ObjectState::synced);
    }
  CHECK(seen);
  const auto j = pass::plan_json(r);
  CHECK(j["heldProjects"] == nlohmann::ordered_json::array({"a"}));
  // The ledger still says a was applied blue: resumed, the next pass writes it.
  auto resumed = run(sink, **ledger, documents({"a", "b"}, "green"));
  CHECK(resumed.outcome == pass::Outcome::success);
  CHECK(label_of(sink, "a") == "green");
  CHECK(pass::apply_verdict(resumed).line == "converged");
}

TEST_CASE("hold: drift of a suspended project is reported and left in place", "[hold][pass]") {
  testing::MemorySink sink;
  auto ledger = ledger::Ledger::open(":memory:");
  REQUIRE(ledger);
  const auto docs = documents({"a", "b"}, "blue");
  REQUIRE(run(sink, **ledger, docs).outcome == pass::Outcome::success);
  auto live = sink.state();
  for (const char* p : {"a", "b"})
    live.overrides.at(label_key(p)).value.mutable_execution_cluster_label()->set_value("red");
  sink.set_state(live);
  auto r = run(sink, **ledger, docs, {"a"});
  CHECK(r.outcome == pass::Outcome::success);
  CHECK(label_of(sink, "a") == "red");   // left in place
  CHECK(label_of(sink, "b") == "blue");  // healed
  REQUIRE(r.plan.drift.size() == 2);
  for (const auto& d : r.plan.drift) CHECK(d.healed == (d.key == label_key("b")));
}

}  // namespace FLYTECD_UNITY_ID
