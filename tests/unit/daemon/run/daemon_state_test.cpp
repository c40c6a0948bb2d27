// The daemon's state is a value: status JSON and readiness are functions of it, a pass replaces
// it whole, and the status text is rendered once per change.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "daemon/metrics/flytecd_metrics.hpp"
#include "daemon/run/daemon_state.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::pass::Mode;
using flytecd::pass::Outcome;
using flytecd::pass::Report;
using namespace flytecd::run;

namespace {

std::shared_ptr<const Report> report(
    Outcome outcome, Mode mode = Mode::execute,
    flytecd::pass::Ownership::State ownership = flytecd::pass::Ownership::State::ledger) {
  auto r = std::make_shared<Report>();
  r->mode = mode;
  r->outcome = outcome;
  r->revision = "abc123";
  r->observed = true;
  r->applied.converged = outcome == Outcome::success;
  r->ownership.state = ownership;
  r->ownership.message = "ownership " + std::string(to_string(ownership));
  flytecd::reconcile::DriftItem d;
  d.kind = flytecd::reconcile::ObjectKind::override_attr;
  d.key = "override/p/d/TASK_RESOURCE";
  d.detail = "changed outside Git";
  d.healed = true;
  r->plan.drift.push_back(d);
  return r;
}

}  // namespace

TEST_CASE("daemon state: status of a daemon that has not loaded a revision", "[daemon-state]") {
  DaemonState s;
  s.source = "git https://example.com/r@main:";
  s.target = "emulator";
  s.target_is_emulator = true;
  const auto j = status_json(s, {{"enabled", false}});
  CHECK(j["leader"]["enabled"] == false);
  CHECK(j["suspended"].is_null());
  CHECK(j["source"] == s.source);
  CHECK(j["targetIsEmulator"] == true);
  CHECK_FALSE(j.contains("revision"));
  CHECK_FALSE(j.contains("lastSync"));
  CHECK_FALSE(j.contains("lastError"));
  CHECK_FALSE(ready(s));
  CHECK(s.not_ready == "no reconcile has finished yet");
}

TEST_CASE("daemon state: a pass replaces the last sync, objects and readiness", "[daemon-state]") {
  DaemonState s;
  s.revision = "abc123";
  CHECK(fail(s, "source down"));       // the first failure is a transition
  CHECK_FALSE(fail(s, "still down"));  // the second is not
  s.source_error = "source down";
  // A successful pass while the source has a problem keeps the failure.
  CHECK_FALSE(after_pass(s, report(Outcome::success), "interval", "t1", "file x", {}));
  CHECK(s.last_error == "still down");
  CHECK(ready(s));
  s.source_error.clear();
  CHECK(after_pass(s, report(Outcome::success), "interval", "t2", "file x", {}));  // recovered
  CHECK(s.last_error.empty());
  const auto j = status_json(s, nullptr);
  CHECK(j["lastSync"]["reason"] == "interval");
  CHECK(j["lastSync"]["time"] == "t2");
  CHECK(j["lastSync"]["mode"] == "execute");
  CHECK(j["drift"][0]["reverted"] == true);
  CHECK_FALSE(j.contains("lastError"));

  // An abandoned pass replaces lastSync only: objects stay those of the last report.
  s.last_pass = LastPass{"webhook github", "t3", "abc123", "internal error: boom", 0};
  const auto k = status_json(s, nullptr);
  CHECK(k["lastSync"]["outcome"] == "failed");
  CHECK(k["lastSync"]["errorCode"] == "internal");
  CHECK(k["lastSync"]["error"] == "internal error: boom");
  CHECK(k["drift"].size() == 1);
}

TEST_CASE("daemon state: suspended, drift is what resuming would revert", "[daemon-state]") {
  DaemonState s;
  after_pass(s, report(Outcome::success, Mode::plan), "interval", "t", "file x", {});
  const auto j = status_json(s, nullptr);
  CHECK(j["lastSync"]["mode"] == "plan");
  CHECK(j["drift"][0]["reverted"] == false);
  CHECK(j["drift"][0]["revertOnResume"] == true);
  CHECK(ready(s));  // a suspended replica that planned stays ready
}

