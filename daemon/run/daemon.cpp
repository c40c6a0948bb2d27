#include "daemon/run/daemon.hpp"

#include "daemon/wiring/wiring.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/log.hpp"
#include "daemon/common/text.hpp"
#include "daemon/http/server.hpp"
#include "daemon/k8s/in_cluster.hpp"
#include "daemon/metrics/flytecd_metrics.hpp"
#include "daemon/metrics/metrics.hpp"
#include "daemon/notify/notifier.hpp"
#include "daemon/pass/apply.hpp"
#include "daemon/pass/views.hpp"
#include "daemon/registration/registrar.hpp"
#include "daemon/run/daemon_state.hpp"
#include "daemon/run/guarded.hpp"
#include "daemon/run/page.hpp"
#include "daemon/run/pass_log.hpp"
#include "daemon/run/secrets.hpp"
#include "daemon/run/suspension.hpp"
#include "daemon/run/targeting.hpp"
#include "daemon/wiring/reconciler.hpp"
#include "daemon/wiring/target.hpp"

namespace flytecd::run {
namespace {

using Clock = std::chrono::system_clock;

std::string iso(Clock::time_point t) { return notify::format_rfc3339(t); }

}  // namespace

struct Daemon::Impl {
  ConfigLoader load_config;
  config::Config cfg;
  std::shared_ptr<spdlog::logger> log = log::get("flytecd");

  // Wiring (rebuilt on reload). The reconciler owns the source, the documents' loader, the
  // target (sinks, ledger), the applied-revision record and the package source.
  std::unique_ptr<wiring::Reconciler> rec;
  std::unique_ptr<http::HttpServer> http;
  http::HttpOptions http_options;  // with the secrets read, to start HTTP again after a reload
  std::unique_ptr<notify::Notifier> notifier;
  metrics::Registry registry;
  metrics::FlytecdMetrics metrics{registry};
  metrics::GaugeFamily& leader_gauge =
      registry.gauge("flytecd_leader",
                     "1 when this replica may reconcile (leader, or no leader election), else 0.");
  // Kubernetes: leader election and ConfigMap mode (null when neither is configured).
  std::unique_ptr<k8s::InCluster> cluster;
  std::string last_ownership;  // the last ownership message logged (logged once per change)
  metrics::GaugeFamily& registrations_gauge =
      registry.gauge("flytecd_registrations",
                     "Workflow registrations by state after the last reconcile.", {"state"});

  // Scheduler.
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false, reload = false;
  std::string trigger_reason;
  // Sync requests are numbered (POST /api/v1/sync answers its number); a pass serves every
  // request made before it started, and status says which (syncServed, lastSync.request).
  uint64_t requested = 0;
  std::atomic<bool> cancel{false};
  // Stops apply from starting new steps: on stop, and when leadership is lost.
  std::atomic<bool> halt{false};

  // The revision in force (reconcile thread), and the one last rejected (not loaded again).
  std::optional<wiring::LoadedRevision> in_force;
  std::string rejected_revision;
  // The daemon's state: replaced whole on each change; status, readiness and the gauges are
  // functions of it (daemon_state.hpp). The gauges follow each change under the cell's lock.
  StateCell state{DaemonState{}, [this](const DaemonState& s) { show(s, metrics); }};
  std::mutex suspend_mu;  // serializes suspend/resume requests (HTTP threads)
  std::set<std::string> known_drift;
  std::string refusal_notified;  // the revision whose refusal was last notified (pass/views)
  // Whether the pass after a Git change may be targeted at the projects it touched.
  Targeting targeting;

  std::shared_ptr<const DaemonState> put(const std::function<void(DaemonState&)>& change) {
    return state.update(change);
  }

  // What a configuration needs that can be read without touching the wiring in force: the
  // suspension file, the source, the notification and HTTP secrets. A reload that fails here
  // changes nothing.
  struct Prepared {
    std::optional<Suspension> suspension;
    ProjectSuspensions projects;
    std::unique_ptr<wiring::Reconciler> rec;
    std::unique_ptr<notify::Notifier> notifier;
    http::HttpOptions http;
  };

