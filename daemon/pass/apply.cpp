#include "daemon/pass/apply.hpp"

#include "daemon/common/worker_pool.hpp"
#include "daemon/reconcile/guard.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

namespace flytecd::pass {

using namespace reconcile;  // the executor runs the core's plan: its types throughout

namespace {

enum class Phase { projects, removals, writes, archives };

// How long ended asynchronous steps wait to be recorded with others (their successors are
// already running; only their ledger rows and report lines wait).
constexpr std::chrono::milliseconds k_group_wait{5};

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

// One apply: rounds of observe (after the first), plan, guard, execute phase by phase, commit,
// until a round has nothing to do.
class Executor {
 public:
  Executor(sinks::Sink& sink, ledger::Ledger& ledger, const State& desired,
           const ApplyOptions& options, const StepsCallback& on_steps)
      : m_sink(sink),
        m_ledger(ledger),
        m_desired(desired),
        m_options(options),
        m_on_steps(on_steps),
        m_breaker(options.breaker ? *options.breaker : m_own_breaker) {}

  ApplyReport run() {
    for (int round = 1; round <= m_options.max_rounds + 1; ++round)
      if (!run_round(round)) break;
    m_report.objects =
        object_statuses(m_desired, m_last_plan,
                        std::span<const StepResult>(m_report.results)
                            .subspan(std::min(m_last_round_begin, m_report.results.size())),
                        m_report.error);
    return std::move(m_report);
  }

 private:
  bool cancelled() const { return m_options.cancel && m_options.cancel->load(); }
  bool stopping() const { return cancelled() || m_breaker.open(); }
  // Records the error; returns false (stop the rounds).
  bool fail(ErrorCode code, std::string message) {
    m_report.error_code = code;
    m_report.error = std::move(message);
    return false;
  }
  bool run_round(int round);
  bool observe_and_plan();
  void execute_phases(const Plan& p, int round);
  void execute(const Step& s, int round);
  void execute_async(const std::vector<const Step*>& steps, int round);
  struct Ended {
    const Step* step;
    Status status;
  };
  void finish(std::vector<Ended>& ended, int round);
  ledger::Ledger::ObjectChange change_of(const Step& s) const;
  bool after_round(const Plan& p);