TEST_CASE("daemon state: a rebuild of ownership stays visible until another one",
          "[daemon-state]") {
  DaemonState s;
  after_pass(s, report(Outcome::success, Mode::execute, flytecd::pass::Ownership::State::rebuilt),
             "startup", "t1", "file x", {});
  after_pass(s, report(Outcome::success), "interval", "t2", "file x", {});
  auto j = status_json(s, nullptr);
  CHECK(j["ownership"]["state"] == "rebuilt");
  CHECK(j["ownership"]["time"] == "t1");
  // "none" lasts only while it is true.
  DaemonState n;
  after_pass(n, report(Outcome::success, Mode::execute, flytecd::pass::Ownership::State::none),
             "startup", "t1", "file x", {});
  CHECK(status_json(n, nullptr)["ownership"]["state"] == "none");
  after_pass(n, report(Outcome::success), "interval", "t2", "file x", {});
  j = status_json(n, nullptr);
  CHECK(j["ownership"]["state"] == "ledger");
  CHECK_FALSE(j["ownership"].contains("time"));
}

TEST_CASE("daemon state: a reload that failed is named until one succeeds", "[daemon-state]") {
  DaemonState s;
  s.reload = Reload{"t1", "config /etc/flytecd.yaml: no such file"};
  auto j = status_json(s, nullptr);
  CHECK(j["reload"]["ok"] == false);
  CHECK(j["lastReloadError"] == "config /etc/flytecd.yaml: no such file");
  s.reload = Reload{"t2", ""};
  j = status_json(s, nullptr);
  CHECK(j["reload"]["ok"] == true);
  CHECK_FALSE(j.contains("lastReloadError"));
}

TEST_CASE("daemon state: the cell renders status once per change and replaces the state whole",
          "[daemon-state]") {
  std::vector<std::string> seen;
  StateCell cell(DaemonState{}, [&](const DaemonState& s) { seen.push_back(s.revision); });
  const auto before = cell.get();
  auto a = cell.status_text(nullptr);
  auto b = cell.status_text(nullptr);
  CHECK(a == b);  // the same rendering, not rendered again
  CHECK(cell.renders() == 1);
  cell.update([](DaemonState& s) { s.revision = "r1"; });
  CHECK(before->revision.empty());  // a reader's state is never edited under it
  CHECK(cell.get()->revision == "r1");
  auto c = cell.status_text(nullptr);
  CHECK(c != a);
  CHECK(c->find("\"revision\":\"r1\"") != std::string::npos);
  CHECK(cell.status_text({{"enabled", true}}) != c);  // the live leader state is compared
  CHECK(cell.renders() == 3);
  CHECK(seen == std::vector<std::string>{"r1"});

  // Concurrent changes are serialized: none is lost.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) cell.update([](DaemonState& s) { s.http_port += 1; });
    });
  for (auto& t : threads) t.join();
  CHECK(cell.get()->http_port == 1000);
  CHECK(seen.size() == 1001);
}

TEST_CASE("daemon state: status carries the commit's author and time and the overview's counts",
          "[daemon-state][page]") {
  DaemonState s;
  s.revision = "abc123";
  s.author = "Ada <ada@example.com>";
  s.committed_at = 1700000000;
  flytecd::pass::ObjectCounts counts;
  counts.managed_projects = 1;
  counts.managed_overrides = 3;
  counts.drifted_overrides = 1;
  counts.unmanaged_overrides = 2;
  auto r = std::make_shared<Report>(*report(Outcome::success));
  r->applied.objects = {{"project/p", flytecd::pass::ObjectState::synced, ""},
                        {"override/p/d//TASK_RESOURCE", flytecd::pass::ObjectState::drifted, "x"}};
  flytecd::registration::RegistrationOutcome failed;
  failed.state = flytecd::registration::RegistrationState::failed;
  r->registrations.items.push_back(failed);
  after_pass(s, r, "interval", "t", "file x", counts);
  auto j = status_json(s, nullptr);
  CHECK(j["author"] == "Ada <ada@example.com>");
  CHECK(j["committedAt"] == "2023-11-14T22:13:20Z");
  CHECK(j["counts"] == nlohmann::json{{"managed", 4},
                                      {"inSync", 1},
                                      {"drifted", 1},
                                      {"unmanaged", 2},
                                      {"failedRegistrations", 1}});
  // A pass that only planned (suspended) lists no objects: in sync is the plan's count.
  auto planned = std::make_shared<Report>(*report(Outcome::success, Mode::plan));
  planned->plan.in_sync = 7;
  after_pass(s, planned, "interval", "t", "file x", counts);
  CHECK(status_json(s, nullptr)["counts"]["inSync"] == 7);
}

