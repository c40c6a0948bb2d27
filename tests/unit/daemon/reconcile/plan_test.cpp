#include <catch2/catch.hpp>

#include "daemon/reconcile/guard.hpp"
#include "daemon/reconcile/plan.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::reconcile;
namespace admin = flyteidl::admin;

namespace {
OverrideState label(const std::string& p, const std::string& d, const std::string& w,
                    const std::string& value) {
  OverrideState o;
  o.scope = model::Scope{p, d, w};
  o.type = admin::EXECUTION_CLUSTER_LABEL;
  o.value.mutable_execution_cluster_label()->set_value(value);
  return o;
}
OverrideState plugins(const std::string& p, std::vector<std::string> task_types) {
  OverrideState o;
  o.scope = model::Scope{p, "", ""};
  o.type = admin::PLUGIN_OVERRIDE;
  for (const auto& t : task_types) {
    auto* po = o.value.mutable_plugin_overrides()->add_overrides();
    po->set_task_type(t);
    po->add_plugin_id("x");
  }
  return o;
}
void put(State& s, const OverrideState& o) { s.overrides[override_key(o.scope, o.type)] = o; }
void own(Managed& m, const OverrideState& o) {
  m[override_key(o.scope, o.type)] = ManagedRecord{hash_of(o), "r1"};
}
const Step* find(const Plan& p, const std::string& key) {
  for (const auto& s : p.steps)
    if (s.key == key) return &s;
  return nullptr;
}
}  // namespace

TEST_CASE("plan: new objects are created, projects first", "[plan]") {
  State desired, live;
  desired.projects["p"] = ProjectState{"p", "P", "", {}, false};
  put(desired, label("p", "", "", "c1"));
  auto plan_ = plan(desired, live, {}, Policy{});
  REQUIRE(plan_.steps.size() == 2);
  CHECK(plan_.steps[0].kind == ObjectKind::project);
  CHECK(plan_.steps[0].action == Action::create);
  CHECK(plan_.steps[1].action == Action::create);
  CHECK(plan_.has_changes());
}

TEST_CASE(
    "plan: unchanged managed objects need nothing, equal unmanaged ones are adopted without RPCs",
    "[plan]") {
  State desired, live;
  auto o = label("p", "development", "", "c1");
  put(desired, o);
  put(live, o);
  auto adopt = plan(desired, live, {}, Policy{});
  REQUIRE(adopt.steps.size() == 1);
  CHECK(adopt.steps[0].action == Action::adopt);
  CHECK(adopt.steps[0].rpc_count() == 0);
  CHECK_FALSE(adopt.has_changes());
  Managed m;
  own(m, o);
  auto none = plan(desired, live, m, Policy{});
  CHECK(none.steps.empty());
  CHECK(none.in_sync == 1);
}

TEST_CASE("plan: drift is reported always and reverted only with self-heal", "[plan]") {
  State desired, live;
  auto want = label("p", "development", "", "c1");
  put(desired, want);
  put(live, label("p", "development", "", "changed-by-hand"));
  Managed m;
  own(m, want);
  Policy heal;
  auto healed = plan(desired, live, m, heal);
  REQUIRE(healed.drift.size() == 1);
  CHECK(healed.drift[0].healed);
  REQUIRE(healed.steps.size() == 1);
  CHECK(healed.steps[0].action == Action::update);
  CHECK(healed.steps[0].drift);
  Policy report_only;
  report_only.self_heal = false;
  auto reported = plan(desired, live, m, report_only);
  REQUIRE(reported.drift.size() == 1);
  CHECK_FALSE(reported.drift[0].healed);
  CHECK(reported.steps.empty());
}

TEST_CASE("plan: a Git change is applied even with self-heal off", "[plan]") {
  State desired, live;
  auto old_value = label("p", "development", "", "old");
  put(live, old_value);
  Managed m;
  own(m, old_value);
  put(desired, label("p", "development", "", "new"));
  Policy p;
  p.self_heal = false;
  auto out = plan(desired, live, m, p);
  REQUIRE(out.steps.size() == 1);
  CHECK(out.steps[0].action == Action::update);
  CHECK(out.drift.empty());
}

TEST_CASE("plan: unmanaged live rows are listed and never touched", "[plan]") {
  State desired, live;
  put(live, label("other", "", "", "theirs"));
  auto out = plan(desired, live, {}, Policy{});
  CHECK(out.steps.empty());
  REQUIRE(out.unmanaged.size() == 1);
}