  Result<Prepared> prepare(const config::Config& c) {
    Prepared p;
    // Before anything that could write: a suspension in force survives the restart, and a
    // suspension file that cannot be read stops the start rather than resume writing.
    auto suspended = read_suspension(suspension_file(c.state_dir));
    if (!suspended) return suspended.error();
    p.suspension = *suspended;
    auto projects = read_project_suspensions(project_suspension_file(c.state_dir));
    if (!projects) return projects.error();
    p.projects = std::move(*projects);
    auto r = wiring::Reconciler::open(c);
    if (!r) return r.error();
    p.rec = std::move(*r);

    auto targets = notify_targets(c);
    if (!targets) return targets.error();

    if (auto st = read_http_secrets(c, p.http); !st) return st.error();
    // Last: the only step here that starts threads.
    if (!targets->empty()) {
      auto nf = notify::Notifier::start(std::move(*targets), notify::NotifierOptions{}, &metrics);
      if (!nf) return nf.error();
      p.notifier = std::move(*nf);
    }
    return p;
  }

  // The suspensions read from the state directory in force (before HTTP serves it).
  void use_suspension(const std::optional<Suspension>& s, const ProjectSuspensions& projects) {
    put([&](DaemonState& st) {
      st.suspension = s;
      st.suspended_projects = projects;
    });
    log_suspensions(*log, s, projects);
  }

  // Puts a prepared configuration in force (its reconciler, whose target start_serving opened,
  // and the notifier); the previous ones are released. cfg is already the new configuration.
  void adopt(Prepared p) {
    rec = std::move(p.rec);
    if (notifier) notifier->stop();
    notifier = std::move(p.notifier);
    http_options = std::move(p.http);
  }

  // The parts that hold something only one of them can hold at a time — the state directory's
  // lock (the target of `r`), the lease (the cluster), the listening port (HTTP) — started from
  // `c`.
  Status start_serving(const config::Config& c, wiring::Reconciler& r,
                       const http::HttpOptions& ho) {
    if (auto t = r.open_target(); !t) return t.error();
    put([&](DaemonState& s) {
      s.target = r.target().description;
      s.target_is_emulator = r.target().embedded();
      s.target_up = false;
    });
    k8s::ElectorCallbacks on_lease{[this] {
                                     leader_gauge.with({}).set(1);
                                     nudge("became leader");
                                   },
                                   [this] {
                                     halt = true;  // before anything else: stop writing
                                     leader_gauge.with({}).set(0);
                                   }};
    auto in_cluster = k8s::InCluster::start(c.kubernetes, std::move(on_lease));
    if (!in_cluster) return in_cluster.error();
    cluster = std::move(*in_cluster);
    leader_gauge.with({}).set(!cluster || cluster->leading() ? 1 : 0);
    // In a cluster the record is a ConfigMap every replica reads (kubernetes.appliedRecord); on
    // a VM, the file in the target's state directory.
    if (cluster)
      if (auto store = cluster->record_store()) r.use_record(std::move(store));

    http::HttpHandlers hh;
    hh.trigger_sync = [this](const std::string& reason) { nudge(reason); };
    hh.status = [this] { return state.status_text(leader_json()); };
    hh.request_sync = [this](const std::string& reason) { return nudge(reason); };
    hh.ready = [this] {
      if (cluster && !cluster->leading()) return cluster->healthy();  // a follower
      return ready(*state.get());
    };
    hh.not_ready_reason = [this] { return state.get()->not_ready; };
    hh.metrics_text = [this] { return registry.render(); };
    hh.history = [&r](const std::map<std::string, std::string>& params) {
      return pass::history_body(*r.target().ledger, params);
    };
    hh.set_suspended = [this](bool on, const std::string& reason, const std::string& by) {
      return set_suspended(on, reason, by);
    };
    hh.set_project_suspended = [this](bool on, const std::string& project,
                                      const std::string& reason, const std::string& by) {
      return set_project_suspended(on, project, reason, by);
    };
    if (c.http.ui)
      hh.page = [this, &r](const std::string& path,
                           const std::map<std::string, std::string>& params) {
        if (path != "/")  // the assets need neither the leader nor the ledger
          return page_response(path, params, *state.get(), PageData{});
        return page_response(
            path, params, *state.get(),
            page_data(leader_json(), r.target().ledger->history(ledger::HistoryQuery{})));
      };
    auto server = http::HttpServer::start(ho, hh, &metrics);
    if (!server) return server.error();
    http = std::move(*server);
    log->info("flytecd {} running: source {}, target {}, http {} (port {}), interval {}s",
              FLYTECD_VERSION, r.describe_source(), r.target().description, c.http.listen,
              http->port(), c.interval_seconds);
    put([&](DaemonState& s) {
      s.source = r.describe_source();
      s.http_port = http->port();
    });
    return ok_status();
  }

