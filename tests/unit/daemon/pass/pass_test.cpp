// The one reconcile pass (daemon/pass) with an in-memory sink and an in-memory ledger: the same
// pass plans (plan --live) and executes (apply, run), and one guard refuses a revision whole.
#include "daemon/pass/pass.hpp"

#include <catch2/catch.hpp>

#include "daemon/pass/views.hpp"
#include "tests/unit/daemon/pass/pass_fixtures.hpp"
#include "tests/unit/sinks/memory_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace admin = flyteidl::admin;

namespace {

using pass_test::documents;
using pass_test::label;

struct Fixture {
  testing::MemorySink sink;
  std::unique_ptr<ledger::Ledger> ledger = open_ledger();

  static std::unique_ptr<ledger::Ledger> open_ledger() {
    auto l = ledger::Ledger::open(":memory:");
    REQUIRE(l);
    return std::move(*l);
  }

  pass::Report run(const model::Documents& docs, pass::Mode mode, reconcile::Policy policy = {}) {
    auto o = pass_test::options(mode);
    o.policy = policy;
    return pass_test::run_pass(sink, *ledger, docs, o, "subject");
  }
};

std::vector<std::pair<std::string, std::string>> steps_of(const reconcile::Plan& p) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : p.steps) out.emplace_back(std::string(to_string(s.action)), s.key);
  return out;
}

}  // namespace

TEST_CASE("pass: plan mode writes nothing, execute mode runs the same plan and converges",
          "[pass]") {
  Fixture f;
  const auto docs = documents(3);
  auto planned = f.run(docs, pass::Mode::plan);
  CHECK(planned.outcome == pass::Outcome::success);
  CHECK(planned.observed);
  CHECK(planned.plan.steps.size() == 6);  // 3 projects + 3 overrides
  CHECK(f.sink.rpcs() == 0);
  CHECK(pass::plan_exit_code(planned) == 2);
  CHECK_FALSE(planned.executed());

  auto applied = f.run(docs, pass::Mode::execute);
  CHECK(applied.outcome == pass::Outcome::success);
  CHECK(applied.executed());
  CHECK(steps_of(applied.plan) == steps_of(planned.plan));  // one pass, one plan
  CHECK(applied.applied.converged);
  CHECK(f.sink.rpcs() == 6);
  CHECK(f.sink.observes() == 3);  // plan mode, execute (round 1), verify (round 2)
  CHECK(pass::apply_exit_code(applied) == 0);

  auto again = f.run(docs, pass::Mode::plan);
  CHECK(again.plan.steps.empty());
  CHECK(pass::plan_exit_code(again) == 0);
  auto j = pass::plan_json(again);
  CHECK(j["revision"] == "rev");
  CHECK(j["outcome"] == "success");
}

TEST_CASE("pass: an empty revision is refused whole and nothing executes", "[pass]") {
  Fixture f;
  REQUIRE(f.run(documents(4), pass::Mode::execute).outcome == pass::Outcome::success);
  const int rpcs = f.sink.rpcs();
  const model::Documents empty;
  auto r = f.run(empty, pass::Mode::execute);
  CHECK(r.outcome == pass::Outcome::refused);
  CHECK_FALSE(r.executed());
  CHECK(r.plan.refused);
  CHECK(r.guard.reason.find("zero documents") != std::string::npos);
  REQUIRE(r.error);
  CHECK(r.error->code == ErrorCode::conflict);
  CHECK(f.sink.rpcs() == rpcs);  // 0 write RPCs
  auto history = f.ledger->history(1);
  REQUIRE(history);
  CHECK(history->front().outcome == "refused");
  CHECK(pass::apply_exit_code(r) == 1);
  CHECK(pass::plan_exit_code(r) == 1);
  // Allowed explicitly, it proceeds.
  reconcile::Policy allow;
  allow.allow_empty = true;
  allow.allow_mass_prune = true;
  auto forced = f.run(empty, pass::Mode::execute, allow);
  CHECK(forced.outcome == pass::Outcome::success);
  CHECK(f.sink.state().overrides.empty());
}

TEST_CASE("pass: deleting more than the share is refused by the one guard", "[pass]") {
  Fixture f;
  REQUIRE(f.run(documents(4), pass::Mode::execute).outcome == pass::Outcome::success);
  auto r = f.run(documents(1), pass::Mode::execute);  // 3 of 4 overrides and projects go
  CHECK(r.outcome == pass::Outcome::refused);
  CHECK(r.guard.reason.find("refusing to remove 3 of 4 managed") != std::string::npos);
  CHECK(f.sink.state().overrides.size() == 4);
}

