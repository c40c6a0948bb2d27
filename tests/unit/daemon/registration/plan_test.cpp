// The registration plan, with every input built by hand (no package, no FlyteAdmin, no ledger).
#include "daemon/registration/plan.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::registration;

namespace {

model::Registration reg(const std::string& name, const std::string& version,
                        model::Activate activate = model::Activate::scheduled,
                        const std::string& domain = "development") {
  model::Registration r;
  r.name = name;
  r.project = "flytesnacks";
  r.domain = domain;
  r.version = version;
  r.package = "packages/" + name + ".tgz";
  r.activate = activate;
  r.source_kind = "WorkflowRegistration";
  return r;
}

// A package read by observation: two tasks, a workflow, launch plans (name, scheduled).
PackageFacts facts(const std::string& digest, std::vector<LaunchPlanFact> plans) {
  PackageFacts f;
  f.reference = "packages/x.tgz";
  f.digest = digest;
  f.read = true;
  f.tasks = 2;
  f.workflows = 1;
  f.launch_plans = plans.size();
  f.plans = std::move(plans);
  return f;
}

// What the ledger holds after `r` was registered from `digest` with `activated` kept ACTIVE.
ledger::RegistrationRecord record(const model::Registration& r, const std::string& digest,
                                  std::vector<std::string> launch_plans,
                                  std::vector<std::string> activated) {
  ledger::RegistrationRecord rec;
  rec.key = registration_key(r);
  rec.fingerprint = registration_fingerprint(r, digest);
  rec.digest = digest;
  rec.package = r.package;
  rec.project = r.project;
  rec.domain = r.domain;
  rec.version = r.version;
  rec.entities = {"TASK a", "TASK b", "WORKFLOW w"};
  for (const auto& n : launch_plans) rec.entities.push_back("LAUNCH_PLAN " + n);
  rec.launch_plans = std::move(launch_plans);
  rec.activated = std::move(activated);
  return rec;
}

PackageFacts unread(const std::string& digest) {
  PackageFacts f;
  f.reference = "packages/x.tgz";
  f.digest = digest;
  return f;
}

const ProjectDomain k_dev{"flytesnacks", "development"};

std::vector<StepKind> kinds(const PlanItem& it) {
  std::vector<StepKind> out;
  for (const auto& s : it.steps) out.push_back(s.kind);
  return out;
}

}  // namespace

TEST_CASE("plan: a new registration fetches, creates and activates its scheduled launch plans",
          "[registration][plan]") {
  auto r = reg("core", "v1");
  Observation obs;
  obs.packages.emplace(registration_key(r), facts("sha256:1", {{"daily", true}, {"adhoc", false}}));
  obs.packages.at(registration_key(r)).value().fast_source = "fast123.tar.gz";
  obs.live.emplace(k_dev, std::map<std::string, std::string>{});
  auto plan = compute_plan({r}, obs, {});
  REQUIRE(plan.items.size() == 1);
  const auto& it = plan.items[0];
  CHECK(it.state == ItemState::register_);
  CHECK(kinds(it) == std::vector<StepKind>{StepKind::fetch_package, StepKind::upload_fast_source,
                                           StepKind::create_tasks, StepKind::create_workflows,
                                           StepKind::create_launch_plans, StepKind::activate});
  CHECK(it.steps[0].reason == "new registration");
  CHECK(it.steps[2].count == 2);
  CHECK(it.steps[4].count == 2);
  CHECK(it.steps[5].launch_plan == "daily");
  CHECK(it.steps[5].version == "v1");
  CHECK(it.wanted == std::vector<std::string>{"daily"});
  CHECK(it.launch_plans == std::vector<std::string>{"daily", "adhoc"});
  CHECK(it.fingerprint == registration_fingerprint(r, "sha256:1"));
  CHECK(plan.deactivations() == 0);
  CHECK(plan.has_changes());
}

