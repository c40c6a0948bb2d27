// Pure views of a pass report (daemon/pass/views): the summary line, the reconcile metric result,
// and what the daemon notifies (drift, refusals).
#include "daemon/pass/views.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

TEST_CASE("views: a version bump is a registration change in the summary line", "[views]") {
  pass::Report r;
  registration::RegistrationOutcome bump;
  bump.key = "registration/p/d/core";
  bump.state = flytecd::registration::RegistrationState::registered;
  bump.version = "v2";
  bump.previous_version = "v1";
  registration::RegistrationOutcome added = bump;
  added.key = "registration/p/d/new";
  added.previous_version.clear();
  r.registrations.items = {bump, added};
  const auto s = pass::summary(r);
  CHECK(s.find("overrides: +0 ~0 -0") != std::string::npos);
  CHECK(s.find("registrations: +1 ~1 -0") != std::string::npos);
  r.registrations.items = {bump};
  r.registrations.items[0].state =
      flytecd::registration::RegistrationState::register_;  // plan: would register
  CHECK(pass::summary(r).find("registrations: +0 ~1 -0") != std::string::npos);
}

namespace {

reconcile::DriftItem drifted(const std::string& key, bool healed) {
  reconcile::DriftItem d;
  d.kind = reconcile::ObjectKind::override_attr;
  d.key = key;
  d.detail = "changed outside Git";
  d.healed = healed;
  reconcile::FieldChange c;
  c.path = "clusterResourceAttributes.attributes.projectQuotaCpu";
  c.before = "\"64\"";
  c.after = "\"16\"";
  c.source = "projects/p/d.yaml:9";
  d.changes.push_back(c);
  return d;
}

pass::Report executed(pass::Outcome outcome, const std::string& revision) {
  pass::Report r;
  r.mode = pass::Mode::execute;
  r.outcome = outcome;
  r.revision = revision;
  return r;
}

}  // namespace

TEST_CASE("views: the reconcile metric result of each outcome", "[views]") {
  using metrics::ReconcileResult;
  auto r = executed(pass::Outcome::success, "a");
  CHECK(pass::reconcile_result(r) == ReconcileResult::success);
  r.outcome = pass::Outcome::refused;
  CHECK(pass::reconcile_result(r) == ReconcileResult::refused);
  r.outcome = pass::Outcome::failed;  // e.g. the target was not observed: nothing applied
  CHECK(pass::reconcile_result(r) == ReconcileResult::failed);
  r.applied.converged = true;
  r.applied.error = "observe: connection refused";
  CHECK(pass::reconcile_result(r) == ReconcileResult::failed);
  // A refusal is a refusal whatever the apply report says.
  r.applied.error.clear();
  r.outcome = pass::Outcome::refused;
  CHECK(pass::reconcile_result(r) == ReconcileResult::refused);
}

TEST_CASE(
    "views: a failed pass whose overrides converged counts as a success (a registration failed)",
    "[views]") {
  auto r = executed(pass::Outcome::failed, "a");
  r.applied.converged = true;  // overrides applied and verified
  registration::RegistrationOutcome bad;
  bad.key = "registration/p/d/core";
  bad.state = flytecd::registration::RegistrationState::failed;
  bad.message = "registry unreachable";
  r.registrations.items = {bad};
  CHECK(pass::reconcile_result(r) == metrics::ReconcileResult::success);
  // Plan mode converges no apply: a failed plan is failed.
  r.mode = pass::Mode::plan;
  r.applied = pass::ApplyReport{};
  CHECK(pass::reconcile_result(r) == metrics::ReconcileResult::failed);
}

TEST_CASE("views: drift lines carry the key, the detail and every field change", "[views]") {
  pass::Report r;
  r.plan.drift = {drifted("override/p/d//CLUSTER_RESOURCE", false)};
  registration::RegistrationOutcome reg;
  reg.key = "registration/p/d/core";
  reg.state = flytecd::registration::RegistrationState::in_sync;
  reg.drift = {"launch plan lp deactivated outside Git"};
  r.registrations.items = {reg};
  const auto lines = pass::drift_lines(r);
  REQUIRE(lines.size() == 1);  // registration activation drift is not a notification line
  CHECK(lines[0] ==
        "override/p/d//CLUSTER_RESOURCE: changed outside Git; ~ "
        "clusterResourceAttributes.attributes.projectQuotaCpu: live \"64\", Git \"16\" "
        "(projects/p/d.yaml:9)");
}