TEST_CASE("pass: drift left in place (self-heal off) is reported with its values", "[pass]") {
  Fixture f;
  REQUIRE(f.run(documents(1, "blue"), pass::Mode::execute).outcome == pass::Outcome::success);
  auto live = f.sink.state();
  for (auto& [key, o] : live.overrides) o.value.mutable_execution_cluster_label()->set_value("red");
  f.sink.set_state(live);
  reconcile::Policy report_only;
  report_only.self_heal = false;
  auto r = f.run(documents(1, "blue"), pass::Mode::plan, report_only);
  REQUIRE(r.plan.drift.size() == 1);
  CHECK_FALSE(r.plan.has_changes());
  CHECK(pass::plan_exit_code(r) == 2);  // drift is a difference too
  auto lines = pass::drift_lines(r);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("~ executionClusterLabel.value: live \"red\", Git \"blue\"") !=
        std::string::npos);
  auto drift = pass::drift_json(r);
  CHECK(drift[0]["changes"][0]["live"] == "red");  // a JSON value, not JSON text
}

TEST_CASE("pass: an observation failure fails the pass with its code, the target is down",
          "[pass]") {
  Fixture f;
  f.sink.fail_observe(Error{ErrorCode::unavailable, "connection refused"});
  auto r = f.run(documents(1), pass::Mode::execute);
  CHECK(r.outcome == pass::Outcome::failed);
  CHECK_FALSE(r.observed);
  CHECK(r.target_down());
  CHECK_FALSE(pass::readiness(r).target_up);
  CHECK(pass::readiness(r).reason.find("connection refused") != std::string::npos);
  CHECK(f.sink.rpcs() == 0);
}

TEST_CASE("pass: a failing step fails the pass, status and readiness say which", "[pass]") {
  Fixture f;
  const auto docs = documents(2);
  const auto key = reconcile::override_key(docs.overrides[0].scope, docs.overrides[0].type);
  f.sink.fail_key(key, Error{ErrorCode::invalid_input, "FlyteAdmin says no"});
  auto r = f.run(docs, pass::Mode::execute);
  CHECK(r.outcome == pass::Outcome::failed);
  CHECK_FALSE(r.target_down());
  CHECK(pass::readiness(r).target_up);
  CHECK_FALSE(pass::readiness(r).converged);
  auto last = pass::last_sync_json(r, "test");
  CHECK(last["outcome"] == "failed");
  CHECK(last["failedSteps"] == 1);
  bool named = false;
  for (const auto& o : pass::objects_json(r)) named |= o["key"] == key && o["state"] == "failed";
  CHECK(named);
}

// Issue 13: history is one entry per pass that changed something (with each step's fields),
// refused or failed; passes with nothing to do are counted, not stored.
TEST_CASE("pass: history records changes with their fields, no-op passes are counted", "[pass]") {
  Fixture f;
  REQUIRE(f.run(documents(2, "blue"), pass::Mode::execute).outcome == pass::Outcome::success);
  for (int i = 0; i < 3; ++i) f.run(documents(2, "blue"), pass::Mode::execute);
  f.run(documents(2, "blue"), pass::Mode::plan);  // plan mode records nothing
  REQUIRE(f.run(documents(2, "green"), pass::Mode::execute).outcome == pass::Outcome::success);
  auto h = f.ledger->history(ledger::HistoryQuery{});
  REQUIRE(h);
  REQUIRE(h->size() == 2);
  CHECK((*h)[1].noops == 3);
  CHECK((*h)[1].step_list.size() == 4);  // 2 projects + 2 overrides created
  const auto& change = (*h)[0];
  CHECK(change.outcome == "success");
  CHECK(change.trigger == "apply");
  REQUIRE(change.step_list.size() == 2);
  CHECK(change.step_list[0].action == "update");
  CHECK(change.step_list[0].changes.find("executionClusterLabel.value") != std::string::npos);
  const auto text = pass::history_text(*h);
  CHECK(text.find("~ executionClusterLabel.value: live \"blue\", Git \"green\"") !=
        std::string::npos);
  CHECK(text.find("then 3 pass(es) with nothing to do") != std::string::npos);
  auto j = pass::history_json(*h);
  CHECK(j[0]["steps"][0]["changes"][0]["git"] == "green");
  CHECK(j[1]["noopPassesAfter"] == 3);
  auto bad = pass::history_query({{"limit", "0"}});
  CHECK_FALSE(bad);
  auto q = pass::history_query({{"limit", "5"}, {"project", "p0"}});
  REQUIRE(q);
  CHECK(q->limit == 5);
  CHECK(q->project == "p0");
}

}  // namespace FLYTECD_UNITY_ID