  sinks::Sink& m_sink;
  ledger::Ledger& m_ledger;
  const State& m_desired;
  const ApplyOptions& m_options;
  const StepsCallback& m_on_steps;
  ApplyReport m_report;
  std::mutex m_mu;
  CircuitBreaker m_own_breaker;
  CircuitBreaker& m_breaker;
  // The plan of the last observation that succeeded, and where its steps' results begin in
  // report.results (kept as a range, not a copy: a cold apply holds ~40k steps).
  std::optional<Plan> m_owned_plan;  // a plan of this call's own observation
  const Plan* m_last_plan = nullptr;
  size_t m_last_round_begin = 0;
};

// One round; false when the rounds end (converged, refused, failed or stopped).
bool Executor::run_round(int round) {
  if (cancelled()) return fail(ErrorCode::internal, "cancelled");
  if (auto down = m_breaker.error())  // opened by an earlier user of a shared breaker
    return fail(down->code, "flyteadmin: " + down->message + "; nothing was started");
  if (round == 1 && m_options.first_plan)
    m_last_plan = m_options.first_plan;  // the caller keeps it; no copy of a cold pass's steps
  else if (!observe_and_plan())
    return false;
  const Plan& p = *m_last_plan;
  if (round == 1 && !m_options.first_plan) m_report.first_plan = p;
  m_report.rounds = round;
  m_last_round_begin = m_report.results.size();
  if (p.refused) {
    m_report.refused = true;
    return fail(ErrorCode::conflict, p.refusal);
  }
  if (p.steps.empty()) {
    // A whole-document sink re-asserts what it holds (e.g. a restart that failed before).
    if (Status c = m_sink.commit(m_options.revision); !c)
      return fail(c.error().code, c.error().message);
    m_report.converged = true;
    return false;
  }
  if (round > m_options.max_rounds)
    return fail(ErrorCode::internal, "did not converge after " +
                                         std::to_string(m_options.max_rounds) + " rounds; " +
                                         std::to_string(p.steps.size()) + " steps still pending");
  // Room for every result of the round up front: growing by doubling would hold both the old
  // and the new array of ~40k results (each a copy of its step) at once.
  m_report.results.reserve(m_report.results.size() + p.steps.size());
  const auto started = std::chrono::steady_clock::now();
  execute_phases(p, round);
  m_report.write_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return after_round(p);
}

// Observes, plans from what is live, and guards that plan; false (with the error) when the
// observation or the ledger cannot be read.
bool Executor::observe_and_plan() {
  const sinks::ObserveScope& scope = m_options.observe_scope;
  auto live = scope.everything() ? m_sink.observe() : m_sink.observe_scoped(scope);
  if (!live) {
    m_breaker.trip(live.error());  // the observation already retried every call it made
    return fail(live.error().code, live.error().message);
  }
  m_breaker.record_success();
  auto managed = scope.everything() ? m_ledger.managed() : m_ledger.managed_of(scope.projects);
  if (!managed) return fail(managed.error().code, managed.error().message);
  if (m_options.narrow) m_options.narrow(*live, *managed);
  m_owned_plan.emplace(plan(m_desired, *live, *managed, m_options.policy));
  // Every plan of this call's own observation — a standalone first round, and each later round
  // of a pass, whose live state may have changed since the pass's guard saw it — passes the
  // guard's prune rules (the pass guards its first plan before it calls this).
  Policy prune_rules = m_options.policy;
  prune_rules.allow_empty = true;
  auto counts = guard_input(*m_owned_plan, m_desired, 1, *managed, {});
  if (m_options.widen_guard) m_options.widen_guard(counts);
  auto verdict = guard_pass(counts, prune_rules);
  if (verdict.refused) {
    m_owned_plan->refused = true;
    m_owned_plan->refusal = verdict.reason;
  }
  m_last_plan = &*m_owned_plan;
  return true;
}

// Phases run in order; removals go broad scope first because FlyteAdmin cascades them, and
// writes too: a project-domain PLUGIN_OVERRIDE written after a workflow row of its (project,
// domain) may be merged into that row (plan.cpp merge_targets).
void Executor::execute_phases(const Plan& p, int round) {
  auto stop = [this] { return stopping(); };
  auto run_step = [this, round](const Step& s) { execute(s, round); };
  const bool async = m_sink.async_window() > 0;
  for (Phase phase : {Phase::projects, Phase::removals, Phase::writes, Phase::archives}) {
    const bool ranked = phase == Phase::removals || phase == Phase::writes;
    for (int rank = 0; rank < 3; ++rank) {
      std::vector<const Step*> batch;
      for (const auto& s : p.steps)
        if (phase_of(s) == phase && (!ranked || level_rank(s) == rank)) batch.push_back(&s);
      if (batch.empty() || stopping()) {
      } else if (async) {
        execute_async(batch, round);
      } else {
        run_parallel(batch, m_options.parallelism, stop, run_step);
      }
      if (!ranked) break;
    }
  }
}

// The ledger's change for a step that succeeded.
ledger::Ledger::ObjectChange Executor::change_of(const Step& s) const {
  const std::string& rev = m_options.revision;
  if (s.action == Action::remove) return {s.key, {}, {}, {}, 0, true};
  if (s.kind == ObjectKind::project) return {s.key, "project", hash_of(*s.project), rev, 0, false};
  if (s.kind == ObjectKind::object)
    return {s.key, s.object->kind, hash_of(*s.object), rev, m_sink.written_version(s.key), false};
  return {s.key, "override", hash_of(*s.desired), rev, 0, false};
}

// One step on a worker thread: the sink's write, then the ledger's row.
void Executor::execute(const Step& s, int round) {
  std::vector<Ended> ended{{&s, m_sink.execute(s)}};
  finish(ended, round);
}

// The steps through the sink's asynchronous transport, up to its window in flight. A step that
// succeeds starts the next one from its own callback (as a client that only sends would: the
// transport's thread starts it at once, so the window stays full while this thread writes the
// ledger); a failed one, or one that ended inside a start, leaves the next to this thread, which
// records the breaker first. Ended steps are taken in groups (half a window, all that run, or what
// ended within k_group_wait) and each group's rows go into the ledger in one transaction (finish).
// Once stopping() holds no further step starts; those in flight end and are recorded.
void Executor::execute_async(const std::vector<const Step*>& steps, int round) {
  const size_t window = static_cast<size_t>(m_sink.async_window());
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Ended> ended;
    size_t next = 0;      // the next step to start
    size_t running = 0;   // started and not yet ended; `sh` outlives them
    bool orphan = false;  // a step ended without starting the next while some remain
  } sh;
  const size_t group = std::max<size_t>(1, window / 2);
  // Whether this thread has something to do now (under sh.mu).
  auto due = [&] {
    return sh.ended.size() >= group || sh.running == 0 || (sh.orphan && !stopping());
  };
  // Nonzero on a thread inside start(): a step that ends there (an adoption, a refusal, a sink
  // that answers before it returns) starts nothing, so starts never nest.
  static thread_local int starting = 0;
  std::function<void(const Step*)> start = [&](const Step* s) {
    ++starting;
    m_sink.execute_async(*s, [this, &sh, &start, &steps, &due, s](Status st) {
      const Step* more = nullptr;
      {
        std::lock_guard<std::mutex> lock(sh.mu);
        const bool ok = st.ok();
        sh.ended.push_back({s, std::move(st)});
        --sh.running;
        if (ok && starting == 0 && sh.next < steps.size() && !stopping()) {
          more = steps[sh.next++];
          ++sh.running;
        } else if (sh.next < steps.size()) {
          sh.orphan = true;
        }
        if (due()) sh.cv.notify_one();  // under the lock: once it is released, `sh` may be gone
      }
      if (more) start(more);  // `more` is running: `sh` and `start` are still there
    });
    --starting;
  };
  std::vector<Ended> taken;
  std::vector<const Step*> to_start;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(sh.mu);
      sh.orphan = false;
      while (sh.next < steps.size() && sh.running < window && !stopping()) {
        to_start.push_back(steps[sh.next++]);
        ++sh.running;
      }
    }
    for (const Step* s : to_start) start(s);
    to_start.clear();
    {
      std::unique_lock<std::mutex> lock(sh.mu);
      if (sh.ended.empty() && sh.running == 0) {
        if (sh.next == steps.size() || stopping()) return;
        continue;
      }
      sh.cv.wait_for(lock, k_group_wait, due);
      if (sh.ended.empty()) continue;
      taken.swap(sh.ended);
    }
    finish(taken, round);
    taken.clear();
  }
}