TEST_CASE("views: a drift notice holds only drift the previous pass did not see", "[views]") {
  auto r = executed(pass::Outcome::success, "a");
  r.plan.drift = {drifted("override/p/d//A", false), drifted("override/p/d//B", true)};
  auto first = pass::drift_notice(r, {}, /*self_heal=*/false);
  REQUIRE(first.lines.size() == 2);
  CHECK(first.lines == pass::drift_lines(r));
  CHECK(first.left_in_place == std::vector<std::string>{first.lines[0]});  // B is reverted
  CHECK(first.drifted == std::set<std::string>{"override/p/d//A", "override/p/d//B"});
  CHECK(first.summary == "2 object(s) changed outside Git (self-heal off)");
  // The next pass sees A still drifted: nothing new, nothing to send.
  r.plan.drift = {drifted("override/p/d//A", false)};
  auto again = pass::drift_notice(r, first.drifted, false);
  CHECK(again.lines.empty());
  CHECK(again.left_in_place.empty());
  CHECK(again.summary.empty());
  CHECK(again.drifted == std::set<std::string>{"override/p/d//A"});
  // B drifts again after being reverted: news again.
  r.plan.drift = {drifted("override/p/d//A", false), drifted("override/p/d//B", true)};
  auto back = pass::drift_notice(r, again.drifted, true);
  REQUIRE(back.lines.size() == 1);
  CHECK(back.lines[0].starts_with("override/p/d//B: "));
  CHECK(back.left_in_place.empty());
  CHECK(back.summary == "1 object(s) changed outside Git (reverted)");
  // Suspended (the pass only planned), even drift a step would revert is left in place.
  r.mode = pass::Mode::plan;
  auto suspended = pass::drift_notice(r, {}, true);
  CHECK(suspended.left_in_place.size() == 2);
  CHECK(suspended.summary == "2 object(s) changed outside Git (suspended, left in place)");
}

TEST_CASE("views: a refusal is news once per refused revision", "[views]") {
  std::string notified;
  CHECK_FALSE(pass::refusal_is_news(executed(pass::Outcome::success, "a"), notified));
  CHECK(pass::refusal_is_news(executed(pass::Outcome::refused, "b"), notified));
  CHECK(notified == "b");
  // Every interval refuses b again: not news.
  CHECK_FALSE(pass::refusal_is_news(executed(pass::Outcome::refused, "b"), notified));
  CHECK_FALSE(pass::refusal_is_news(executed(pass::Outcome::refused, "b"), notified));
  // A failed pass of b (the target went away before the guard) does not make it news again.
  CHECK_FALSE(pass::refusal_is_news(executed(pass::Outcome::failed, "b"), notified));
  CHECK_FALSE(pass::refusal_is_news(executed(pass::Outcome::refused, "b"), notified));
  // A new refused revision is.
  CHECK(pass::refusal_is_news(executed(pass::Outcome::refused, "c"), notified));
  CHECK(notified == "c");
  // c allowed (a reload with allowMassPrune) and then refused again: news again.
  CHECK_FALSE(pass::refusal_is_news(executed(pass::Outcome::success, "c"), notified));
  CHECK(notified.empty());
  CHECK(pass::refusal_is_news(executed(pass::Outcome::refused, "c"), notified));
  // Another revision's pass, even a failed one, ends c's refusal.
  CHECK_FALSE(pass::refusal_is_news(executed(pass::Outcome::failed, "d"), notified));
  CHECK(pass::refusal_is_news(executed(pass::Outcome::refused, "c"), notified));
}

