#include "daemon/pass/apply.hpp"

#include "daemon/common/worker_pool.hpp"
#include "daemon/reconcile/guard.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

namespace flytecd::pass {

using namespace reconcile;  // the executor runs the core's plan: its types throughout

namespace {

enum class Phase { projects, removals, writes, archives };

Phase phase_of(const Step& s) {
  if (s.kind == ObjectKind::project)
    return s.action == Action::remove ? Phase::archives : Phase::projects;
  return s.action == Action::remove || s.action == Action::replace ? Phase::removals
                                                                   : Phase::writes;
}

int level_rank(const Step& s) {
  const OverrideState* o = s.desired ? &*s.desired : s.live ? &*s.live : nullptr;
  if (!o) return 0;
  return o->scope.level() == model::Level::project          ? 0
         : o->scope.level() == model::Level::project_domain ? 1
                                                            : 2;
}

// Runs `steps` on up to `parallelism` threads; once `stop()` holds no further step starts.
void run_parallel(const std::vector<const Step*>& steps, int parallelism,
                  const std::function<bool()>& stop, const std::function<void(const Step&)>& fn) {
  run_jobs(
      steps.size(), parallelism, [&](size_t i) { fn(*steps[i]); }, stop);
}

}  // namespace

ApplyReport apply(sinks::Sink& sink, ledger::Ledger& ledger, const State& desired,
                  const ApplyOptions& options,
                  const std::function<void(const StepResult&)>& on_step) {
  ApplyReport report;
  std::mutex mu;
  CircuitBreaker own_breaker;
  CircuitBreaker& breaker = options.breaker ? *options.breaker : own_breaker;
  auto fail = [&](ErrorCode code, std::string message) {
    report.error_code = code;
    report.error = std::move(message);
  };
  // The plan of the last observation that succeeded, and where its steps' results begin in
  // report.results (kept as a range, not a copy: a cold apply holds ~40k steps).
  std::optional<Plan> owned_plan;  // a plan of this call's own observation
  const Plan* last_plan = nullptr;
  size_t last_round_begin = 0;
  auto stopping = [&] { return (options.cancel && options.cancel->load()) || breaker.open(); };

  for (int round = 1; round <= options.max_rounds + 1; ++round) {
    if (options.cancel && options.cancel->load()) {
      fail(ErrorCode::internal, "cancelled");
      break;
    }
    if (auto down = breaker.error()) {  // opened by an earlier user of a shared breaker
      fail(down->code, "flyteadmin: " + down->message + "; nothing was started");
      break;
    }
    if (round == 1 && options.first_plan) {
      last_plan = options.first_plan;  // the caller keeps it; no copy of a cold pass's ~40k steps
    } else {
      auto live = sink.observe();
      if (!live) {
        breaker.trip(live.error());  // the observation already retried every call it made
        fail(live.error().code, live.error().message);
        break;
      }
      breaker.record_success();
      auto managed = ledger.managed();
      if (!managed) {
        fail(managed.error().code, managed.error().message);
        break;
      }
      if (options.narrow) options.narrow(*live, *managed);
      owned_plan.emplace(plan(desired, *live, *managed, options.policy));
      {
        // Every plan of this call's own observation — a standalone first round, and each later
        // round of a pass, whose live state may have changed since the pass's guard saw it —
        // passes the guard's prune rules (the pass guards its first plan before it calls this).
        Policy prune_rules = options.policy;
        prune_rules.allow_empty = true;
        auto verdict = guard_pass(guard_input(*owned_plan, desired, 1, *managed, {}), prune_rules);
        if (verdict.refused) {
          owned_plan->refused = true;
          owned_plan->refusal = verdict.reason;
        }
      }
      last_plan = &*owned_plan;
    }
    const Plan& p = *last_plan;
    if (round == 1 && !options.first_plan) report.first_plan = p;
    report.rounds = round;
    last_round_begin = report.results.size();
    if (p.refused) {
      report.refused = true;
      fail(ErrorCode::conflict, p.refusal);
      break;
    }
    if (p.steps.empty()) {
      // A whole-document sink re-asserts what it holds (e.g. a restart that failed before).
      if (Status c = sink.commit(options.revision); !c) {
        fail(c.error().code, c.error().message);
        break;
      }
      report.converged = true;
      break;
    }
    if (round > options.max_rounds) {
      fail(ErrorCode::internal, "did not converge after " + std::to_string(options.max_rounds) +
                                    " rounds; " + std::to_string(p.steps.size()) +
                                    " steps still pending");
      break;
    }
    size_t failed_before = report.failed;
    auto execute = [&](const Step& s) {
      Status st = sink.execute(s);
      if (s.rpc_count() > 0) breaker.record(st);
      if (st) {
        Status recorded = ok_status();
        if (s.kind == ObjectKind::project && s.action != Action::remove)
          recorded = ledger.record(s.key, "project", hash_of(*s.project), options.revision);
        else if (s.action == Action::remove)
          recorded = ledger.forget(s.key);
        else
          recorded = ledger.record(s.key, "override", hash_of(*s.desired), options.revision);
        if (!recorded) st = recorded;
      }
      std::lock_guard<std::mutex> lock(mu);
      StepResult r{s, st, round};
      if (s.rpc_count() > 0) ++report.rpc_steps;
      if (!st) ++report.failed;
      report.results.push_back(std::move(r));
      if (on_step) on_step(report.results.back());
    };
    // Phases run in order; removals go broad scope first because FlyteAdmin cascades them, and
    // writes too: a project-domain PLUGIN_OVERRIDE written after a workflow row of its (project,
    // domain) may be merged into that row (plan.cpp merge_targets).
    for (Phase phase : {Phase::projects, Phase::removals, Phase::writes, Phase::archives}) {
      const bool ranked = phase == Phase::removals || phase == Phase::writes;
      for (int rank = 0; rank < 3; ++rank) {
        std::vector<const Step*> batch;
        for (const auto& s : p.steps)
          if (phase_of(s) == phase && (!ranked || level_rank(s) == rank)) batch.push_back(&s);
        if (!batch.empty() && !stopping())
          run_parallel(batch, options.parallelism, stopping, execute);
        if (!ranked) break;
      }
    }
    const size_t ran_this_round = report.results.size() - last_round_begin;
    report.not_started = p.steps.size() - ran_this_round;
    // Once per round, after its steps (also when some failed or the breaker opened: what ran
    // is recorded in the ledger, so a whole-document sink must write it) — but not once
    // cancelled: a replica that lost its lease must not write (the next pass sees the difference
    // as drift).
    const bool cancelled = options.cancel && options.cancel->load();
    if (Status c = cancelled ? ok_status() : sink.commit(options.revision); !c) {
      fail(c.error().code, c.error().message);
      break;
    }
    if (auto down = breaker.error()) {
      // FlyteAdmin stopped answering: report it now instead of trying every remaining step with
      // retries; what succeeded is in the ledger and the next pass starts from a new observation.
      fail(down->code,
           "flyteadmin: " + down->message + "; stopped after " + std::to_string(ran_this_round) +
               " of " + std::to_string(p.steps.size()) + " steps (" +
               std::to_string(report.not_started) + " not started); the next reconcile retries");
      break;
    }
    // Permanent failures will not heal by retrying this reconcile; stop and report them.
    const Error* permanent = nullptr;
    for (size_t i = failed_before; i < report.results.size(); ++i)
      if (!report.results[i].status && !report.results[i].status.error().retryable())
        permanent = &report.results[i].status.error();
    if (permanent) {
      fail(permanent->code, "some steps failed permanently");
      break;
    }
  }
  report.objects = object_statuses(desired, last_plan,
                                   std::span<const StepResult>(report.results)
                                       .subspan(std::min(last_round_begin, report.results.size())),
                                   report.error);
  return report;
}

std::string_view to_string(ObjectState s) {
  switch (s) {
    case ObjectState::synced:
      return "synced";
    case ObjectState::pending:
      return "pending";
    case ObjectState::drifted:
      return "drifted";
    case ObjectState::failed:
      return "failed";
    case ObjectState::unknown:
      return "unknown";
  }
  return "unknown";
}

std::vector<ObjectStatus> object_statuses(const State& desired, const Plan* last_plan,
                                          std::span<const StepResult> last_round,
                                          const std::string& pass_error) {
  std::vector<std::string> keys;
  for (const auto& [id, p] : desired.projects) keys.push_back(project_key(id));
  for (const auto& [k, o] : desired.overrides) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  std::map<std::string, const Step*> planned;
  std::map<std::string, std::string> left_drifted;
  if (last_plan) {
    for (const auto& s : last_plan->steps) planned.emplace(s.key, &s);
    for (const auto& d : last_plan->drift)
      if (!d.healed) left_drifted[d.key] = d.detail;
  }
  std::map<std::string, const StepResult*> ran;
  for (const auto& r : last_round) {
    auto [it, fresh] = ran.emplace(r.step.key, &r);
    if (!fresh && !r.status) it->second = &r;  // a failure wins over a success of the same key
  }
  const std::string why = pass_error.empty() ? "" : " (" + pass_error + ")";
  std::vector<ObjectStatus> out;
  out.reserve(keys.size());
  for (const auto& key : keys) {
    ObjectStatus o{key, ObjectState::synced, ""};
    if (!last_plan) {
      o.state = ObjectState::unknown;
      o.detail = "FlyteAdmin was not observed in this reconcile" + why;
    } else if (auto d = left_drifted.find(key); d != left_drifted.end()) {
      o.state = ObjectState::drifted;
      o.detail = d->second;
    } else if (auto s = planned.find(key); s != planned.end()) {
      auto r = ran.find(key);
      if (r == ran.end()) {
        o.state = ObjectState::pending;
        o.detail = std::string(to_string(s->second->action)) + " not started" + why;
      } else if (!r->second->status) {
        o.state = ObjectState::failed;
        o.detail = r->second->status.error().message;
      } else if (s->second->action != Action::adopt) {
        // Written, but the pass ended before an observation confirmed it.
        o.state = ObjectState::pending;
        o.detail = std::string(to_string(s->second->action)) + " written, not yet verified" + why;
      }  // adopt: observed equal, now recorded
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace flytecd::pass
