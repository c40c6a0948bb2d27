// Kubernetes Events about passes (pure): which pass is worth which event, the Event object, and
// the rate limit (an injected clock).
#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

#include "daemon/k8s/events.hpp"
#include "daemon/pass/pass.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace std::chrono_literals;
using flytecd::k8s::Event;
using flytecd::k8s::event_for;
namespace pass = flytecd::pass;
namespace sinks = flytecd::sinks;

namespace {

const std::string k_commit = "0123456789abcdef0123456789abcdef01234567";

pass::Report executed() {
  pass::Report r;
  r.mode = pass::Mode::execute;
  r.revision = k_commit;
  r.outcome = pass::Outcome::success;
  r.observed = true;
  r.applied.converged = true;
  return r;
}

sinks::Step step(sinks::Action a, sinks::ObjectKind k, const std::string& key) {
  sinks::Step s;
  s.action = a;
  s.kind = k;
  s.key = key;
  return s;
}

void ran(pass::Report& r, sinks::Action a, sinks::ObjectKind k, const std::string& key) {
  r.plan.steps.push_back(step(a, k, key));
  r.applied.results.push_back({step(a, k, key), flytecd::ok_status(), 1});
}

}  // namespace

TEST_CASE("events: a pass with nothing to do, or only adoptions, posts no event", "[k8s][events]") {
  auto r = executed();
  CHECK_FALSE(event_for(r));
  ran(r, sinks::Action::adopt, sinks::ObjectKind::override_attr, "o1");
  CHECK_FALSE(event_for(r));
  // A registration orphaned with prune off is planned every pass, never done: not a change.
  flytecd::registration::RegistrationOutcome orphan;
  orphan.key = "p/d/wf";
  orphan.state = flytecd::registration::RegistrationState::orphaned;
  r.registrations.items.push_back(orphan);
  CHECK_FALSE(event_for(r));
  // Plan mode (suspended) with changes pending changed nothing.
  auto planned = executed();
  planned.mode = pass::Mode::plan;
  planned.plan.steps.push_back(step(sinks::Action::create, sinks::ObjectKind::project, "p"));
  CHECK_FALSE(event_for(planned));
}

TEST_CASE("events: an executed pass that changed something is ReconciliationSucceeded with counts",
          "[k8s][events]") {
  auto r = executed();
  ran(r, sinks::Action::create, sinks::ObjectKind::project, "p1");
  ran(r, sinks::Action::create, sinks::ObjectKind::override_attr, "o1");
  ran(r, sinks::Action::update, sinks::ObjectKind::override_attr, "o2");
  ran(r, sinks::Action::remove, sinks::ObjectKind::override_attr, "o3");
  flytecd::registration::RegistrationOutcome reg;
  reg.key = "p/d/wf";
  reg.state = flytecd::registration::RegistrationState::registered;
  r.registrations.items.push_back(reg);
  auto e = event_for(r);
  REQUIRE(e);
  CHECK(e->type == "Normal");
  CHECK(e->reason == "ReconciliationSucceeded");
  CHECK(e->message ==
        "revision 0123456789ab applied: projects +1 ~0 archived 0 · overrides +1 ~1 -1 · "
        "registrations: 1 registered, 0 activated, 0 removed");
  // A directory revision is named whole.
  r.revision = "dir:/srv/flyte-gitops";
  CHECK(event_for(r)->message.rfind("revision dir:/srv/flyte-gitops applied: ", 0) == 0);
}

TEST_CASE("events: a refused revision is RevisionRefused with the guard's reason",
          "[k8s][events]") {
  auto r = executed();
  r.outcome = pass::Outcome::refused;
  r.guard.refused = true;
  r.guard.reason = "would delete 9 of 10 managed objects (90% > 50%)";
  r.plan.steps.push_back(step(sinks::Action::remove, sinks::ObjectKind::project, "p"));
  auto e = event_for(r);
  REQUIRE(e);
  CHECK(e->type == "Warning");
  CHECK(e->reason == "RevisionRefused");
  CHECK(e->message ==
        "revision 0123456789ab refused, nothing executed: would delete 9 of 10 managed objects "
        "(90% > 50%)");
}

TEST_CASE("events: a failed pass is ReconciliationFailed, one line even for a multi-line error",
          "[k8s][events]") {
  auto r = executed();
  r.outcome = pass::Outcome::failed;
  r.applied.failed = 1;
  r.applied.results.push_back(
      {step(sinks::Action::create, sinks::ObjectKind::project, "p"),
       flytecd::make_error(flytecd::ErrorCode::unavailable, "connection refused"), 1});
  r.applied.results.push_back({step(sinks::Action::create, sinks::ObjectKind::override_attr, "o"),
                               flytecd::ok_status(), 1});
  r.error = flytecd::Error{flytecd::ErrorCode::unavailable,
                           "flyteadmin: unreachable\nsecond line" + std::string(3000, 'x')};
  auto e = event_for(r);
  REQUIRE(e);
  CHECK(e->type == "Warning");
  CHECK(e->reason == "ReconciliationFailed");
  CHECK(e->message.rfind(
            "revision 0123456789ab failed (1 of 2 steps failed): flyteadmin: unreachable", 0) == 0);
  CHECK(e->message.find('\n') == std::string::npos);
  CHECK(e->message.size() <= flytecd::k8s::k_max_event_message);
}

