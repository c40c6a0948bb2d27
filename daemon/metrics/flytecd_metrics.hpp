#pragma once

// The flytecd metric set: references into one Registry, registered once at startup. Pass a
// FlytecdMetrics& (or pointer; null = no metrics) to whatever records them. Thread-safe.

#include <map>
#include <string>
#include <string_view>

#include "daemon/metrics/metrics.hpp"

namespace flytecd::metrics {

enum class ReconcileResult { success, failed, refused, invalid };

inline std::string_view to_string(ReconcileResult r) {
  switch (r) {
    case ReconcileResult::success:
      return "success";
    case ReconcileResult::failed:
      return "failed";
    case ReconcileResult::refused:
      return "refused";
    case ReconcileResult::invalid:
      return "invalid";
  }
  return "failed";
}

struct FlytecdMetrics {
  explicit FlytecdMetrics(Registry& registry)
      : reconcile_total(registry.counter("flytecd_reconcile_total",
                                         "Reconcile runs by result (success, failed, refused: "
                                         "guard tripped, invalid: revision rejected).",
                                         {"result"})),
        reconcile_duration_seconds(registry.histogram(
            "flytecd_reconcile_duration_seconds", "Wall time of one reconcile run.",
            {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300})),
        last_success_timestamp_seconds(
            registry.gauge("flytecd_last_success_timestamp_seconds",
                           "Unix time of the last successful reconcile (0 = none yet).")),
        revision_info(registry.gauge("flytecd_revision_info",
                                     "The revision in force (always 1; one series).",
                                     {"revision"})),
        objects(registry.gauge("flytecd_objects", "Live objects by kind and state.",
                               {"kind", "state"})),
        source_polls_total(registry.counter("flytecd_source_polls_total",
                                            "Source polls (head lookups) by result.", {"result"})),
        source_fetches_total(registry.counter("flytecd_source_fetches_total",
                                              "Source fetches (new revision or package) by result.",
                                              {"result"})),
        rpc_total(registry.counter("flytecd_rpc_total", "Target RPCs by method and status code.",
                                   {"method", "code"})),
        webhook_requests_total(registry.counter("flytecd_webhook_requests_total",
                                                "Webhook requests by provider and result.",
                                                {"provider", "result"})),
        notifications_total(registry.counter("flytecd_notifications_total",
                                             "Notifications by target kind and result "
                                             "(sent, failed, dropped).",
                                             {"kind", "result"})),
        target_up(registry.gauge("flytecd_target_up",
                                 "1 when the last call to the target succeeded, else 0.")),
        target_is_emulator(registry.gauge("flytecd_target_is_emulator",
                                          "1 when the target is the embedded emulator, else 0.")),
        suspended(registry.gauge("flytecd_suspended",
                                 "1 while reconciling is suspended (POST /api/v1/suspend): "
                                 "sources are polled and drift reported, nothing is written.")),
        project_suspended(registry.gauge(
            "flytecd_project_suspended",
            "1 for each project whose writes are suspended (flytecd suspend --project P): it is "
            "planned and its drift reported, nothing of it is written; other projects apply.",
            {"project"})) {
    suspended.with({}).set(0);
    // Pre-create the fixed series so rate() and absent() work before the first event.
    for (auto r : {ReconcileResult::success, ReconcileResult::failed, ReconcileResult::refused,
                   ReconcileResult::invalid}) {
      reconcile_total.with({to_string(r)});
    }
  }
  FlytecdMetrics(const FlytecdMetrics&) = delete;
  FlytecdMetrics& operator=(const FlytecdMetrics&) = delete;

  // One reconcile run finished; on success also pass `now_unix_seconds` to stamp it.
  void record_reconcile(ReconcileResult result, double duration_seconds,
                        double now_unix_seconds = 0) {
    reconcile_total.with({to_string(result)}).inc();
    reconcile_duration_seconds.with({}).observe(duration_seconds);
    if (result == ReconcileResult::success && now_unix_seconds > 0) {
      last_success_timestamp_seconds.with({}).set(now_unix_seconds);
    }
  }
  // Publishes `revision` as the only flytecd_revision_info series.
  void set_revision(const std::string& revision) { revision_info.only({revision}).set(1); }
  // state: managed | drifted | unmanaged.
  void set_objects(std::string_view kind, std::string_view state, double count) {
    objects.with({kind, state}).set(count);
  }
  void set_target(bool up, bool is_emulator) {
    target_up.with({}).set(up ? 1 : 0);
    target_is_emulator.with({}).set(is_emulator ? 1 : 0);
  }

  void set_suspended(bool on) { suspended.with({}).set(on ? 1 : 0); }
  // One series per suspended project (none when no project is suspended).
  void set_suspended_projects(const std::vector<std::string>& projects) {
    project_suspended.clear();
    for (const auto& p : projects) project_suspended.with({p}).set(1);
  }

  // Advances rpc_total to `counts` ("method code" -> calls so far, as the target counts them):
  // what grew since the last call is added. One caller at a time (the reconcile thread).
  void sync_rpc_counts(const std::map<std::string, uint64_t>& counts) {
    for (const auto& [key, n] : counts) {
      auto space = key.find(' ');
      uint64_t& seen = rpc_seen[key];
      if (n > seen)
        rpc_total.with({key.substr(0, space), key.substr(space + 1)})
            .inc(static_cast<double>(n - seen));
      seen = n;
    }
  }

  CounterFamily& reconcile_total;               // {result}
  HistogramFamily& reconcile_duration_seconds;  // no labels
  GaugeFamily& last_success_timestamp_seconds;  // no labels
  GaugeFamily& revision_info;                   // {revision}, info gauge = 1
  GaugeFamily& objects;                         // {kind, state}
  CounterFamily& source_polls_total;            // {result}
  CounterFamily& source_fetches_total;          // {result}
  CounterFamily& rpc_total;                     // {method, code}
  CounterFamily& webhook_requests_total;        // {provider, result}
  CounterFamily& notifications_total;           // {kind, result}
  GaugeFamily& target_up;                       // no labels, 1/0
  GaugeFamily& target_is_emulator;              // no labels, 1/0
  GaugeFamily& suspended;                       // no labels, 1/0
  GaugeFamily& project_suspended;               // {project}, 1 per suspended project

 private:
  std::map<std::string, uint64_t> rpc_seen;  // sync_rpc_counts' last counts
};

// The spelling used in the daemon's design notes.
using flytecd_metrics = FlytecdMetrics;

}  // namespace flytecd::metrics
