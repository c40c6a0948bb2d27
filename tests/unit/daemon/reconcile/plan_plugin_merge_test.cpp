// The planner against FlyteAdmin's project-domain PLUGIN_OVERRIDE merge quirk (plan.cpp
// merge_targets): a project-domain write goes through Delete + Update while workflow rows of its
// (project, domain) exist, and those rows are re-created after it.

#include <catch2/catch.hpp>

#include "daemon/reconcile/plan.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::reconcile;
namespace admin = flyteidl::admin;

namespace {
OverrideState plugins(const std::string& p, const std::string& d, const std::string& w,
                      const std::string& task_type) {
  OverrideState o;
  o.scope = model::Scope{p, d, w};
  o.type = admin::PLUGIN_OVERRIDE;
  auto* po = o.value.mutable_plugin_overrides()->add_overrides();
  po->set_task_type(task_type);
  po->add_plugin_id(task_type + "-plugin");
  return o;
}
std::string key(const OverrideState& o) { return override_key(o.scope, o.type); }
void put(State& s, const OverrideState& o) { s.overrides[key(o)] = o; }
void own(Managed& m, const OverrideState& o) { m[key(o)] = ManagedRecord{hash_of(o), "r1"}; }
const Step* find(const Plan& p, const std::string& k) {
  for (const auto& s : p.steps)
    if (s.key == k) return &s;
  return nullptr;
}
size_t index_of(const Plan& p, const std::string& k) {
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].key == k) return i;
  return p.steps.size();
}
}  // namespace

TEST_CASE(
    "plan: a new project-domain plugin override beside a live workflow row is written "
    "through a delete, and the workflow row re-created after it",
    "[plan][plugin_merge]") {
  State desired, live;
  Managed managed;
  const auto wf = plugins("p", "development", "wf", "ray");
  const auto pd = plugins("p", "development", "", "spark");
  put(live, wf);
  own(managed, wf);
  put(desired, wf);
  put(desired, pd);
  const auto plan_ = plan(desired, live, managed, Policy{});
  const Step* pd_step = find(plan_, key(pd));
  REQUIRE(pd_step);
  CHECK(pd_step->action == Action::replace);
  REQUIRE(pd_step->live);
  CHECK(pd_step->live->scope.domain == "development");
  CHECK(pd_step->live->scope.workflow.empty());
  CHECK(pd_step->reason.find("older workflow-level row") != std::string::npos);
  const Step* wf_step = find(plan_, key(wf));
  REQUIRE(wf_step);
  CHECK(wf_step->action == Action::create);
  CHECK(index_of(plan_, key(pd)) < index_of(plan_, key(wf)));

  // Another domain's workflow row, or another type, does not matter: a plain create.
  State other_live;
  put(other_live, plugins("p", "staging", "wf", "ray"));
  State other_desired = other_live;
  put(other_desired, pd);
  Managed other_managed;
  own(other_managed, plugins("p", "staging", "wf", "ray"));
  const auto plain = plan(other_desired, other_live, other_managed, Policy{});
  REQUIRE(find(plain, key(pd)));
  CHECK(find(plain, key(pd))->action == Action::create);
}

TEST_CASE("plan: a changed project-domain plugin override with workflow rows is replaced",
          "[plan][plugin_merge]") {
  State desired, live;
  Managed managed;
  const auto wf = plugins("p", "development", "wf", "ray");
  auto pd_old = plugins("p", "development", "", "spark");
  auto pd_new = plugins("p", "development", "", "spark");
  pd_new.value.mutable_plugin_overrides()->mutable_overrides(0)->add_plugin_id("fallback");
  for (const auto& o : {wf, pd_old}) {
    put(live, o);
    own(managed, o);
  }
  put(desired, wf);
  put(desired, pd_new);
  const auto plan_ = plan(desired, live, managed, Policy{});
  REQUIRE(find(plan_, key(pd_new)));
  CHECK(find(plan_, key(pd_new))->action == Action::replace);
  REQUIRE(find(plan_, key(wf)));
  CHECK(find(plan_, key(wf))->action == Action::create);

  // Without workflow rows it stays a plain update.
  State d2, l2;
  Managed m2;
  put(l2, pd_old);
  own(m2, pd_old);
  put(d2, pd_new);
  REQUIRE(find(plan(d2, l2, m2, Policy{}), key(pd_new)));
  CHECK(find(plan(d2, l2, m2, Policy{}), key(pd_new))->action == Action::update);
}

TEST_CASE("plan: an unmanaged workflow row is never deleted to write a project-domain row",
          "[plan][plugin_merge]") {
  State desired, live;
  const auto wf = plugins("p", "development", "wf", "ray");  // not managed, not in Git
  const auto pd = plugins("p", "development", "", "spark");
  put(live, wf);
  put(desired, pd);
  const auto plan_ = plan(desired, live, {}, Policy{});
  REQUIRE(find(plan_, key(pd)));
  CHECK(find(plan_, key(pd))->action == Action::create);
  CHECK(find(plan_, key(pd))->reason.find("may merge it into the workflow row") !=
        std::string::npos);
  CHECK(find(plan_, key(wf)) == nullptr);
  REQUIRE(plan_.unmanaged.size() == 1);

  // A managed row kept with prune off is not deleted either.
  Managed managed;
  own(managed, wf);
  Policy keep;
  keep.prune = false;
  const auto kept = plan(desired, live, managed, keep);
  CHECK(find(kept, key(pd))->action == Action::create);
}

}  // namespace FLYTECD_UNITY_ID
