#include <catch2/catch.hpp>

#include "daemon/pass/pass.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {

ledger::RegistrationRecord record(const std::string& name, std::vector<std::string> activated) {
  ledger::RegistrationRecord r;
  r.key = "registration/p/development/" + name;
  r.project = "p";
  r.domain = "development";
  r.version = "v1";
  r.activated = std::move(activated);
  return r;
}

model::Registration declared(const std::string& name) {
  model::Registration r;
  r.name = name;
  r.project = "p";
  r.domain = "development";
  r.version = "v2";
  return r;
}

const reconcile::GuardKind& kind(const reconcile::GuardInput& in, const std::string& name) {
  for (const auto& k : in.kinds)
    if (k.name == name) return k;
  FAIL("no guard kind " << name);
  return in.kinds.front();
}

}  // namespace

// Issue 11: the guard counted the launch plans of removed registrations, not those a version
// change deactivates (what the new version no longer wants).
TEST_CASE("pass guard: launch plans a version change deactivates are counted and guarded",
          "[pass]") {
  std::map<std::string, ledger::RegistrationRecord> records;
  records["registration/p/development/core"] = record("core", {"nightly", "hourly"});
  std::vector<model::Registration> decl{declared("core")};
  // The new version's package has neither launch plan; both are ACTIVE at v1.
  registration::Observation seen;
  seen.records = records;
  registration::PackageFacts facts;
  facts.digest = "sha256:new";
  facts.read = true;
  facts.plans = {{"other", false}};
  seen.packages.emplace("registration/p/development/core", facts);
  seen.live.emplace(registration::ProjectDomain{"p", "development"},
                    std::map<std::string, std::string>{{"nightly", "v1"}, {"hourly", "v1"}});
  auto planned = registration::compute_plan(decl, seen, registration::PlanPolicy{});
  REQUIRE(planned.deactivations_on_change() == 2);
  reconcile::Plan plan;
  reconcile::State desired;
  desired.projects["p"] = reconcile::ProjectState{"p", "P", "", {}, false};
  reconcile::Managed managed{{"project/p", {"h", "r"}}};
  auto in = pass::guard_input(plan, desired, 3, managed, records, decl, &planned, /*prune=*/true);
  CHECK(kind(in, "launch plans").managed == 2);
  CHECK(kind(in, "launch plans").destroyed == 2);
  CHECK(kind(in, "registrations").destroyed == 0);  // still declared
  reconcile::Policy policy;
  auto v = reconcile::guard_pass(in, policy);
  CHECK(v.refused);
  CHECK(v.reason.find("2 of 2 managed launch plans") != std::string::npos);
  policy.allow_mass_prune = true;
  CHECK_FALSE(reconcile::guard_pass(in, policy).refused);
  // Dropping one of two is within the 50% share.
  seen.packages.clear();
  facts.plans = {{"hourly", true}};
  seen.packages.emplace("registration/p/development/core", facts);
  seen.records = records;
  planned = registration::compute_plan(decl, seen, registration::PlanPolicy{});
  REQUIRE(planned.deactivations() == 1);
  in = pass::guard_input(plan, desired, 3, managed, records, decl, &planned, true);
  CHECK_FALSE(reconcile::guard_pass(in, reconcile::Policy{}).refused);
}

TEST_CASE("pass guard: removed registrations count with prune on, not with prune off", "[pass]") {
  std::map<std::string, ledger::RegistrationRecord> records;
  records["registration/p/development/a"] = record("a", {"lp-a"});
  records["registration/p/development/b"] = record("b", {"lp-b"});
  records["registration/p/development/c"] = record("c", {});
  std::vector<model::Registration> decl{declared("c")};
  reconcile::Plan plan;
  reconcile::State desired;
  reconcile::Managed managed;
  // No registration plan (no registration sink): a removal deactivates at most what it activated.
  auto in = pass::guard_input(plan, desired, 1, managed, records, decl, nullptr, /*prune=*/true);
  CHECK(kind(in, "registrations").destroyed == 2);
  CHECK(kind(in, "launch plans").destroyed == 2);
  CHECK(reconcile::guard_pass(in, reconcile::Policy{}).refused);  // 2 of 3 registrations
  in = pass::guard_input(plan, desired, 1, managed, records, decl, nullptr, /*prune=*/false);
  CHECK(kind(in, "registrations").destroyed == 0);
  CHECK(kind(in, "launch plans").destroyed == 0);
  CHECK_FALSE(reconcile::guard_pass(in, reconcile::Policy{}).refused);
}

