#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "daemon/ledger/ledger.hpp"
#include "daemon/reconcile/plan.hpp"
#include "sinks/sink.hpp"

namespace flytecd::reconcile {

struct ApplyOptions {
  std::string revision;  // recorded in the ledger with every object and in the audit history
  Policy policy;
  int parallelism = 8;  // steps in flight within one phase
  int max_rounds = 3;   // apply, re-observe, apply what is left (FlyteAdmin quirks), verify
  // Set (e.g. on SIGTERM) to stop starting new steps; steps in flight finish and are recorded.
  const std::atomic<bool>* cancel = nullptr;
};

struct StepResult {
  Step step;
  Status status = ok_status();
  int round = 1;
};

struct ApplyReport {
  Plan first_plan;                  // what the first observation called for
  std::vector<StepResult> results;  // every step executed, in completion order
  int rounds = 0;
  bool converged = false;  // the final re-observation needs no further step
  bool refused = false;    // the mass-prune guard refused the plan
  std::string error;       // observe/ledger failure, refusal, or non-convergence
  size_t rpc_steps = 0;    // steps that issued RPCs
  size_t failed = 0;
  bool ok() const { return error.empty() && converged; }  // failures healed by a later round are ok
};

// One reconcile: observe -> plan -> execute (phase by phase: projects; override deletes, broad
// scopes first; writes; project archives) -> record each success in the ledger -> re-observe and
// repeat until nothing is left or max_rounds. A refused plan executes nothing. `on_step` is called
// (from worker threads, serialized) after each step.
ApplyReport apply(sinks::Sink& sink, ledger::Ledger& ledger, const State& desired,
                  const ApplyOptions& options,
                  const std::function<void(const StepResult&)>& on_step = {});

}  // namespace flytecd::reconcile
