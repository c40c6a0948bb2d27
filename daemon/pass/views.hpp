#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "daemon/metrics/flytecd_metrics.hpp"
#include "daemon/pass/pass.hpp"

namespace flytecd::pass {

// Pure views of a pass report: every command and the daemon render a pass through these, so
// `apply`, `run` and `plan --live` show the same plan for the same revision and live state.

// The plan as JSON: the overrides/projects plan (reconcile::render_json) plus "revision",
// "outcome", "registrations" (one object per registration, registration::to_json) and
// "registrationChanges". `max_steps` bounds the step list (0 = all); the rest is counted in
// "stepsOmitted".
nlohmann::ordered_json plan_json(const Report& report, size_t max_steps = 0);

// `plan --live` output: text or markdown (overrides, then registrations).
std::string plan_text(const Report& report, bool markdown);

// One line: "projects: +0 ~0 -0 · overrides: … · registrations: 1 to register, 0 to activate,
// 0 to remove".
std::string summary(const Report& report);

// The daemon's view after a targeted pass (Report::targeted used): `whole`'s objects, drift,
// unmanaged and orphaned objects and registrations outside the targeted projects, and the
// targeted pass's for its projects; everything else (revision, outcome, steps, counts of the
// pass) is the targeted pass's. Status, the overview and the drift counts read this, so a
// targeted pass does not hide what the last whole pass saw elsewhere. Pure.
Report merged_view(const Report& whole, const Report& targeted);

// What a command concludes from a pass: its exit code and the line that says so, made from one
// value so the two cannot disagree. Pure.
struct Verdict {
  int exit_code = 0;
  std::string line;  // the command's last line ("converged", "not converged: 1 failed: …")
  std::string word;  // one word for JSON: converged | not-converged | refused | no-changes |
                     // changes | drift | failed
};
// plan --live: 1 refused ("REFUSED: …") or failed ("FAILED: …"), 2 changes ("changes pending",
// registrations included) or drift left in place, 0 "no changes".
Verdict plan_verdict(const Report& report);
// apply: 0 "converged" (every step and every registration ok), 1 "not converged: N failed: <the
// first error>", "not converged: <why>" (not observed), or "REFUSED: …".
Verdict apply_verdict(const Report& report);
int plan_exit_code(const Report& report);   // plan_verdict(report).exit_code
int apply_exit_code(const Report& report);  // apply_verdict(report).exit_code

// The daemon's readiness after a pass: ready once a pass's overrides converged with the target
// reachable; a failing registration fails only itself (reported, not unready).
struct Readiness {
  bool target_up = true;
  bool converged = false;  // the overrides apply converged (execute mode)
  std::string reason;      // why not ready ("" when ready)
};
Readiness readiness(const Report& report);

// The status document's parts (GET /api/v1/status). lastSync.scope: scope_json.
nlohmann::json scope_json(const Report& report);
nlohmann::json last_sync_json(const Report& report, const std::string& reason);
nlohmann::json objects_json(const Report& report);
nlohmann::json drift_json(const Report& report);  // overrides and registration activation
nlohmann::json registrations_json(const Report& report);

// Objects by kind and state for flytecd_objects (from the plan and the ledger's managed keys).
struct ObjectCounts {
  double managed_projects = 0, managed_overrides = 0;
  double unmanaged_projects = 0, unmanaged_overrides = 0;
  double drifted_projects = 0, drifted_overrides = 0;
};
// `managed`: the ledger's count of managed objects per kind of key (Ledger::managed_counts).
ObjectCounts object_counts(const Report& report, const std::map<std::string, size_t>& managed);

// Registrations by state for flytecd_registrations.
std::map<std::string, double> registrations_by_state(const Report& report);

// The ledger's history (newest first): JSON for `history -o json` and GET /api/v1/history, and
// text (one block per pass: when, revision and subject, trigger, outcome, then its steps with
// their field changes).
nlohmann::ordered_json history_json(const std::vector<ledger::HistoryEntry>& entries);
std::string history_text(const std::vector<ledger::HistoryEntry>& entries);
// The history query of ?limit=&object=&project= (limit 1..1000, default 20). Errors:
// invalid_input for a limit that is not a number in range.
Result<ledger::HistoryQuery> history_query(const std::map<std::string, std::string>& params);
// GET /api/v1/history's body: `ledger`'s history for the query of `params`, as history_json.
// Errors: history_query's, and the ledger's.
Result<std::string> history_body(const ledger::Ledger& ledger,
                                 const std::map<std::string, std::string>& params);

// The flytecd_reconcile_total result of a pass (success also moves "last successful sync"):
// refused for a refusal, success for a pass that succeeded, failed otherwise, with one quirk
// kept on purpose: a failed pass whose overrides apply converged (execute mode; what failed was a
// registration, e.g. an unreachable registry) counts as success, as a failing registration fails
// only itself for readiness too (readiness().converged). Plan mode never converges an apply, so
// a failed plan is failed.
metrics::ReconcileResult reconcile_result(const Report& report);

// One line per drifted project or override, in plan order: "key: detail", then "; " and
// reconcile::change_line for each changed field ("…; ~ path: \"64\" → \"16\" (file:line)").
// Registration activation drift is not in them (it is in status and the log).
std::vector<std::string> drift_lines(const Report& report);

// The daemon's drift notification for a pass: only drift not seen by the previous pass is news.
struct DriftNotice {
  std::vector<std::string> lines;  // drift_lines of the objects newly drifted (the details)
  // Those of `lines` that stay in place (not reverted: self-heal off, or the pass only planned
  // because the daemon is suspended): the daemon logs them.
  std::vector<std::string> left_in_place;
  std::set<std::string> drifted;  // every key drifted now: `known` for the next pass
  // "2 object(s) changed outside Git (reverted)" | "(self-heal off)" | "(suspended, left in
  // place)"; "" when `lines` is empty (nothing to send).
  std::string summary;
};
// `known`: the keys drifted in the previous pass; `self_heal`: the policy in force. Pure.
DriftNotice drift_notice(const Report& report, const std::set<std::string>& known, bool self_heal);

// The daemon's refusal notification, once per refused revision. `notified` is the revision whose
// refusal was last sent ("": none). True when this pass's refusal is to be sent; updates
// `notified`: set by a refusal, kept through a pass of the same revision that failed (a target
// that comes and goes does not repeat it), cleared by a pass that succeeded or is of another
// revision (that revision refused again later is news again). Pure.
bool refusal_is_news(const Report& report, std::string& notified);

// What a refusal notification lists besides the guard's reason: for each kind of object flytecd
// manages, what the revision would destroy ("overrides: 53 of 54 managed would be deleted, 1
// declared"). Empty when the pass was not refused.
std::vector<std::string> refusal_lines(const Report& report);

}  // namespace flytecd::pass