  // Leader state is live (not part of the state value), so status compares it, not versions it.
  // Without leader election the key is there too ({"enabled": false}): what a reader's
  // `jq .leader` finds says so instead of null (issue 21).
  nlohmann::json leader_json() const {
    return cluster ? cluster->status() : nlohmann::json{{"enabled", false}};
  }

  void stop_serving(wiring::Reconciler* r) {
    if (http) http->stop();
    http.reset();
    cluster.reset();  // releases a held lease
    if (r) r->close_target();
  }

  Status build() {
    auto p = prepare(cfg);
    if (!p) return p.error();
    use_suspension(p->suspension, p->projects);
    adopt(std::move(*p));
    return start_serving(cfg, *rec, http_options);
  }

  void teardown() {
    stop_serving(rec.get());
    if (notifier) notifier->stop();
    notifier.reset();
    rec.reset();
  }

  // SIGHUP: the new configuration is prepared beside the one in force (which keeps serving if
  // that fails), then the target, lease and port move over; if one of those cannot start, the
  // previous configuration's are started again. Only when that too fails is `fatal` set.
  Status reload_to(const config::Config& fresh, bool& fatal) {
    auto p = prepare(fresh);
    if (!p) return p.error();
    const config::Config previous = cfg;
    const http::HttpOptions previous_http = http_options;
    const std::optional<Suspension> previous_suspension = state.get()->suspension;
    const ProjectSuspensions previous_projects = state.get()->suspended_projects;
    stop_serving(rec.get());
    // No HTTP thread runs until start_serving: cfg and the suspension change with none reading.
    cfg = fresh;
    use_suspension(p->suspension, p->projects);
    auto started = start_serving(cfg, *p->rec, p->http);
    if (!started) {
      stop_serving(p->rec.get());
      if (p->notifier) p->notifier->stop();
      cfg = previous;
      use_suspension(previous_suspension, previous_projects);
      if (auto back = start_serving(cfg, *rec, previous_http); !back) {
        fatal = true;
        return make_error(ErrorCode::internal, started.error().message +
                                                   "; and the previous configuration could not "
                                                   "be started again: " +
                                                   back.error().message);
      }
      return started.error();
    }
    adopt(std::move(*p));
    in_force.reset();
    rejected_revision.clear();
    return ok_status();
  }

  // The outcome of the last SIGHUP, in status: `reload` (time, ok, error) and, while the
  // configuration on disk is not the one in force, `lastReloadError`.
  void record_reload(const Status& s) {
    put([&](DaemonState& st) {
      st.reload = Reload{iso(Clock::now()), s ? std::string() : s.error().message};
    });
  }

  // Returns the request's number: the first pass that starts after it serves it.
  uint64_t nudge(const std::string& reason) {
    uint64_t id = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      trigger_reason = reason;
      id = ++requested;
    }
    cv.notify_all();
    return id;
  }