TEST_CASE("views: refusal lines say what the refused revision would destroy, per kind", "[views]") {
  auto r = executed(pass::Outcome::refused, "a");
  r.guard_input.documents = 1;
  r.guard_input.kinds = {{"projects", 2, 1, 1},
                         {"overrides", 54, 1, 53},
                         {"registrations", 0, 0, 0},
                         {"launch plans", 24, 0, 24}};
  CHECK(pass::refusal_lines(r) ==
        std::vector<std::string>{"projects: 1 of 2 managed would be archived, 1 declared",
                                 "overrides: 53 of 54 managed would be deleted, 1 declared",
                                 "launch plans: 24 of 24 managed would be deactivated, 0 "
                                 "declared"});
  r.outcome = pass::Outcome::success;
  CHECK(pass::refusal_lines(r).empty());
}

TEST_CASE("views: the verdict line and the exit code come from one value", "[views][verdict]") {
  pass::Report r;
  r.mode = pass::Mode::execute;
  r.observed = true;
  // Converged.
  auto v = pass::apply_verdict(r);
  CHECK(v.exit_code == 0);
  CHECK(v.line == "converged");
  // A registration failed: never "converged", and exit 1 with the first error.
  registration::RegistrationOutcome broken;
  broken.key = "registration/p/d/core";
  broken.state = flytecd::registration::RegistrationState::failed;
  broken.message = "packages/x.tgz: workflow w: node n1 input a: STRING is not castable";
  r.registrations.items = {broken};
  r.outcome = pass::Outcome::failed;
  v = pass::apply_verdict(r);
  CHECK(v.exit_code == 1);
  CHECK(v.line ==
        "not converged: 1 failed: registration/p/d/core: packages/x.tgz: workflow w: "
        "node n1 input a: STRING is not castable");
  CHECK(pass::apply_exit_code(r) == v.exit_code);
  // Refused: one REFUSED line, exit 1, for apply and plan alike.
  r.outcome = pass::Outcome::refused;
  r.guard.reason = "refusing a revision with zero documents";
  CHECK(pass::apply_verdict(r).line ==
        "REFUSED: refusing a revision with zero documents (nothing of this revision was executed)");
  CHECK(pass::plan_verdict(r).exit_code == 1);
  CHECK(pass::plan_verdict(r).line.rfind("REFUSED: ", 0) == 0);
  const std::string text = pass::plan_text(r, false);
  CHECK(text.find("no changes") == std::string::npos);  // never "no changes" after a refusal
}

TEST_CASE("views: a plan whose only change is a registration says so and exits 2",
          "[views][verdict]") {
  pass::Report r;
  r.observed = true;
  registration::RegistrationOutcome bump;
  bump.key = "registration/p/d/core";
  bump.state = flytecd::registration::RegistrationState::register_;
  bump.version = "v2";
  bump.previous_version = "v1";
  r.registrations.items = {bump};
  const auto v = pass::plan_verdict(r);
  CHECK(v.exit_code == 2);
  CHECK(v.line == "changes pending");
  CHECK(pass::plan_exit_code(r) == 2);
  const std::string text = pass::plan_text(r, false);
  // The text ends with the summary (registrations counted) and the verdict.
  CHECK(text.find("registrations: +0 ~1 -0\nchanges pending\n") != std::string::npos);
  CHECK(text.find("no changes") == std::string::npos);
  r.registrations.items.clear();
  CHECK(pass::plan_verdict(r).line == "no changes");
  CHECK(pass::plan_verdict(r).exit_code == 0);
}

TEST_CASE("views: history names a registration's key once per line", "[views][history]") {
  ledger::HistoryEntry e;
  e.revision = "0123456789abcdef0123456789abcdef01234567";
  e.outcome = "success";
  e.step_list.push_back(ledger::HistoryStep{
      "registered", "registration/p/d/core", "ok",
      "registration/p/d/core: registered v2 (was v1) from packages/core.tgz", ""});
  const std::string text = pass::history_text({e});
  CHECK(text.find("  registered registration/p/d/core: registered v2 (was v1) from "
                  "packages/core.tgz\n") != std::string::npos);
  size_t n = 0;
  for (size_t at = text.find("registration/p/d/core"); at != std::string::npos;
       at = text.find("registration/p/d/core", at + 1))
    ++n;
  CHECK(n == 1);
}

}  // namespace FLYTECD_UNITY_ID
