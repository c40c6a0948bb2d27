#include "daemon/reconcile/apply.hpp"

#include <atomic>
#include <mutex>
#include <thread>

namespace flytecd::reconcile {
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

// Runs `steps` on up to `parallelism` threads.
void run_parallel(const std::vector<const Step*>& steps, int parallelism,
                  const std::atomic<bool>* cancel, const std::function<void(const Step&)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < steps.size() && !(cancel && cancel->load()); i = next++)
      fn(*steps[i]);
  };
  int n = std::max(1, std::min<int>(parallelism, static_cast<int>(steps.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

}  // namespace

ApplyReport apply(sinks::Sink& sink, ledger::Ledger& ledger, const State& desired,
                  const ApplyOptions& options,
                  const std::function<void(const StepResult&)>& on_step) {
  ApplyReport report;
  std::mutex mu;
  auto history = ledger.begin_reconcile(options.revision);
  const int64_t history_id = history ? *history : 0;

  for (int round = 1; round <= options.max_rounds + 1; ++round) {
    if (options.cancel && options.cancel->load()) {
      report.error = "cancelled";
      break;
    }
    auto live = sink.observe();
    if (!live) {
      report.error = live.error().message;
      break;
    }
    auto managed = ledger.managed();
    if (!managed) {
      report.error = managed.error().message;
      break;
    }
    Plan p = plan(desired, *live, *managed, options.policy);
    if (round == 1) report.first_plan = p;
    report.rounds = round;
    if (p.refused) {
      report.refused = true;
      report.error = p.refusal;
      break;
    }
    if (p.steps.empty()) {
      report.converged = true;
      break;
    }
    if (round > options.max_rounds) {
      report.error = "did not converge after " + std::to_string(options.max_rounds) + " rounds; " +
                     std::to_string(p.steps.size()) + " steps still pending";
      break;
    }
    size_t failed_before = report.failed;
    auto execute = [&](const Step& s) {
      Status st = sink.execute(s);
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
      if (history_id)
        (void)ledger.add_step(history_id, std::string(to_string(s.action)), s.key,
                              st ? "ok" : "failed", st ? s.reason : st.error().message);
      std::lock_guard<std::mutex> lock(mu);
      StepResult r{s, st, round};
      if (s.rpc_count() > 0) ++report.rpc_steps;
      if (!st) ++report.failed;
      report.results.push_back(r);
      if (on_step) on_step(r);
    };
    // Phases run in order; removals go broad scope first because FlyteAdmin cascades them.
    for (Phase phase : {Phase::projects, Phase::removals, Phase::writes, Phase::archives}) {
      for (int rank = 0; rank < 3; ++rank) {
        std::vector<const Step*> batch;
        for (const auto& s : p.steps)
          if (phase_of(s) == phase && (phase != Phase::removals || level_rank(s) == rank))
            batch.push_back(&s);
        if (!batch.empty()) run_parallel(batch, options.parallelism, options.cancel, execute);
        if (phase != Phase::removals) break;
      }
    }
    // Permanent failures will not heal by retrying this reconcile; stop and report them.
    bool permanent = false;
    for (size_t i = failed_before; i < report.results.size(); ++i)
      if (!report.results[i].status && !report.results[i].status.error().retryable())
        permanent = true;
    if (permanent) {
      report.error = "some steps failed permanently";
      break;
    }
  }
  if (history_id) {
    std::string outcome = report.refused ? "refused" : report.ok() ? "success" : "failed";
    (void)ledger.finish_reconcile(history_id, static_cast<int>(report.results.size()), outcome,
                                  report.error);
  }
  return report;
}

}  // namespace flytecd::reconcile