  // POST /api/v1/suspend | resume (HTTP threads). Persisted first: the answer is only given
  // once a restart would keep it.
  Result<std::string> set_suspended(bool on, const std::string& reason, const std::string& by) {
    std::optional<Suspension> next;
    if (on) next = Suspension{iso(Clock::now()), reason, by};
    bool was = false;
    {
      std::lock_guard<std::mutex> lock(suspend_mu);
      const auto current = state.get()->suspension;
      was = current.has_value();
      if (on && was) {
        next = current;  // already suspended: keep since/by; a new reason replaces the old
        if (!reason.empty()) next->reason = reason;
      }
      if (auto st = write_suspension(suspension_file(cfg.state_dir), next); !st) return st.error();
      put([&](DaemonState& s) { s.suspension = next; });
    }
    if (on) {
      halt = true;  // a pass in flight starts no new step; the next one only plans
      log->warn(
          "SUSPENDED by {}{}{}: nothing is written until resumed; sources are still polled "
          "and drift reported",
          by, reason.empty() ? "" : ": ", reason);
    } else {
      log->info("resumed by {}{}", by, was ? "" : " (was not suspended)");
      nudge("api resume");  // reconcile at once
    }
    return dump_json(nlohmann::json{{"suspended", next ? to_json(*next) : nlohmann::json()}});
  }

  // POST /api/v1/suspend|resume with a project (HTTP threads): persisted first, like the
  // global suspension. The pass in flight is not stopped (other projects keep applying); the
  // next one plans the project without writing it, so a pass is started at once either way.
  Result<std::string> set_project_suspended(bool on, const std::string& project,
                                            const std::string& reason, const std::string& by) {
    ProjectSuspensions next;
    bool was = false;
    {
      std::lock_guard<std::mutex> lock(suspend_mu);
      const auto now = state.get();  // held: `current` refers into it
      const ProjectSuspensions& current = now->suspended_projects;
      was = current.count(project) > 0;
      auto changed = change_project_suspension(current, on, project,
                                               Suspension{iso(Clock::now()), reason, by});
      if (!changed) return changed.error();
      next = std::move(*changed);
      if (auto st = write_project_suspensions(project_suspension_file(cfg.state_dir), next); !st)
        return st.error();
      put([&](DaemonState& s) { s.suspended_projects = next; });
    }
    if (on)
      log->warn("project {} SUSPENDED by {}{}{}: planned, nothing of it is written until resumed",
                project, by, reason.empty() ? "" : ": ", reason);
    else
      log->info("project {} resumed by {}{}", project, by, was ? "" : " (was not suspended)");
    nudge(on ? "api suspend project " + project : "api resume project " + project);
    nlohmann::json body{{"project", project}, {"suspendedProjects", to_json(next)}};
    if (auto it = next.find(project); it != next.end()) body["suspended"] = to_json(it->second);
    return dump_json(body);
  }

  void notify_event(notify::EventKind kind, const std::string& summary,
                    std::vector<std::string> details) {
    // The revision in force: the one the pass reconciled.
    if (notifier)
      notifier->notify(
          notify::Event{kind, state.get()->revision, summary, std::move(details), Clock::now()});
  }

  // Records a failure; the first after a success is notified as sync_failed, unless
  // `notified` (a refusal, which publish() notifies as revision_refused).
  void set_failure(const std::string& what, bool notified = false) {
    log->error("{}", what);
    bool transition = false;
    put([&](DaemonState& s) { transition = fail(s, what); });
    if (transition && !notified) notify_event(notify::EventKind::sync_failed, what, {});
  }

  // Records (or, with "", clears) the source's problem; a new problem is also a failure. Only
  // the reconcile thread changes it, so reading it first is not a race.
  void source_problem(const std::string& what) {
    if (state.get()->source_error == what) return;
    put([&](DaemonState& s) { s.source_error = what; });
    if (!what.empty()) set_failure(what);
  }