TEST_CASE("daemon state: suspended projects, the sync request served and the version in status",
          "[daemon-state]") {
  DaemonState s;
  s.suspended_projects["a"] = Suspension{"2026-12-01T13:00:00Z", "review", "alice"};
  after_pass(s, report(Outcome::success), "api sync", "t1", "file x", {}, 7);
  s.sync_served = 7;
  s.applied = std::make_shared<const std::map<std::string, flytecd::ledger::Ledger::Applied>>(
      std::map<std::string, flytecd::ledger::Ledger::Applied>{
          {"override/p/d//TASK_RESOURCE", {"abc123", 1764594000}}});
  auto r = std::make_shared<Report>(*report(Outcome::success));
  r->applied.objects.push_back(
      {"override/p/d//TASK_RESOURCE", flytecd::pass::ObjectState::synced, ""});
  after_pass(s, r, "api sync", "t2", "file x", {}, 7);
  const auto j = status_json(s, nlohmann::json{{"enabled", false}});
  REQUIRE(j["suspendedProjects"].size() == 1);
  CHECK(j["suspendedProjects"][0]["project"] == "a");
  CHECK(j["suspendedProjects"][0]["reason"] == "review");
  CHECK(j["syncServed"] == 7);
  CHECK(j["lastSync"]["request"] == 7);
  CHECK(j["version"] == FLYTECD_VERSION);
  REQUIRE(j["objects"].size() == 1);
  CHECK(j["objects"][0]["revision"] == "abc123");
  CHECK(j["objects"][0]["lastChange"] == "2025-12-01T13:00:00Z");
  flytecd::metrics::Registry registry;
  flytecd::metrics::FlytecdMetrics m{registry};
  show(s, m);
  CHECK(registry.render().find("flytecd_project_suspended{project=\"a\"} 1") != std::string::npos);
  s.suspended_projects.clear();
  show(s, m);
  CHECK(registry.render().find("flytecd_project_suspended{") == std::string::npos);
}

TEST_CASE("daemon state: a rejection keeps the first 100 errors, never warnings",
          "[daemon_state]") {
  flytecd::model::Diagnostics diags;
  for (int i = 0; i < 300; ++i) {
    flytecd::model::Diagnostic d;
    d.severity = i % 3 == 0 ? flytecd::model::Severity::warning : flytecd::model::Severity::error;
    d.where = flytecd::model::Location{"f.yaml", i + 1, 1};
    d.message = "problem " + std::to_string(i);
    diags.push_back(d);
  }
  const Rejection r = rejection_of("abc123", diags, "2026-12-05T00:00:00Z");
  CHECK(r.revision == "abc123");
  CHECK(r.time == "2026-12-05T00:00:00Z");
  REQUIRE(r.errors.size() == 100);  // the first 100 of the 200 errors among 300 diagnostics
  for (const auto& e : r.errors) CHECK(e.find("problem") != std::string::npos);
  CHECK(r.errors.front().find("f.yaml:2:1") != std::string::npos);  // line 1 is a warning
  CHECK(rejection_of("abc123", {}, "t").errors.empty());
}

}  // namespace FLYTECD_UNITY_ID