TEST_CASE("plan: an unchanged registration is in sync with no step", "[registration][plan]") {
  auto r = reg("core", "v1");
  Observation obs;
  obs.records.emplace(registration_key(r), record(r, "sha256:1", {"daily", "adhoc"}, {"daily"}));
  obs.packages.emplace(registration_key(r), unread("sha256:1"));  // not read: fingerprint same
  obs.live.emplace(k_dev, std::map<std::string, std::string>{{"daily", "v1"}});
  auto plan = compute_plan({r}, obs, {});
  REQUIRE(plan.items.size() == 1);
  CHECK(plan.items[0].state == ItemState::in_sync);
  CHECK(plan.items[0].steps.empty());
  CHECK(plan.items[0].active == std::vector<std::string>{"daily"});
  CHECK(plan.items[0].drift.empty());
  CHECK_FALSE(plan.has_changes());
}

TEST_CASE("plan: a new version that drops a launch plan deactivates it, counted as a change",
          "[registration][plan]") {
  auto v1 = reg("core", "v1", model::Activate::all);
  auto v2 = reg("core", "v2", model::Activate::all);
  Observation obs;
  obs.records.emplace(registration_key(v1),
                      record(v1, "sha256:1", {"keep", "dropped"}, {"keep", "dropped"}));
  obs.packages.emplace(registration_key(v2), facts("sha256:2", {{"keep", false}}));
  obs.live.emplace(k_dev, std::map<std::string, std::string>{{"keep", "v1"}, {"dropped", "v1"}});
  auto plan = compute_plan({v2}, obs, {});
  REQUIRE(plan.items.size() == 1);
  const auto& it = plan.items[0];
  CHECK(it.state == ItemState::register_);
  CHECK(it.steps[0].reason == "new version v2 (was v1)");
  CHECK(it.names(StepKind::activate) == std::vector<std::string>{"keep"});
  CHECK(it.names(StepKind::deactivate) == std::vector<std::string>{"dropped"});
  const auto& off = it.steps.back();
  CHECK(off.version == "v1");
  CHECK_FALSE(off.removal);
  CHECK(off.reason == "not in the package at v2 (was in v1)");
  CHECK(it.deactivations() == 1);
  CHECK(plan.deactivations() == 1);
  CHECK(plan.deactivations_on_change() == 1);
  CHECK(plan.deactivations_on_removal() == 0);
}

TEST_CASE("plan: activate scheduled -> none deactivates what it kept ACTIVE",
          "[registration][plan]") {
  auto before = reg("core", "v1", model::Activate::scheduled);
  auto after = reg("core", "v1", model::Activate::none);
  Observation obs;
  obs.records.emplace(registration_key(before),
                      record(before, "sha256:1", {"daily", "adhoc"}, {"daily"}));
  // The activate mode is part of the fingerprint: the package is read again.
  obs.packages.emplace(registration_key(after),
                       facts("sha256:1", {{"daily", true}, {"adhoc", false}}));
  obs.live.emplace(k_dev, std::map<std::string, std::string>{{"daily", "v1"}});
  auto plan = compute_plan({after}, obs, {});
  const auto& it = plan.items.at(0);
  CHECK(it.state == ItemState::register_);
  CHECK(it.wanted.empty());
  CHECK(it.names(StepKind::activate).empty());
  REQUIRE(it.names(StepKind::deactivate) == std::vector<std::string>{"daily"});
  CHECK(it.steps.back().reason == "no longer wanted by activate: none");
  CHECK(plan.deactivations_on_change() == 1);
}

TEST_CASE("plan: a registration removed from Git deactivates only with prune",
          "[registration][plan]") {
  auto r = reg("old", "v3", model::Activate::all);
  Observation obs;
  obs.records.emplace(registration_key(r), record(r, "sha256:1", {"a", "b", "c"}, {"a", "b", "c"}));
  // b is someone else's version now; c is not ACTIVE at all.
  obs.live.emplace(k_dev, std::map<std::string, std::string>{{"a", "v3"}, {"b", "v9"}});

  auto plan = compute_plan({}, obs, {});
  REQUIRE(plan.items.size() == 1);
  const auto& it = plan.items[0];
  CHECK(it.state == ItemState::remove);
  CHECK_FALSE(it.registration.has_value());
  REQUIRE(it.names(StepKind::deactivate) == std::vector<std::string>{"a"});
  CHECK(it.steps[0].removal);
  CHECK(it.steps[0].version == "v3");
  CHECK(it.steps[0].reason == "removed from Git");
  CHECK(plan.deactivations_on_removal() == 1);
  CHECK(plan.deactivations_on_change() == 0);

  PlanPolicy no_prune;
  no_prune.prune = false;
  auto kept = compute_plan({}, obs, no_prune);
  REQUIRE(kept.items.size() == 1);
  CHECK(kept.items[0].state == ItemState::orphaned);
  CHECK(kept.items[0].steps.empty());
  CHECK(kept.deactivations() == 0);
  CHECK(kept.items[0].message.find("prune is off") != std::string::npos);
}

