#pragma once

// The daemon's state as one value: what `flytecd run` reads and writes, the revision in force,
// the source's health, suspension, the last reload, the last pass and readiness. The reconcile
// thread and the HTTP handlers never edit it in place: each change makes a new value that
// replaces the old one whole (StateCell). Status JSON, readiness and the gauges are pure
// functions of it.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "daemon/ledger/ledger.hpp"
#include "daemon/model/diagnostic.hpp"
#include "daemon/pass/ownership.hpp"
#include "daemon/pass/pass.hpp"
#include "daemon/pass/views.hpp"
#include "daemon/run/suspension.hpp"

namespace flytecd::metrics {
struct FlytecdMetrics;
}

namespace flytecd::run {

// A revision the source offered that failed validation and was rejected whole.
struct Rejection {
  std::string revision;
  std::string time;                 // RFC 3339
  std::vector<std::string> errors;  // file:line:column: message, at most 100
};
// The rejection of `revision` at `time`: the first 100 of its error diagnostics. Pure.
Rejection rejection_of(const std::string& revision, const model::Diagnostics& diagnostics,
                       std::string time);

// The outcome of the last SIGHUP.
struct Reload {
  std::string time;   // RFC 3339
  std::string error;  // "" when the new configuration is in force
  bool ok() const { return error.empty(); }
};

// How the last pass ended: a report, or — when the pass was abandoned because something in it
// threw — the internal error (the report of the pass before stays the one objects come from).
struct LastPass {
  std::string reason;  // trigger: startup, interval, webhook github, …
  std::string time;    // RFC 3339, when it ended
  std::string revision;
  std::string abandoned;  // the internal error of an abandoned pass ("" otherwise)
  // The last sync request (POST /api/v1/sync) made before this pass started: the pass serves
  // every request up to it (`flytecd sync --wait` waits for its own).
  uint64_t request = 0;
};

// Where ownership came from, as status shows it: a rebuild stays visible (with its time) until
// another one; "none" and "unavailable" last only while they are true.
struct OwnershipShown {
  pass::Ownership ownership;
  std::string record;  // where the applied-revision record is kept
  std::string time;    // RFC 3339 of the pass that found it ("" for the ledger)
};

struct DaemonState {
  // The wiring in force.
  std::string source, target;
  bool target_is_emulator = false;
  int http_port = 0;
  // The revision in force ("" until one loaded).
  std::string revision, subject, author;
  int64_t committed_at = 0;
  std::optional<Rejection> rejected;
  // The source's problem (unreachable, fetch failed, revision rejected); "" when the revision in
  // force is the source's head.
  std::string source_error;
  // The last failure; cleared by a successful pass while the source is healthy.
  std::string last_error;
  bool failing = false;
  std::optional<Suspension> suspension;
  // Projects whose writes are suspended (planned, not written; the others apply).
  ProjectSuspensions suspended_projects;
  // The last sync request a finished pass served (also one that ran no pass: not the leader, no
  // valid revision); requests are numbered from 1 by the daemon.
  uint64_t sync_served = 0;
  std::optional<Reload> reload;
  // The last pass that finished; `last` is its report (lastSync), `report` the one objects,
  // drift, registrations and counts come from: the same after a whole pass, the last whole
  // pass's with the targeted projects replaced after a targeted one (pass::merged_view).
  std::optional<LastPass> last_pass;
  std::shared_ptr<const pass::Report> report;
  std::shared_ptr<const pass::Report> last;
  std::optional<OwnershipShown> ownership;
  pass::ObjectCounts counts;  // managed / unmanaged / drifted, against the ledger
  // The ledger's revision and time of each managed object's last write after the last pass
  // (status objects' `revision` and `lastChange`); shared, as the state is copied on each change.
  std::shared_ptr<const std::map<std::string, ledger::Ledger::Applied>> applied;
  // Readiness of a replica that reconciles.
  bool first_success = false, target_up = false;
  std::string not_ready = "no reconcile has finished yet";
};

// The overview's counts: managed (the ledger), in sync (observed equal to Git in the last pass;
// a pass that only planned: the plan's), drifted and unmanaged (the last plan), failed
// registrations (the last pass). Pure.
struct OverviewCounts {
  size_t managed = 0, in_sync = 0, drifted = 0, unmanaged = 0, failed_registrations = 0;
};
OverviewCounts overview_counts(const DaemonState& s);

// GET /api/v1/status: every member from the state; `leader` is the live leader-election state
// ({"enabled": false} without leader election). Pure.
nlohmann::json status_json(const DaemonState& s, const nlohmann::json& leader);
// /readyz of a replica that reconciles (a follower answers from its lease instead). Pure.
bool ready(const DaemonState& s);
// The gauges that describe the state: suspended, target up, revision, objects, registrations.
void show(const DaemonState& s, metrics::FlytecdMetrics& metrics);

// The state after a pass's report: last pass, report, counts, ownership (sticky rebuilds),
// readiness, and the failure cleared when the pass succeeded with a healthy source. Returns
// whether a failure was cleared (recovered). Pure; `time` and `record` are given.
// `view`: what objects and counts come from (null: `report`).
bool after_pass(DaemonState& s, std::shared_ptr<const pass::Report> report,
                const std::string& reason, const std::string& time, const std::string& record,
                const pass::ObjectCounts& counts, uint64_t request = 0,
                std::shared_ptr<const pass::Report> view = nullptr);
// Records a failure; returns whether it is the first since a success (a transition).
bool fail(DaemonState& s, const std::string& what);

// The state in force, replaced whole on each change; status text rendered at most once per
// change for the many clients that poll it. `on_change` sees each new state in order, under the
// cell's lock (the daemon's gauges: show()). Thread-safe.
class StateCell {
 public:
  using Observer = std::function<void(const DaemonState&)>;
  explicit StateCell(DaemonState initial = {}, Observer on_change = {})
      : m_state(std::make_shared<const DaemonState>(std::move(initial))),
        m_on_change(std::move(on_change)) {}
  std::shared_ptr<const DaemonState> get() const;
  // Applies `change` to a copy of the state in force and puts the copy in force; the changes
  // of concurrent callers are serialized. Returns the new state.
  std::shared_ptr<const DaemonState> update(const std::function<void(DaemonState&)>& change);
  // status_json(state, leader) as compact JSON (invalid UTF-8 replaced), the same pointer until
  // the state or `leader` changes.
  std::shared_ptr<const std::string> status_text(const nlohmann::json& leader);
  uint64_t renders() const;  // how many times status_text rendered (tests)

 private:
  mutable std::mutex m_mu;
  std::shared_ptr<const DaemonState> m_state;
  Observer m_on_change;
  uint64_t m_version = 0;
  uint64_t m_rendered_version = UINT64_MAX;
  nlohmann::json m_rendered_leader;
  std::shared_ptr<const std::string> m_rendered;
  uint64_t m_renders = 0;
};

}  // namespace flytecd::run