TEST_CASE("pass guard: the plan's deletes and archives are what the guard counts", "[pass]") {
  reconcile::Plan plan;
  reconcile::Step del;
  del.action = reconcile::Action::remove;
  del.kind = reconcile::ObjectKind::override_attr;
  del.key = "override/p/-/-/TASK_RESOURCE";
  plan.steps.push_back(del);
  reconcile::Step archive;
  archive.action = reconcile::Action::remove;
  archive.kind = reconcile::ObjectKind::project;
  archive.key = "project/q";
  plan.steps.push_back(archive);
  reconcile::Step write;
  write.action = reconcile::Action::update;
  write.key = "override/p/-/-/EXECUTION_QUEUE";
  plan.steps.push_back(write);
  reconcile::State desired;
  desired.projects["p"] = {};
  desired.overrides["override/p/-/-/EXECUTION_QUEUE"] = {};
  reconcile::Managed managed{{"project/p", {}},
                             {"project/q", {}},
                             {"override/p/-/-/TASK_RESOURCE", {}},
                             {"override/p/-/-/EXECUTION_QUEUE", {}}};
  auto in = pass::guard_input(plan, desired, 2, managed, {}, {}, nullptr, true);
  CHECK(kind(in, "projects").managed == 2);
  CHECK(kind(in, "projects").destroyed == 1);
  CHECK(kind(in, "overrides").managed == 2);
  CHECK(kind(in, "overrides").destroyed == 1);
  // 1 of 2 per kind, 2 of 4 in total: within 50%.
  CHECK_FALSE(reconcile::guard_pass(in, reconcile::Policy{}).refused);
  reconcile::Policy strict;
  strict.max_prune_share = 0.4;
  CHECK(reconcile::guard_pass(in, strict).refused);
}

// Issue 27 §3: the pass waited for every package before projects and overrides. It now guards a
// bound first that needs no package; if that passes, so does the real plan.
TEST_CASE("pass guard: the bound before packages counts every launch plan a record activated",
          "[pass]") {
  std::map<std::string, ledger::RegistrationRecord> records;
  for (const char* n : {"a", "b", "c", "d"}) {
    const std::string name = n;
    records["registration/p/development/" + name] = record(name, {"lp-" + name});
  }
  records["registration/p/development/quiet"] = record("quiet", {});
  std::vector<model::Registration> decl{declared("a"), declared("b"),     declared("c"),
                                        declared("d"), declared("quiet"), declared("new")};
  reconcile::Plan plan;
  reconcile::State desired;
  reconcile::Managed managed;
  auto bound = pass::guard_bound(plan, desired, 6, managed, records, decl, /*prune=*/true);
  CHECK(kind(bound, "launch plans").managed == 4);
  CHECK(kind(bound, "launch plans").destroyed == 4);  // each could drop its one launch plan
  CHECK(kind(bound, "registrations").destroyed == 0);
  CHECK(reconcile::guard_pass(bound, reconcile::Policy{}).refused);  // so the pass waits

  // New registrations and ones that activated nothing cannot deactivate anything: no wait.
  std::vector<model::Registration> fresh{declared("quiet"), declared("new")};
  std::map<std::string, ledger::RegistrationRecord> quiet{
      {"registration/p/development/quiet", records["registration/p/development/quiet"]}};
  bound = pass::guard_bound(plan, desired, 2, managed, quiet, fresh, true);
  CHECK(kind(bound, "launch plans").destroyed == 0);
  CHECK_FALSE(reconcile::guard_pass(bound, reconcile::Policy{}).refused);

  // The real plan never counts more than the bound: with every package observed unchanged in
  // name (new version, same launch plans ACTIVE), nothing is deactivated.
  registration::Observation seen;
  seen.records = records;
  std::map<std::string, std::string> live;
  for (const char* n : {"a", "b", "c", "d"}) {
    registration::PackageFacts facts;
    facts.digest = std::string("sha256:") + n;
    facts.read = true;
    facts.plans = {{std::string("lp-") + n, true}};
    seen.packages.emplace(std::string("registration/p/development/") + n, facts);
    live[std::string("lp-") + n] = "v1";
  }
  seen.live.emplace(registration::ProjectDomain{"p", "development"}, live);
  auto planned = registration::compute_plan(decl, seen, registration::PlanPolicy{});
  auto real = pass::guard_input(plan, desired, 6, managed, records, decl, &planned, true);
  bound = pass::guard_bound(plan, desired, 6, managed, records, decl, true);
  for (size_t i = 0; i < real.kinds.size(); ++i) {
    INFO(real.kinds[i].name);
    CHECK(real.kinds[i].managed == bound.kinds[i].managed);
    CHECK(real.kinds[i].destroyed <= bound.kinds[i].destroyed);
  }
}

}  // namespace FLYTECD_UNITY_ID