TEST_CASE("plan: a removed registration leaves launch plans another registration wants",
          "[registration][plan]") {
  auto gone = reg("old-name", "v1", model::Activate::all);
  auto renamed = reg("new-name", "v1", model::Activate::all);
  Observation obs;
  obs.records.emplace(registration_key(gone), record(gone, "sha256:1", {"lp"}, {"lp"}));
  obs.packages.emplace(registration_key(renamed), facts("sha256:1", {{"lp", false}}));
  obs.live.emplace(k_dev, std::map<std::string, std::string>{{"lp", "v1"}});
  auto plan = compute_plan({renamed}, obs, {});
  REQUIRE(plan.items.size() == 2);
  CHECK(plan.items[0].key == registration_key(renamed));
  CHECK(plan.items[0].state == ItemState::register_);
  CHECK(plan.items[0].active == std::vector<std::string>{"lp"});
  CHECK(plan.items[1].state == ItemState::remove);
  CHECK(plan.items[1].steps.empty());  // not deactivated under the registration that wants it
  CHECK(plan.deactivations() == 0);
}

TEST_CASE("plan: activation changed outside Git is drift, healed only with self_heal",
          "[registration][plan]") {
  auto r = reg("core", "v1", model::Activate::all);
  Observation obs;
  obs.records.emplace(registration_key(r), record(r, "sha256:1", {"a", "b", "c"}, {"a", "b", "c"}));
  obs.packages.emplace(registration_key(r), unread("sha256:1"));
  obs.live.emplace(k_dev, std::map<std::string, std::string>{{"a", "v1"}, {"c", "v0"}});

  auto healed = compute_plan({r}, obs, {});
  const auto& it = healed.items.at(0);
  CHECK(it.state == ItemState::activate);
  CHECK(it.drift == std::vector<std::string>{"launch plan b: no version is ACTIVE, Git says v1",
                                             "launch plan c: version v0 is ACTIVE, Git says v1"});
  REQUIRE(it.names(StepKind::activate) == std::vector<std::string>{"b", "c"});
  CHECK(it.steps[0].reason == "launch plan b was deactivated outside Git");
  CHECK(it.steps[1].reason == "launch plan c was set to v0 outside Git");
  CHECK(it.active == std::vector<std::string>{"a"});

  PlanPolicy report_only;
  report_only.self_heal = false;
  auto reported = compute_plan({r}, obs, report_only);
  CHECK(reported.items.at(0).state == ItemState::in_sync);
  CHECK(reported.items.at(0).steps.empty());
  CHECK(reported.items.at(0).drift.size() == 2);
}

