// Generic objects (sinks::ObjectValue, Flyte 2's settings records first): planned key by key
// through protobuf reflection, guarded per kind, rendered by their key.
#include <catch2/catch.hpp>

#include <memory>

#include "daemon/reconcile/guard.hpp"
#include "daemon/reconcile/plan.hpp"
#include "daemon/reconcile/render.hpp"
#include "flyteidl2/settings/settings_definition.pb.h"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::reconcile;

namespace {

ObjectValue settings(const std::string& queue) {
  auto s = std::make_shared<flyteidl2::settings::Settings>();
  auto* q = s->mutable_run()->mutable_default_queue();
  q->set_state(flyteidl2::settings::SETTING_STATE_VALUE);
  q->set_string_value(queue);
  return ObjectValue{"settings", s};
}

const std::string k_key = "settings/flyte/development/p1";

const Step* only_step(const Plan& p) {
  REQUIRE(p.steps.size() == 1);
  return &p.steps.front();
}

}  // namespace

TEST_CASE("generic objects: new in Git is a create, equal and recorded is in sync") {
  State desired;
  desired.objects[k_key] = settings("q1");
  auto p = plan(desired, State{}, {}, Policy{});
  const Step* s = only_step(p);
  CHECK(s->action == Action::create);
  CHECK(s->kind == ObjectKind::object);
  REQUIRE(s->object);
  CHECK(s->reason == "new in Git");
  CHECK(step_line(*s) == "+ create settings flyte/development/p1 (new in Git)");
  CHECK(summary_line(p).find("settings: +1 ~0 -0") != std::string::npos);

  State live = desired;
  Managed managed{{k_key, ManagedRecord{hash_of(desired.objects.at(k_key)), "r1"}}};
  auto synced = plan(desired, live, managed, Policy{});
  CHECK(synced.steps.empty());
  CHECK(synced.in_sync == 1);
  CHECK(synced.managed_count == 1);
  // Live equal but unknown to the ledger: adopted.
  auto adopt = plan(desired, live, {}, Policy{});
  CHECK(only_step(adopt)->action == Action::adopt);
}

TEST_CASE("generic objects: a change outside Git is drift with the field that changed") {
  State desired, live;
  desired.objects[k_key] = settings("q1");
  live.objects[k_key] = settings("other");
  Managed managed{{k_key, ManagedRecord{hash_of(desired.objects.at(k_key)), "r1"}}};
  auto healed = plan(desired, live, managed, Policy{});
  REQUIRE(healed.drift.size() == 1);
  CHECK(healed.drift[0].kind == ObjectKind::object);
  CHECK(healed.drift[0].healed);
  REQUIRE(healed.drift[0].changes.size() == 1);
  CHECK(healed.drift[0].changes[0].path == "run.defaultQueue.stringValue");
  CHECK(healed.drift[0].changes[0].before == "\"other\"");
  CHECK(healed.drift[0].changes[0].after == "\"q1\"");
  const Step* s = only_step(healed);
  CHECK(s->action == Action::update);
  CHECK(s->drift);
  auto changes = step_changes(*s);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == "run.defaultQueue.stringValue");

  Policy report_only;
  report_only.self_heal = false;
  auto reported = plan(desired, live, managed, report_only);
  CHECK(reported.steps.empty());
  REQUIRE(reported.drift.size() == 1);
  CHECK_FALSE(reported.drift[0].healed);

  // Git changed it and live is what flytecd wrote before: an update, not drift.
  Managed older{{k_key, ManagedRecord{hash_of(live.objects.at(k_key)), "r0"}}};
  auto changed = plan(desired, live, older, Policy{});
  CHECK(changed.drift.empty());
  CHECK(only_step(changed)->reason == "changed in Git");

  // Git changed it and live is neither: someone wrote after flytecd (a stale write re-planned).
  // Drift with both values; left alone without self-heal.
  Managed neither{{k_key, ManagedRecord{hash_of(settings("q0")), "r0"}}};
  auto both = plan(desired, live, neither, Policy{});
  REQUIRE(both.drift.size() == 1);
  CHECK(both.drift[0].detail == "changed outside Git (and changed in Git since flytecd wrote it)");
  CHECK(only_step(both)->drift);
  auto left = plan(desired, live, neither, report_only);
  CHECK(left.steps.empty());
  REQUIRE(left.drift.size() == 1);
  CHECK_FALSE(left.drift[0].healed);
}

TEST_CASE("generic objects: removed from Git is removed, kept with prune off, unmanaged left") {
  State live;
  live.objects[k_key] = settings("q1");
  Managed managed{{k_key, ManagedRecord{hash_of(live.objects.at(k_key)), "r1"}}};
  auto removed = plan(State{}, live, managed, Policy{});
  const Step* s = only_step(removed);
  CHECK(s->action == Action::remove);
  REQUIRE(s->object_live);
  CHECK_FALSE(s->object);

  Policy keep;
  keep.prune = false;
  auto kept = plan(State{}, live, managed, keep);
  CHECK(kept.steps.empty());
  REQUIRE(kept.orphaned.size() == 1);
  CHECK(kept.orphaned[0] == k_key);

  auto left = plan(State{}, live, {}, Policy{});
  CHECK(left.steps.empty());
  REQUIRE(left.unmanaged.size() == 1);

  // What a sink must observe: what Git declares and what the ledger owns, nothing else.
  State desired;
  desired.objects["settings/flyte//"] = settings("q");
  managed.emplace("project/p1", ManagedRecord{"h", "r"});
  managed.emplace("override/p1///TASK_RESOURCE", ManagedRecord{"h", "r"});
  CHECK(expected_objects(desired, managed) == std::set<std::string>{"settings/flyte//", k_key});
}

TEST_CASE("generic objects: the guard counts them per kind") {
  State live;
  Managed managed;
  for (int i = 0; i < 4; ++i) {
    const std::string k = "settings/flyte/development/p" + std::to_string(i);
    live.objects[k] = settings("q");
    managed[k] = ManagedRecord{hash_of(live.objects.at(k)), "r1"};
  }
  State desired;
  desired.objects["settings/flyte/development/p0"] = settings("q");
  auto p = plan(desired, live, managed, Policy{});
  CHECK(p.count(Action::remove, ObjectKind::object) == 3);
  auto in = guard_input(p, desired, 1, managed, RegistrationCounts{});
  const GuardKind* kind = nullptr;
  for (const auto& k : in.kinds)
    if (k.name == "settings") kind = &k;
  REQUIRE(kind);
  CHECK(kind->managed == 4);
  CHECK(kind->desired == 1);
  CHECK(kind->destroyed == 3);
  auto verdict = guard_pass(in, Policy{});
  CHECK(verdict.refused);
  CHECK(verdict.reason.find("3 of 4 managed settings") != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