  // Pulls the source; on a new valid revision replaces the revision in force.
  void pull() {
    auto head = rec->head();
    metrics.source_polls_total.with({head ? "success" : "error"}).inc();
    if (!head) {
      source_problem("source " + rec->describe_source() + ": " + head.error().message +
                     (in_force ? " (revision " + in_force->revision + " stays in force)" : ""));
      return;
    }
    if (in_force && *head == in_force->revision) {  // unchanged: one ref lookup
      source_problem("");
      return;
    }
    if (*head == rejected_revision) return;  // already rejected; wait for a new one
    auto loaded = rec->load();
    metrics.source_fetches_total.with({loaded ? "success" : "error"}).inc();
    if (!loaded) {
      source_problem("source " + rec->describe_source() + ": " + loaded.error().message);
      return;
    }
    if (!loaded->ok()) {
      rejected_revision = loaded->revision;
      const Rejection rejection =
          rejection_of(loaded->revision, loaded->diagnostics, iso(Clock::now()));
      metrics.record_reconcile(metrics::ReconcileResult::invalid, 0);
      put([&](DaemonState& s) { s.rejected = rejection; });
      source_problem(
          "revision " + loaded->revision + " is invalid (" +
          std::to_string(rejection.errors.size()) + " errors) and was rejected whole; " +
          (in_force ? "revision " + in_force->revision + " stays in force" : "nothing is applied"));
      for (const auto& e : rejection.errors) log->error("  {}", e);
      return;
    }
    if (auto whole = targeting.on_revision(in_force ? &*in_force : nullptr, *loaded, cfg);
        !whole.empty() && in_force)
      log->info("revision {}: {}: the pass is whole", loaded->revision, whole);
    in_force = std::move(*loaded);
    rejected_revision.clear();
    source_problem("");
    log->info("revision {} loaded: {} documents ({} files re-parsed)", in_force->revision,
              in_force->docs.document_count, in_force->files_parsed);
    put([&](DaemonState& s) {
      s.revision = in_force->revision;
      s.subject = in_force->subject;
      s.author = in_force->author;
      s.committed_at = in_force->committed_at;
      s.rejected.reset();
    });
  }

  void reconcile_once(const std::string& reason, uint64_t request) {
    halt = cancel.load();  // reset first: a leadership loss from here on sets it again
    const bool leading = !cluster || cluster->leading();
    leader_gauge.with({}).set(leading ? 1 : 0);
    pull();
    if (!in_force || !leading) return;  // followers pull (status) but never write
    const std::string& revision = in_force->revision;
    const log::Fields pass_fields{{"revision", revision}, {"trigger", reason}};
    const auto at_start = state.get();
    const bool suspended = at_start->suspension.has_value();
    pass::Options po =
        wiring::pass_options(cfg, suspended ? pass::Mode::plan : pass::Mode::execute);
    for (const auto& [project, sp] : at_start->suspended_projects) po.held.insert(project);
    po.cancel = &halt;
    po.on_steps = log_steps(log, revision);
    // Projects and overrides applied: ready now, not when the slowest package has arrived.
    po.on_applied = [this](const pass::Report& applied) {
      if (!applied.applied.ok()) return;
      put([](DaemonState& s) {
        s.first_success = true;
        s.target_up = true;
        s.not_ready.clear();
      });
    };
    po.on_registration = log_registration(log, revision);
    po.writer =
        cluster && !cluster->identity().empty() ? cluster->identity() : wiring::host_identity();
    po.trigger = reason;
    const auto started = Targeting::Clock::now();
    po.targeted = targeting.offer(reason, suspended, cfg.drift_scan(), started);
    auto report = std::make_shared<const pass::Report>(rec->pass(*in_force, po));
    targeting.after(*report, started);
    if (report->outcome == pass::Outcome::refused)
      log->error("revision {} REFUSED, nothing executed: {}", revision, report->guard.reason);
    log_ownership(*log, report->ownership, last_ownership);
    if (report->record_error) log->error("{}", report->record_error->message);
    publish(report, reason, request);
  }

  // Each managed object's revision and time of its last write after `report`: read whole after a
  // whole pass; after a targeted one, only its projects are read again.
  std::shared_ptr<const AppliedMap> applied_after(const pass::Report& report) {
    const auto& ledger = *rec->target().ledger;
    const auto before = state.get()->applied;
    auto read = report.targeted.used && before ? ledger.applied_of(report.targeted.projects)
                                               : ledger.applied();
    if (!read) return nullptr;
    return std::make_shared<const AppliedMap>(
        run::applied_after(report, before.get(), std::move(*read)));
  }