// Steps that ended: the breaker sees each answer, the successes' rows go into the ledger in one
// transaction (a step whose row could not be written fails with that error), then each result is
// reported.
void Executor::finish(std::vector<Ended>& ended, int round) {
  std::vector<ledger::Ledger::ObjectChange> changes;
  for (const auto& e : ended) {
    if (e.step->rpc_count() > 0) m_breaker.record(e.status);
    if (e.status) changes.push_back(change_of(*e.step));
  }
  const Status recorded = m_ledger.record_all(std::move(changes));
  std::lock_guard<std::mutex> lock(m_mu);
  for (auto& e : ended) {
    if (e.status && !recorded) e.status = recorded;
    if (e.step->rpc_count() > 0) ++m_report.rpc_steps;
    if (!e.status) ++m_report.failed;
    m_report.results.push_back(StepResult{*e.step, std::move(e.status), round});
  }
  if (m_on_steps && !ended.empty())
    m_on_steps(std::span<const StepResult>(m_report.results).last(ended.size()));
}

// After a round's steps: commit, then stop if FlyteAdmin stopped answering or a step failed
// permanently; true to run another round.
bool Executor::after_round(const Plan& p) {
  const size_t ran_this_round = m_report.results.size() - m_last_round_begin;
  m_report.not_started = p.steps.size() - ran_this_round;
  // Once per round, after its steps (also when some failed or the breaker opened: what ran
  // is recorded in the ledger, so a whole-document sink must write it) — but not once
  // cancelled: a replica that lost its lease must not write (the next pass sees the difference
  // as drift).
  if (Status c = cancelled() ? ok_status() : m_sink.commit(m_options.revision); !c)
    return fail(c.error().code, c.error().message);
  if (auto down = m_breaker.error())
    // FlyteAdmin stopped answering: report it now instead of trying every remaining step with
    // retries; what succeeded is in the ledger and the next pass starts from a new observation.
    return fail(down->code, "flyteadmin: " + down->message + "; stopped after " +
                                std::to_string(ran_this_round) + " of " +
                                std::to_string(p.steps.size()) + " steps (" +
                                std::to_string(m_report.not_started) +
                                " not started); the next reconcile retries");
  // Permanent failures will not heal by retrying this reconcile; stop and report them. A write
  // refused as stale (the object changed since the observation) is not one: the next round
  // observes again and plans from what is there now, so the change is seen (as drift) first.
  const Error* permanent = nullptr;  // the last one's code is the report's
  for (size_t i = m_last_round_begin; i < m_report.results.size(); ++i)
    if (const Status& st = m_report.results[i].status;
        !st && !st.error().retryable() && !st.error().replannable())
      permanent = &st.error();
  if (permanent) return fail(permanent->code, "some steps failed permanently");
  return true;
}

}  // namespace

ApplyReport apply(sinks::Sink& sink, ledger::Ledger& ledger, const State& desired,
                  const ApplyOptions& options, const StepsCallback& on_steps) {
  return Executor(sink, ledger, desired, options, on_steps).run();
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
  for (const auto& [k, o] : desired.objects) keys.push_back(k);
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