TEST_CASE("plan: an archived project Git does not declare is not listed as unmanaged", "[plan]") {
  // flytecd archived data-eng when Git dropped it and forgot it: every later pass said
  // "? unmanaged project/data-eng (… never created by flytecd …)".
  State desired, live;
  ProjectState gone;
  gone.id = "data-eng";
  gone.name = "data-eng";
  gone.archived = true;
  live.projects["data-eng"] = gone;
  ProjectState theirs = gone;
  theirs.id = theirs.name = "theirs";
  theirs.archived = false;
  live.projects["theirs"] = theirs;
  auto out = plan(desired, live, {}, Policy{});
  CHECK(out.steps.empty());
  CHECK(out.unmanaged == std::vector<std::string>{"project/theirs"});
}

TEST_CASE("plan: override removed from Git is deleted only when we own it", "[plan]") {
  State desired, live;
  auto mine = label("p", "development", "", "c1");
  auto keep = label("p", "staging", "", "c2");
  put(live, mine);
  put(live, keep);
  put(desired, keep);
  Managed m;
  own(m, mine);
  own(m, keep);
  auto out = plan(desired, live, m, Policy{});
  REQUIRE(out.steps.size() == 1);
  CHECK(out.steps[0].action == Action::remove);
  CHECK(out.steps[0].key == override_key(mine.scope, mine.type));
  Policy no_prune;
  no_prune.prune = false;
  auto kept = plan(desired, live, m, no_prune);
  CHECK(kept.steps.empty());
  CHECK(kept.orphaned.size() == 1);
}

// One guard (reconcile/guard.hpp) over the plan's remove steps: the planner itself only plans.
TEST_CASE("plan: the guard over a plan refuses deleting too much or everything", "[plan]") {
  State desired, live;
  Managed m;
  for (int i = 0; i < 4; ++i) {
    auto o = label("p", "development", "wf" + std::to_string(i), "c");
    put(live, o);
    own(m, o);
  }
  auto verdict = [&](const Policy& policy) {
    auto p = plan(desired, live, m, policy);
    CHECK_FALSE(p.refused);  // planning never refuses; the guard does
    Policy prune_rules = policy;
    prune_rules.allow_empty = true;
    return guard_pass(guard_input(p, desired, 1, m, {}), prune_rules);
  };
  auto all = verdict(Policy{});
  CHECK(all.refused);
  CHECK(all.reason.find("4 of 4 managed overrides") != std::string::npos);
  put(desired, label("p", "development", "wf0", "c"));
  put(desired, label("p", "development", "wf1", "c"));
  CHECK_FALSE(verdict(Policy{}).refused);  // 2 of 4 = 50% is not more than 50%
  Policy strict;
  strict.max_prune_share = 0.25;
  CHECK(verdict(strict).refused);
  strict.allow_mass_prune = true;
  CHECK_FALSE(verdict(strict).refused);
}

TEST_CASE("plan: deleting a broad row re-creates the narrower rows FlyteAdmin cascades away",
          "[plan]") {
  State desired, live;
  auto broad = label("p", "", "", "project-wide");
  auto narrow = label("p", "development", "wf", "wf-specific");
  auto other_type = plugins("p", {"spark"});
  put(live, broad);
  put(live, narrow);
  put(live, other_type);
  put(desired, narrow);
  put(desired, other_type);
  Managed m;
  own(m, broad);
  own(m, narrow);
  own(m, other_type);
  auto out = plan(desired, live, m, Policy{});
  REQUIRE(out.steps.size() == 2);
  CHECK(out.steps[0].action == Action::remove);
  CHECK(out.steps[0].key == override_key(broad.scope, broad.type));
  CHECK(out.steps[1].action == Action::create);
  CHECK(out.steps[1].key == override_key(narrow.scope, narrow.type));
  CHECK(out.steps[1].reason.find("cascade") != std::string::npos);
  CHECK(find(out, override_key(other_type.scope, other_type.type)) ==
        nullptr);  // other types are untouched
}