  // The state after a pass, the counters, and notifications: functions of the pass report
  // (pass/views, daemon_state).
  void publish(const std::shared_ptr<const pass::Report>& shared, const std::string& reason,
               uint64_t request) {
    const pass::Report& report = *shared;
    const bool suspended = report.mode == pass::Mode::plan;
    // After a targeted pass, objects and counts are the last whole pass's with its projects
    // replaced.
    std::shared_ptr<const pass::Report> view = shared;
    if (report.targeted.used)
      if (auto before = state.get()->report)
        view = std::make_shared<const pass::Report>(pass::merged_view(*before, report));
    metrics.sync_rpc_counts(rec->target().rpc_counts());
    // A suspended pass synced nothing: it does not move "last successful sync".
    metrics.record_reconcile(
        pass::reconcile_result(report), report.seconds,
        suspended ? 0 : std::chrono::duration<double>(Clock::now().time_since_epoch()).count());
    auto managed = rec->target().ledger->managed_counts();
    const auto counts =
        pass::object_counts(*view, managed ? *managed : std::map<std::string, size_t>{});
    for (const auto& [st, n] : pass::registrations_by_state(*view))
      registrations_gauge.with({st}).set(n);

    // Drift notifications only for newly seen drift (overrides; registration activation is in
    // status and the log).
    auto drift = pass::drift_notice(report, known_drift, cfg.policy.self_heal);
    for (const auto& line : drift.left_in_place)
      log->warn("drift ({}, left in place) {}", suspended ? "suspended" : "self-heal off", line);
    // After a targeted pass, what the last whole pass saw elsewhere is still known.
    known_drift = known_drift_after(report, std::move(drift.drifted), known_drift);
    if (!drift.lines.empty())
      notify_event(notify::EventKind::drift_detected, drift.summary, std::move(drift.lines));
    // A refusal once per refused revision (the same one refused every interval is not news).
    if (pass::refusal_is_news(report, refusal_notified))
      notify_event(notify::EventKind::revision_refused, report.guard.reason,
                   pass::refusal_lines(report));

    const bool overrides_ok = report.executed() && report.applied.ok();
    bool recovered = false;
    const std::string record = rec->record().describe();
    auto applied = applied_after(report);
    put([&](DaemonState& s) {
      if (applied) s.applied = std::move(applied);
      recovered = after_pass(s, shared, reason, iso(Clock::now()), record, counts, request, view);
    });
    // A failing registration (unreachable registry, conflict) fails only itself: it is reported
    // and retried every reconcile, but does not make the replica unready.
    if (report.outcome != pass::Outcome::success)
      set_failure((overrides_ok ? "" : "reconcile of " + report.revision + " failed: ") +
                      (report.error ? report.error->message : std::string("failed")),
                  /*notified=*/report.outcome == pass::Outcome::refused);
    if (recovered)
      notify_event(notify::EventKind::sync_recovered, "sync recovered at " + report.revision, {});
    log->info("reconcile ({}) of {}{}: {}; {:.2f}s", reason, report.revision,
              suspended ? " SUSPENDED, planned only (nothing written)" : "", pass::summary(report),
              report.seconds);
    if (cluster) cluster->on_pass(report);  // Kubernetes Event (rate-limited, best-effort)
  }

  // One pass that cannot take the daemon down: an exception escaping it (a library that throws
  // on input nobody foresaw) makes it a failed pass, reported in status and the log; the next
  // interval tries again.
  void guarded_pass(const std::string& reason, uint64_t request) {
    const auto thrown = run_guarded([&] { reconcile_once(reason, request); });
    // Served, whether a pass ran or not (a follower, no valid revision): a waiting client learns
    // from status what became of its request instead of waiting for a pass that never comes.
    put([&](DaemonState& s) { s.sync_served = std::max(s.sync_served, request); });
    if (!thrown) return;
    const std::string& what = *thrown;
    metrics.record_reconcile(metrics::ReconcileResult::failed, 0);
    const std::string message = "reconcile (" + reason + ") failed: internal error: " + what +
                                " (the pass was abandoned; retried at the next interval)";
    put([&](DaemonState& s) {
      s.last_pass = LastPass{reason, iso(Clock::now()), s.revision, message, request};
    });
    set_failure(message);
  }

