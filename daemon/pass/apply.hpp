#pragma once

#include <atomic>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "daemon/common/breaker.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/reconcile/guard.hpp"
#include "daemon/reconcile/plan.hpp"
#include "sinks/sink.hpp"

namespace flytecd::pass {

struct ApplyOptions {
  std::string revision;  // recorded in the ledger with every object and in the audit history
  reconcile::Policy policy;
  // Worker threads for the steps of one phase, for a sink without an asynchronous transport (one
  // with it keeps Sink::async_window() steps in flight from the calling thread instead).
  int parallelism = 8;
  int max_rounds = 3;  // apply, re-observe, apply what is left (FlyteAdmin quirks), verify
  // Set (e.g. on SIGTERM) to stop starting new steps; steps in flight finish and are recorded.
  const std::atomic<bool>* cancel = nullptr;
  // Stops the pass when FlyteAdmin stops answering (consecutive unavailable/timeout steps): no new
  // step starts, steps in flight finish and are recorded. Shared with the registrations of the
  // same pass so they do not start either; null: apply uses a breaker of its own.
  CircuitBreaker* breaker = nullptr;
  // The plan of an observation the caller already made and guarded (the reconcile pass): round 1
  // executes it instead of observing again. Null: round 1 observes, plans and applies the guard's
  // prune rules (guard_pass) itself.
  const reconcile::Plan* first_plan = nullptr;
  // Narrows every re-observation and ledger read to the pass's scope (--project); null: all.
  std::function<void(reconcile::State& live, reconcile::Managed& managed)> narrow;
  // A targeted pass (pass.hpp): re-observations read only these projects (Sink::observe_scoped)
  // and the ledger only their rows; everything(): all.
  sinks::ObserveScope observe_scope;
  // A targeted pass: the guard of each re-observation counts against everything managed and
  // declared, as the pass's own guard does (null: the scope's counts).
  std::function<void(reconcile::GuardInput&)> widen_guard;
};

// What this pass learned about one desired object from FlyteAdmin's answers (never from the plan
// alone): synced = observed equal to Git in this pass's last observation (or written and then so
// observed); pending = a step is needed that did not run, or ran but was not verified by a later
// observation; drifted = changed outside Git and left so (self-heal off); failed = its step
// failed; unknown = FlyteAdmin was not observed in this pass.
enum class ObjectState { synced, pending, drifted, failed, unknown };
std::string_view to_string(ObjectState s);

struct ObjectStatus {
  std::string key;
  ObjectState state = ObjectState::unknown;
  std::string detail;  // why it is not synced (the step's error, or the pass's)
};

struct StepResult {
  reconcile::Step step;
  Status status = ok_status();
  int round = 1;
};

struct ApplyReport {
  reconcile::Plan
      first_plan;  // what the first observation called for (empty when options.first_plan)
  std::vector<StepResult> results;  // every step executed, in completion order
  int rounds = 0;
  bool converged = false;  // the final re-observation needs no further step
  bool refused = false;    // the mass-prune guard refused the plan
  std::string error;       // observe/ledger failure, refusal, target down, or non-convergence
  // The category of `error`: unavailable/timeout when FlyteAdmin could not be reached (an
  // observation failed so, or the breaker opened), unauthenticated, conflict for a refusal, ...
  ErrorCode error_code = ErrorCode::internal;
  size_t not_started = 0;  // steps of the last round that never started (breaker, cancel)
  std::vector<ObjectStatus> objects;  // every desired project and override, in key order
  size_t rpc_steps = 0;               // steps that issued RPCs
  // Wall time spent running steps, every round's phases summed (not observing or planning).
  double write_seconds = 0;
  size_t failed = 0;
  bool ok() const { return error.empty() && converged; }  // failures healed by a later round are ok
  // The pass failed because FlyteAdmin could not be reached.
  bool target_down() const {
    return !error.empty() &&
           (error_code == ErrorCode::unavailable || error_code == ErrorCode::timeout);
  }
};

// The overrides part of one reconcile (the pass, daemon/pass, wraps it): observe -> plan -> execute
// (phase by phase: projects; override deletes, broad scopes first; writes; project archives) ->
// record each success in the ledger -> re-observe and repeat until nothing is left or max_rounds. A
// refused plan executes nothing. When the breaker opens (FlyteAdmin unreachable) the pass stops
// within the steps in flight and reports error_code unavailable. `on_steps` is called (serialized)
// with the steps that ended together once their ledger rows are written: one step at a time from
// worker threads, or each group of a sink's asynchronous steps from this thread (so a reporter
// can write a group's lines at once).
using StepsCallback = std::function<void(std::span<const StepResult>)>;
ApplyReport apply(sinks::Sink& sink, ledger::Ledger& ledger, const reconcile::State& desired,
                  const ApplyOptions& options, const StepsCallback& on_steps = {});

// The per-object view of one pass: `last_plan` is the plan of the pass's last successful
// observation (null: none succeeded), `last_round` the results of the steps run from it.
std::vector<ObjectStatus> object_statuses(const reconcile::State& desired,
                                          const reconcile::Plan* last_plan,
                                          std::span<const StepResult> last_round,
                                          const std::string& pass_error);

}  // namespace flytecd::pass