TEST_CASE("plan: observation errors become failed items, with no step", "[registration][plan]") {
  auto bad = reg("bad", "v1");
  auto blind = reg("blind", "v1", model::Activate::all, "staging");
  auto prev = record(bad, "sha256:1", {"lp"}, {"lp"});
  Observation obs;
  obs.records.emplace(registration_key(bad), prev);
  obs.packages.emplace(registration_key(bad),
                       Error{ErrorCode::invalid_input, "packages/bad.tgz: not a tar"});
  obs.packages.emplace(registration_key(blind), facts("sha256:2", {{"lp", false}}));
  obs.live.emplace(k_dev, std::map<std::string, std::string>{{"lp", "v1"}});
  obs.live.emplace(ProjectDomain{"flytesnacks", "staging"},
                   Error{ErrorCode::unavailable, "flyteadmin: connection refused"});
  auto plan = compute_plan({blind, bad}, obs, {});
  REQUIRE(plan.items.size() == 2);
  CHECK(plan.failed() == 2);
  const auto& b = plan.items[0];
  CHECK(b.key == registration_key(bad));
  CHECK(b.state == ItemState::failed);
  CHECK(b.steps.empty());
  CHECK(b.message == "packages/bad.tgz: not a tar");
  CHECK(b.error->code == ErrorCode::invalid_input);
  const auto& l = plan.items[1];
  CHECK(l.state == ItemState::failed);
  CHECK(l.steps.empty());
  CHECK(l.message == "reading active launch plans: flyteadmin: connection refused");
  CHECK(l.error->retryable());
  CHECK(plan.deactivations() == 0);

  // A removal whose live state could not be read fails too; nothing is deactivated.
  Observation gone;
  gone.records.emplace(registration_key(bad), prev);
  gone.live.emplace(k_dev, Error{ErrorCode::unavailable, "flyteadmin: down"});
  auto removal = compute_plan({}, gone, {});
  REQUIRE(removal.items.size() == 1);
  CHECK(removal.items[0].state == ItemState::failed);
  CHECK(removal.deactivations() == 0);
}

TEST_CASE("plan: items come in key order, then removals in key order", "[registration][plan]") {
  std::vector<model::Registration> desired = {reg("zeta", "v1"), reg("alpha", "v1"),
                                              reg("mid", "v1", model::Activate::none, "staging")};
  Observation obs;
  for (const auto& r : desired) obs.packages.emplace(registration_key(r), facts("sha256:1", {}));
  obs.live.emplace(k_dev, std::map<std::string, std::string>{});
  obs.live.emplace(ProjectDomain{"flytesnacks", "staging"}, std::map<std::string, std::string>{});
  for (const char* name : {"old-b", "old-a"}) {
    auto r = reg(name, "v0");
    obs.records.emplace(registration_key(r), record(r, "sha256:0", {}, {}));
  }
  auto plan = compute_plan(desired, obs, {});
  std::vector<std::string> keys;
  for (const auto& it : plan.items) keys.push_back(it.key);
  CHECK(keys == std::vector<std::string>{
                    "registration/flytesnacks/development/alpha",
                    "registration/flytesnacks/development/zeta",
                    "registration/flytesnacks/staging/mid",
                    "registration/flytesnacks/development/old-a",
                    "registration/flytesnacks/development/old-b",
                });
  CHECK(plan.items[3].state == ItemState::remove);
}

TEST_CASE(
    "plan: launch plans missing in FlyteAdmin register again despite the ledger's fingerprint",
    "[registration][plan]") {
  auto r = reg("core", "v1", model::Activate::all);
  auto rec = record(r, "sha256:1", {"lp", "other"}, {"lp"});
  LiveLaunchPlans live = std::map<std::string, std::string>{};
  auto it = plan_registration(r, &rec, facts("sha256:1", {{"lp", false}}), &live, {},
                              std::vector<std::string>{"lp", "other"});
  CHECK(it.state == ItemState::register_);
  CHECK(it.steps[0].reason ==
        "missing in FlyteAdmin: launch plan lp (and 1 more) not registered at v1");
  CHECK(it.names(StepKind::activate) == std::vector<std::string>{"lp"});
  CHECK(it.drift.empty());  // not drift: the entities themselves were missing
  CHECK(to_string(it.state) == "register");
  CHECK(to_string(StepKind::create_launch_plans) == "create launch plans");
}