  int loop() {
    std::mt19937_64 rng{std::random_device{}()};
    std::string reason = "startup";
    uint64_t serving = 0;  // the last request made before this pass starts
    {
      std::lock_guard<std::mutex> lock(mu);
      serving = requested;
    }
    while (true) {
      if (cancel.load()) break;
      guarded_pass(reason, serving);
      // Next poll: interval +-10% jitter, or earlier on a nudge.
      std::uniform_real_distribution<double> jitter(0.9, 1.1);
      auto wait = std::chrono::milliseconds(
          static_cast<long long>(cfg.interval_seconds * 1000.0 * jitter(rng)));
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, wait, [&] { return stop || reload || !trigger_reason.empty(); });
      if (stop) break;
      reason = trigger_reason.empty() ? "interval" : trigger_reason;
      trigger_reason.clear();
      serving = requested;
      if (reload) {
        reload = false;
        lock.unlock();
        Result<config::Config> fresh = make_error(ErrorCode::internal, "not loaded");
        if (auto thrown = run_guarded([&] { fresh = load_config(); }))
          fresh = make_error(ErrorCode::internal, "configuration: " + *thrown);
        if (!fresh) {
          log->error("SIGHUP: configuration not reloaded, the previous one stays in force: {}",
                     fresh.error().message);
          record_reload(fresh.error());
          continue;
        }
        log->info("SIGHUP: reloading configuration");
        log::configure(fresh->log.level, fresh->log.format);
        bool fatal = false;
        Status s = ok_status();
        if (auto thrown = run_guarded([&] { s = reload_to(*fresh, fatal); })) {
          s = make_error(ErrorCode::internal, *thrown);
          fatal =
              fatal || !rec || !rec->has_target() || !http;  // thrown between stopping and starting
        }
        if (fatal) {
          log->critical("reload failed: {}", s.error().message);
          return 1;
        }
        record_reload(s);
        if (!s) {
          log->error("SIGHUP: configuration not reloaded, the previous one stays in force: {}",
                     s.error().message);
          continue;
        }
        reason = "reload";
      }
    }
    return 0;
  }
};

Daemon::Daemon(ConfigLoader load_config) : m_impl(std::make_unique<Impl>()) {
  m_impl->load_config = std::move(load_config);
}
Daemon::~Daemon() = default;

void Daemon::request_stop() {
  {
    std::lock_guard<std::mutex> lock(m_impl->mu);
    m_impl->stop = true;
  }
  m_impl->cancel = true;
  m_impl->halt = true;
  m_impl->cv.notify_all();
}

void Daemon::trigger(const std::string& reason) { m_impl->nudge(reason); }

int Daemon::run() {
  // Signals go to one thread that turns them into requests; every thread started from here
  // inherits the mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::atomic<bool> done{false};
  std::thread signals([&] {
    while (!done) {
      timespec timeout{0, 200 * 1000 * 1000};
      int sig = sigtimedwait(&set, nullptr, &timeout);
      if (sig == SIGHUP) {
        {
          std::lock_guard<std::mutex> lock(m_impl->mu);
          m_impl->reload = true;
        }
        m_impl->cv.notify_all();
      } else if (sig == SIGTERM || sig == SIGINT) {
        m_impl->log->info("signal {}: stopping after the steps in flight", sig);
        request_stop();
      }
    }
  });
  int rc = 1;
  try {
    auto cfg = m_impl->load_config();
    if (!cfg) {
      m_impl->log->critical("configuration: {}", cfg.error().message);
    } else {
      log::configure(cfg->log.level, cfg->log.format);
      m_impl->cfg = *cfg;
      if (auto s = m_impl->build(); !s) {
        m_impl->log->critical("{}", s.error().message);
      } else {
        rc = m_impl->loop();
      }
    }
  } catch (const std::exception& e) {
    // Passes catch their own; this is start-up or the scheduler itself.
    m_impl->log->critical("internal error: {}", text::to_utf8_lossy(e.what()));
    rc = 1;
  }
  m_impl->teardown();
  done = true;
  signals.join();
  m_impl->log->info("stopped");
  return rc;
}

}  // namespace flytecd::run