TEST_CASE(
    "plan: a cascade takes the narrower rows of its own project only, not of projects "
    "whose names share its prefix",
    "[plan]") {
  // The live rows the plan simulates are an overlay on the observation, walked by the key prefix
  // "override/<project>/": "p" must not reach "p-1", "p2" or "pp", and the observation itself is
  // left as it was.
  State desired, live;
  auto broad = label("p", "", "", "project-wide");
  auto narrow = label("p", "development", "wf", "wf-specific");
  put(live, broad);
  put(live, narrow);
  put(desired, narrow);
  Managed m;
  own(m, broad);
  own(m, narrow);
  for (const std::string neighbour : {"p-1", "p2", "pp", "o"}) {
    auto row = label(neighbour, "development", "wf", "kept");
    put(live, row);
    put(desired, row);
    own(m, row);
  }
  const size_t observed = live.overrides.size();
  auto out = plan(desired, live, m, Policy{});
  CHECK(live.overrides.size() == observed);
  REQUIRE(out.steps.size() == 2);
  CHECK(out.steps[0].action == Action::remove);
  CHECK(out.steps[0].key == override_key(broad.scope, broad.type));
  REQUIRE(out.steps[0].live);
  CHECK(out.steps[0].live->value.execution_cluster_label().value() == "project-wide");
  CHECK(out.steps[1].action == Action::create);
  CHECK(out.steps[1].key == override_key(narrow.scope, narrow.type));
  CHECK(out.in_sync == 4);  // the neighbours' rows
  // Removed from Git too: the narrower row was cascaded away, so it is only forgotten.
  State none = desired;
  none.overrides.erase(override_key(narrow.scope, narrow.type));
  auto gone = plan(none, live, m, Policy{});
  REQUIRE(gone.steps.size() == 2);
  CHECK(gone.steps[1].key == override_key(narrow.scope, narrow.type));
  CHECK(gone.steps[1].reason == "removed from Git (already absent)");
  CHECK_FALSE(gone.steps[1].live);
}

TEST_CASE("plan: a step shares its values, so copying it copies no protobuf value", "[plan]") {
  State desired, live;
  put(desired, label("p", "development", "", "a"));
  auto out = plan(desired, live, Managed{}, Policy{});
  REQUIRE(out.steps.size() == 1);
  const Step copy = out.steps[0];
  CHECK(copy.desired.get() == out.steps[0].desired.get());
  CHECK(copy.desired->value.execution_cluster_label().value() == "a");
  // With the desired state shared, a step points into it and keeps it alive.
  auto shared = std::make_shared<const State>(desired);
  const std::string key = shared->overrides.begin()->first;
  const OverrideState* row = &shared->overrides.begin()->second;
  auto aliased = plan(shared, live, Managed{}, Policy{});
  REQUIRE(aliased.steps.size() == 1);
  CHECK(aliased.steps[0].desired.get() == row);
  std::weak_ptr<const State> watch = shared;
  shared.reset();
  CHECK_FALSE(watch.expired());
  CHECK(aliased.steps[0].desired->value.execution_cluster_label().value() == "a");
  aliased.steps.clear();
  CHECK(watch.expired());
  CHECK(key == override_key(model::Scope{"p", "development", ""}, admin::EXECUTION_CLUSTER_LABEL));
}

TEST_CASE("plan: plugin overrides Git dropped need delete + update, since Update merges",
          "[plan]") {
  State desired, live;
  auto have = plugins("p", {"spark", "ray"});
  auto want = plugins("p", {"spark"});
  put(live, have);
  put(desired, want);
  Managed m;
  own(m, have);
  auto out = plan(desired, live, m, Policy{});
  REQUIRE(out.steps.size() == 1);
  CHECK(out.steps[0].action == Action::replace);
  CHECK(out.steps[0].rpc_count() == 2);
  // Adding a task type only needs the (merging) update.
  State grow;
  put(grow, plugins("p", {"spark", "ray", "dask"}));
  auto add = plan(grow, live, m, Policy{});
  REQUIRE(add.steps.size() == 1);
  CHECK(add.steps[0].action == Action::update);
}

TEST_CASE("plan: projects removed from Git are archived when owned, never deleted", "[plan]") {
  State desired, live;
  live.projects["old"] = ProjectState{"old", "Old", "", {}, false};
  live.projects["theirs"] = ProjectState{"theirs", "T", "", {}, false};
  desired.projects["keep"] = ProjectState{"keep", "K", "", {}, false};
  live.projects["keep"] = desired.projects["keep"];
  Managed m;
  m[project_key("old")] = ManagedRecord{hash_of(live.projects["old"]), "r"};
  m[project_key("keep")] = ManagedRecord{hash_of(live.projects["keep"]), "r"};
  auto out = plan(desired, live, m, Policy{});
  REQUIRE(out.steps.size() == 1);
  CHECK(out.steps[0].action == Action::remove);
  CHECK(out.steps[0].project->id == "old");
  CHECK(out.unmanaged == std::vector<std::string>{project_key("theirs")});
}

}  // namespace FLYTECD_UNITY_ID