TEST_CASE("plan: a registration the ledger records is in sync only when observation found it",
          "[registration][plan]") {
  auto r = reg("core", "v1", model::Activate::all);
  auto rec = record(r, "sha256:1", {"lp"}, {"lp"});
  const std::string key = registration_key(r);
  auto observed = [&] {
    Observation obs;
    obs.records.emplace(key, rec);
    obs.live.emplace(k_dev, std::map<std::string, std::string>{{"lp", "v1"}});
    return obs;
  };
  // All there: in sync, the package was not read.
  auto held = observed();
  held.packages.emplace(key, unread("sha256:1"));
  held.missing.emplace(key, std::vector<std::string>{});
  CHECK(compute_plan({r}, std::move(held), {}).items[0].state == ItemState::in_sync);
  // Missing: registered again (the observation read the package for it).
  auto gone = observed();
  gone.packages.emplace(key, facts("sha256:1", {{"lp", false}}));
  gone.missing.emplace(key, std::vector<std::string>{"lp"});
  auto plan = compute_plan({r}, std::move(gone), {});
  REQUIRE(plan.items[0].state == ItemState::register_);
  CHECK(plan.items[0].steps[0].reason ==
        "missing in FlyteAdmin: launch plan lp not registered at v1");
  CHECK(plan.has_changes());
  // Could not be checked: a failed item, never "in sync".
  auto unknown = observed();
  unknown.packages.emplace(key, unread("sha256:1"));
  unknown.missing.emplace(key, Error{ErrorCode::unavailable, "ListLaunchPlans: connection reset"});
  auto failed = compute_plan({r}, std::move(unknown), {});
  CHECK(failed.items[0].state == ItemState::failed);
  CHECK(failed.items[0].message.find("connection reset") != std::string::npos);
}

TEST_CASE("plan: two registrations of one project and domain holding one launch plan both fail",
          "[registration][plan]") {
  auto a = reg("first", "v1", model::Activate::all);
  a.where = {"regs.yaml", 7, 1};
  auto b = reg("second", "v2", model::Activate::all);
  b.where = {"regs.yaml", 14, 1};
  auto other = reg("elsewhere", "v1", model::Activate::all, "staging");
  Observation obs;
  obs.packages.emplace(registration_key(a), facts("sha256:1", {{"lp", false}, {"a", false}}));
  obs.packages.emplace(registration_key(b), facts("sha256:1", {{"lp", false}, {"b", false}}));
  obs.packages.emplace(registration_key(other), facts("sha256:1", {{"lp", false}}));
  obs.live.emplace(k_dev, std::map<std::string, std::string>{});
  obs.live.emplace(ProjectDomain{"flytesnacks", "staging"}, std::map<std::string, std::string>{});
  auto plan = compute_plan({a, b, other}, obs, {});
  REQUIRE(plan.items.size() == 3);
  const std::string want =
      "launch plan lp is kept ACTIVE by two registrations of flytesnacks/development: first "
      "(regs.yaml:7:1) and second (regs.yaml:14:1); each would take the activation from the other "
      "on every pass (rename the launch plans, or register them in different domains)";
  for (const auto& it : plan.items) {
    INFO(it.key);
    if (it.registration->domain == "staging") {
      CHECK(it.state == ItemState::register_);  // another domain: no clash
      continue;
    }
    CHECK(it.state == ItemState::failed);
    CHECK(it.message == want);
    CHECK(it.steps.empty());
  }
  CHECK(launch_plan_clashes({{&a, {"lp", "lp"}}}).empty());  // one package, one registration
  // One clash per pair, naming every launch plan the two share.
  auto many = launch_plan_clashes({{&a, {"x", "y", "z", "w"}}, {&b, {"x", "y", "z", "w"}}});
  REQUIRE(many.size() == 1);
  CHECK(many[0].launch_plans == std::vector<std::string>{"w", "x", "y", "z"});
  CHECK(describe(many[0]).rfind("4 launch plans (w, x, y, …) are kept ACTIVE by two", 0) == 0);
  // Registered at two versions but ACTIVE through one of them only: no clash.
  auto quiet = reg("quiet", "v3", model::Activate::none);
  Observation obs2;
  obs2.packages.emplace(registration_key(a), facts("sha256:1", {{"lp", false}}));
  obs2.packages.emplace(registration_key(quiet), facts("sha256:1", {{"lp", false}}));
  obs2.live.emplace(k_dev, std::map<std::string, std::string>{});
  for (const auto& it : compute_plan({a, quiet}, obs2, {}).items)
    CHECK(it.state == ItemState::register_);
}

}  // namespace FLYTECD_UNITY_ID