TEST_CASE("events: drift is DriftDetected naming the objects and what was done about it",
          "[k8s][events]") {
  auto r = executed();
  for (int i = 1; i <= 5; ++i)
    r.plan.drift.push_back(
        {sinks::ObjectKind::override_attr, "o" + std::to_string(i), "", true, {}});
  auto e = event_for(r);
  REQUIRE(e);
  CHECK(e->type == "Warning");
  CHECK(e->reason == "DriftDetected");
  CHECK(e->message ==
        "revision 0123456789ab: 5 object(s) changed outside Git (reverted): o1, o2, o3 and 2 "
        "more");
  for (auto& d : r.plan.drift) d.healed = false;
  CHECK(event_for(r)->message.find("(self-heal off, left in place)") != std::string::npos);
  r.plan.drift[0].healed = true;
  CHECK(event_for(r)->message.find("(1 reverted, 4 left in place)") != std::string::npos);
  r.mode = pass::Mode::plan;
  CHECK(event_for(r)->message.find("(suspended, left in place)") != std::string::npos);
}

TEST_CASE("events: the Event object names the involved object, source and times", "[k8s][events]") {
  flytecd::k8s::InvolvedObject about{"v1", "ConfigMap", "flytecd-applied-revision", "flytecd",
                                     "uid-1"};
  const auto last = std::chrono::system_clock::time_point(1764600000s + 5ns);
  auto j = flytecd::k8s::event_object(Event{"Warning", "DriftDetected", "m"}, about, "pod-a", 3,
                                      last - 600s, last);
  CHECK(j["apiVersion"] == "v1");
  CHECK(j["kind"] == "Event");
  CHECK(j["metadata"]["namespace"] == "flytecd");
  CHECK(j["metadata"]["name"].get<std::string>().rfind("flytecd-applied-revision.", 0) == 0);
  CHECK(j["involvedObject"] == nlohmann::json{{"apiVersion", "v1"},
                                              {"kind", "ConfigMap"},
                                              {"name", "flytecd-applied-revision"},
                                              {"namespace", "flytecd"},
                                              {"uid", "uid-1"}});
  CHECK(j["reason"] == "DriftDetected");
  CHECK(j["type"] == "Warning");
  CHECK(j["message"] == "m");
  CHECK(j["source"]["component"] == "flytecd");
  CHECK(j["reportingComponent"] == "flytecd");
  CHECK(j["reportingInstance"] == "pod-a");
  CHECK(j["count"] == 3);
  CHECK(j["firstTimestamp"] == "2025-12-01T14:30:00Z");
  CHECK(j["lastTimestamp"] == "2025-12-01T14:40:00Z");
}

TEST_CASE("events: the same reason and message are posted once per interval, repeats counted",
          "[k8s][events]") {
  auto now = std::chrono::system_clock::time_point(1764600000s);
  std::vector<nlohmann::json> posted;
  flytecd::k8s::EventRecorder rec([&](nlohmann::json e) { posted.push_back(std::move(e)); },
                                  {"v1", "ConfigMap", "rec", "ns", ""}, "me", 5min,
                                  [&] { return now; });
  const Event drift{"Warning", "DriftDetected", "revision a: 1 object(s) changed outside Git"};
  CHECK(rec.record(drift));
  now += 1min;
  CHECK_FALSE(rec.record(drift));
  now += 2min;
  CHECK_FALSE(rec.record(drift));
  // Another message (or reason) is not held back by the first.
  CHECK(rec.record(Event{"Warning", "DriftDetected", "revision b: 2 object(s) changed"}));
  now += 2min;  // 5 min after the first post
  CHECK(rec.record(drift));
  REQUIRE(posted.size() == 3);
  CHECK(posted[0]["count"] == 1);
  // The post after the interval stands for itself and the two held back since 1 min in.
  CHECK(posted[2]["count"] == 3);
  CHECK(posted[2]["firstTimestamp"] == "2025-12-01T14:41:00Z");
  CHECK(posted[2]["lastTimestamp"] == "2025-12-01T14:45:00Z");
  now += 1min;
  CHECK_FALSE(rec.record(drift));
  now += 10min;
  CHECK(rec.record(drift));
  CHECK(posted.back()["count"] == 2);
}

TEST_CASE("events: on_pass maps and rate-limits, and a no-op pass posts nothing", "[k8s][events]") {
  auto now = std::chrono::system_clock::time_point(1764600000s);
  size_t posts = 0;
  flytecd::k8s::EventRecorder rec([&](nlohmann::json) { ++posts; },
                                  {"v1", "ConfigMap", "rec", "ns", ""}, "me", 5min,
                                  [&] { return now; });
  CHECK_FALSE(rec.on_pass(executed()));
  auto failed = executed();
  failed.outcome = pass::Outcome::failed;
  failed.error = flytecd::Error{flytecd::ErrorCode::unavailable, "down"};
  auto e = rec.on_pass(failed);
  REQUIRE(e);
  CHECK(e->reason == "ReconciliationFailed");
  now += 3min;  // the interval's passes fail the same way: held back
  CHECK_FALSE(rec.on_pass(failed));
  CHECK_FALSE(rec.on_pass(executed()));
  CHECK(posts == 1);
}

}  // namespace FLYTECD_UNITY_ID
