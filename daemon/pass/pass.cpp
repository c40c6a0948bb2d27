#include "daemon/pass/pass.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <optional>
#include <set>

#include "daemon/common/breaker.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/reconcile/render.hpp"
#include "daemon/reconcile/state.hpp"

namespace flytecd::pass {

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::success:
      return "success";
    case Outcome::refused:
      return "refused";
    case Outcome::failed:
      return "failed";
  }
  return "failed";
}

bool Report::target_down() const {
  if (registrations.target_down) return true;
  if (outcome != Outcome::failed || !error) return false;
  return error->code == ErrorCode::unavailable || error->code == ErrorCode::timeout ||
         error->code == ErrorCode::unauthenticated;
}

namespace {

registration::RegistrarOptions registrar_options(const Revision& rev, const Options& opt,
                                                 const PassScope& scope, bool dry_run,
                                                 CircuitBreaker* breaker) {
  registration::RegistrarOptions ro;
  ro.revision = dry_run ? "plan" : rev.id;
  ro.self_heal = opt.policy.self_heal;
  ro.prune = opt.policy.prune;
  ro.dry_run = dry_run;
  ro.parallelism = opt.parallelism;
  ro.cancel = opt.cancel;
  ro.max_package_bytes = opt.max_package_bytes;
  ro.memory = opt.memory;
  ro.breaker = breaker;
  ro.in_scope = [scope](const std::string& p, const std::string& d) {
    return in_scope(scope, p, d);
  };
  return ro;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What establishing ownership produced: the ledger the pass plans with (the caller's, rebuilt
// in place in execute mode; in plan mode a rebuilt copy in memory, so planning writes nothing)
// and the record as read (its token for the compare-and-swap writes).
struct OwnershipStep {
  ledger::Ledger* ledger = nullptr;
  std::unique_ptr<ledger::Ledger> scratch;
  std::optional<StoredRecord> stored;
  bool record_read = false;
};

// The registration records owned at the converged revision (read with `conv_packages`, else the
// source's packages) and, over them, what the pass in flight registered completely.
registration::RebuiltRegistrations rebuilt_registrations(
    Wiring& w, const Options& opt, const AppliedRecord& rec, const model::Documents& conv_docs,
    registration::PackageResolver* conv_packages, const model::Documents* flight_docs,
    registration::PackageResolver* flight_packages) {
  registration::RegistrarOptions ro;
  ro.self_heal = opt.policy.self_heal;
  ro.prune = opt.policy.prune;
  ro.parallelism = opt.parallelism;
  ro.cancel = opt.cancel;
  ro.max_package_bytes = opt.max_package_bytes;
  ro.memory = opt.memory;
  auto regs = registration::rebuild_registration_records(
      conv_docs.registrations, rec.converged, *w.entities,
      conv_packages ? *conv_packages : *w.packages, *w.ledger, ro);
  if (!flight_docs) return regs;
  // What the pass in flight registered completely is owned at its version.
  auto more = registration::rebuild_registration_records(
      flight_docs->registrations, rec.in_flight, *w.entities,
      flight_packages ? *flight_packages : *w.packages, *w.ledger, ro);
  for (auto& m : more.records) {
    auto same = std::find_if(regs.records.begin(), regs.records.end(),
                             [&](const auto& x) { return x.key == m.key; });
    if (same == regs.records.end())
      regs.records.push_back(std::move(m));
    else
      *same = std::move(m);  // registered at the in-flight version: that is what is live
  }
  regs.lookups += more.lookups;
  return regs;
}

// Step 0 of a pass: is the ledger current? If the record names a converged revision the ledger
// does not have, rebuild ownership from Git at that revision (see ownership.hpp).
// `pre_read`: the record as the pass already read it (a targeted pass reads it first), else null.
OwnershipStep establish_ownership(const Revision& rev, Wiring& w, const Options& opt,
                                  const sinks::Capabilities& held, const reconcile::State& live,
                                  Report& r,
                                  Result<std::optional<StoredRecord>>* pre_read = nullptr) {
  OwnershipStep out;
  out.ledger = w.ledger;
  Ownership& own = r.ownership;
  auto empty = w.ledger->owns_nothing();
  const bool owns_nothing = empty && *empty;
  const std::string where = w.record ? w.record->describe() : "";
  auto none = [&] {
    if (!owns_nothing) return;
    own.state = Ownership::State::none;
    own.message =
        "the ledger is empty and there is no applied-revision record" +
        (w.record ? " (" + where + ")" : std::string()) +
        ": objects equal to Git are adopted, the rest is listed as unmanaged and left alone (run "
        "`flytecd recover --from-revision REV` to rebuild ownership from a revision flytecd "
        "applied)";
  };
  if (!w.record) {
    none();
    return out;
  }
  auto stored = pre_read ? std::move(*pre_read) : w.record->read();
  if (!stored) {
    own.state = Ownership::State::unavailable;
    own.message = "applied-revision record: " + stored.error().message +
                  " (planning with the ledger as it is)";
    return out;
  }
  out.record_read = true;
  out.stored = std::move(*stored);
  if (!out.stored) {
    none();
    return out;
  }
  const AppliedRecord& rec = out.stored->record;
  auto converged = w.ledger->converged_revision();
  if (!converged) {
    own.state = Ownership::State::unavailable;
    own.message = converged.error().message;
    return out;
  }
  if (!needs_rebuild(rec, *converged, opt.config_fingerprint)) {
    if (!rec.config_fingerprint.empty() && rec.config_fingerprint != opt.config_fingerprint &&
        owns_nothing) {
      none();
      own.message += "; the record at " + where +
                     " was written for another target, repository or domains and is not used";
    }
    return out;
  }
  auto fail = [&](const std::string& why) {
    own.state = Ownership::State::unavailable;
    own.message = "cannot rebuild ownership from " + rec.converged.substr(0, 12) + " (" + where +
                  "): " + why + " (planning with the ledger as it is)";
    return std::move(out);
  };
  // A directory keeps no history: its revision id is a hash of what it held when it was applied,
  // but that content is gone, so it cannot be rebuilt from (rebuilding from what it holds now
  // would call a change in the directory drift).
  if (rec.converged.rfind("dir:", 0) == 0)
    return fail(
        "the recorded revision is a directory, which keeps no history (use a Git source, "
        "or keep the state directory)");
  if (!w.revision_at) return fail("the source has no history");
  auto at = rec.converged == rev.id ? Result<EarlierRevision>(make_error(ErrorCode::internal, ""))
                                    : w.revision_at(rec.converged);
  const model::Documents* conv_docs = rec.converged == rev.id ? rev.docs : nullptr;
  if (!conv_docs) {
    if (!at) return fail(at.error().message);
    conv_docs = &at->docs;
  }
  std::optional<Result<EarlierRevision>> flight;
  const model::Documents* flight_docs = nullptr;
  if (!rec.in_flight.empty() && rec.in_flight != rec.converged) {
    if (rec.in_flight == rev.id) {
      flight_docs = rev.docs;
    } else {
      flight = w.revision_at(rec.in_flight);
      if (*flight) flight_docs = &(**flight).docs;
    }
  }
  const reconcile::State conv_state = desired_state(*conv_docs, held);
  std::optional<reconcile::State> flight_state;
  if (flight_docs) flight_state = desired_state(*flight_docs, held);
  auto objects = owned_objects(conv_state, rec.converged, flight_state ? &*flight_state : nullptr,
                               rec.in_flight, live);
  registration::RebuiltRegistrations regs;
  if (w.entities && w.packages)
    regs =
        rebuilt_registrations(w, opt, rec, *conv_docs, at ? at->packages.get() : nullptr,
                              flight_docs, flight && *flight ? (**flight).packages.get() : nullptr);
  ledger::Ledger* target = w.ledger;
  if (opt.mode == Mode::plan) {
    auto scratch = ledger::Ledger::open(":memory:");
    if (!scratch) return fail(scratch.error().message);
    out.scratch = std::move(*scratch);
    target = out.scratch.get();
  }
  if (auto s = target->replace_ownership(objects, regs.records, rec.converged); !s)
    return fail(s.error().message);
  out.ledger = target;
  own.state = Ownership::State::rebuilt;
  own.from_revision = rec.converged;
  own.in_flight = flight_docs ? rec.in_flight : "";
  own.objects = objects.size();
  own.registrations = regs.records.size();
  own.skipped = std::move(regs.skipped);
  own.message = "ownership rebuilt from Git at " + rec.converged.substr(0, 12) +
                (own.in_flight.empty() ? "" : " and in-flight " + own.in_flight.substr(0, 12)) +
                " (" + where + "): " + std::to_string(own.objects) + " object(s), " +
                std::to_string(own.registrations) + " registration(s)" +
                (own.skipped.empty() ? ""
                                     : ", " + std::to_string(own.skipped.size()) +
                                           " registration(s) to register again") +
                (opt.mode == Mode::plan ? " (in memory: planning writes nothing)" : "");
  return out;
}

// Writes the record (execute mode), keeping the token for the next write of the same pass.
void write_record(Wiring& w, OwnershipStep& own, const Options& opt, const std::string& converged,
                  const std::string& in_flight, Report& r) {
  if (!w.record || !own.record_read || r.record_error) return;
  AppliedRecord rec;
  rec.converged = converged;
  rec.in_flight = in_flight;
  rec.config_fingerprint = opt.config_fingerprint;
  rec.version = FLYTECD_VERSION;
  rec.writer = opt.writer;
  rec.updated_at = unix_now();
  auto token = w.record->write(rec, own.stored ? own.stored->token : "");
  if (!token) {
    r.record_error = token.error().wrap("applied-revision record " + w.record->describe());
    return;
  }
  own.stored = StoredRecord{rec, *token};
}

// One pass, stage by stage (run() below): observe, own, plan, guard, then either report the plan
// or execute projects and overrides, then registrations, and record the outcome.
class OnePass {
 public:
  OnePass(const Revision& rev, Wiring& w, const Options& opt)
      : m_rev(rev), m_w(w), m_opt(opt), m_started(std::chrono::steady_clock::now()) {
    r.mode = opt.mode;
    r.revision = rev.id;
    r.subject = rev.subject;
    r.target = w.target;
    r.documents = rev.docs->document_count;
  }

  Report run();

 private:
  Report finish() {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
    return std::move(r);
  }
  Report fail(const Error& e) {
    r.outcome = Outcome::failed;
    r.error = e;
    // Nothing was observed: every desired object's state is unknown, and says why.
    r.applied.objects = pass::object_statuses(*m_desired, nullptr, {}, e.message);
    return finish();
  }
  bool cancelled() const { return m_opt.cancel && m_opt.cancel->load(); }
  void decide_targeted();
  std::optional<Error> observe_scope(std::optional<sinks::State>& live);
  std::optional<Error> count_whole();
  void widen(reconcile::GuardInput& in) const;
  std::set<std::string> observed_keys() const;
  void start_registration_planning();
  std::optional<Error> join_planning();
  std::optional<Error> guard();
  Report refused();
  Report plan_only();
  void execute_overrides();
  std::optional<Error> check_early_bound();
  void execute_registrations();
  void set_outcome(const std::optional<Error>& planning_error);
  void converge();

  const Revision& m_rev;
  Wiring& m_w;
  const Options& m_opt;
  const std::chrono::steady_clock::time_point m_started;
  Report r;
  // What the pass covers: m_opt.scope, or the projects of a targeted pass (decide_targeted).
  PassScope m_scope;
  // A targeted pass reads the applied-revision record before it observes; ownership reuses it.
  std::optional<Result<std::optional<StoredRecord>>> m_record_read;
  // A targeted pass: every kind's managed and declared counts over the whole revision and ledger,
  // which its guard counts against (widen).
  std::vector<reconcile::GuardKind> m_whole_kinds;
  // Shared: the plan's steps point into it (reconcile::plan's shared overload) rather than copy
  // each desired value.
  std::shared_ptr<const reconcile::State> m_desired = std::make_shared<const reconcile::State>();
  std::vector<model::Registration> m_declared;
  bool m_registrations = false;
  std::optional<OwnershipStep> m_own;
  ledger::Ledger* m_ledger = nullptr;
  reconcile::Managed m_managed;
  CircuitBreaker m_breaker;  // one per pass: a target that stops answering stops all of it
  std::optional<registration::RegistrationPlan> m_reg_plan;
  std::future<Result<registration::RegistrationPlan>> m_planning;
  bool m_early = false;  // the package-free guard bound passed
  bool m_whole = false;  // neither narrowed to scopes nor holding projects
};

Report OnePass::run() {
  m_scope = m_opt.scope;
  if (m_opt.targeted) decide_targeted();
  // The parts the sink holds: platform defaults are rows only where a sink holds them (ConfigMap).
  // A targeted pass builds the desired state of its projects only.
  const sinks::Capabilities held = m_w.sink->capabilities();
  m_desired = std::make_shared<const reconcile::State>(
      m_scope.projects ? desired_state(narrowed(m_scope, *m_rev.docs), held)
                       : narrowed(m_scope, desired_state(*m_rev.docs, held)));
  if (cancelled()) return fail(Error{ErrorCode::unavailable, "cancelled before the pass started"});
  m_declared = narrowed(m_scope, m_rev.docs->registrations);
  m_registrations = m_w.entities && m_w.packages;

  std::optional<sinks::State> live;
  if (auto e = observe_scope(live)) return fail(*e);
  r.observed = true;
  // Ownership: the ledger, or rebuilt from Git at the applied-revision record's revision (never
  // in a targeted pass: it runs only when the ledger is current).
  m_own = establish_ownership(m_rev, m_w, m_opt, held, *live, r,
                              m_record_read ? &*m_record_read : nullptr);
  m_ledger = m_own->ledger;
  if (!m_scope.projects) {
    auto managed = m_ledger->managed();
    if (!managed) return fail(managed.error().wrap("ledger"));
    m_managed = std::move(*managed);
  }
  narrow(m_scope, *live, m_managed);
  if (m_scope.projects)
    if (auto e = count_whole()) return fail(*e);

  // Plan: projects and overrides, then registrations. Registrations are planned once, here, in
  // both modes, before the guard (which counts their removals and deactivations from this plan);
  // execution carries out this plan. What the ledger calls registered is observed first (the
  // launch plans at the version), so a target that lacks it is planned as "missing in
  // FlyteAdmin" here, not discovered during execution.
  r.plan = reconcile::plan(m_desired, *live, m_managed, m_opt.policy);
  *live = reconcile::State{};  // the plan holds what it needs; a cold pass's observation is large
  start_registration_planning();
  if (auto e = guard()) return fail(*e);
  if (r.guard.refused) return refused();
  if (m_opt.mode == Mode::plan) return plan_only();

  execute_overrides();
  // Registrations: their plan (packages) may still be coming; a stuck package delays only this.
  std::optional<Error> planning_error = join_planning();
  if (!planning_error) planning_error = check_early_bound();
  if (planning_error) m_reg_plan.reset();
  if (m_whole && m_reg_plan && r.has_changes() &&
      (!m_own->stored || m_own->stored->record.in_flight != m_rev.id))
    write_record(m_w, *m_own, m_opt, m_own->stored ? m_own->stored->record.converged : "", m_rev.id,
                 r);
  if (m_reg_plan && !cancelled()) execute_registrations();
  set_outcome(planning_error);
  converge();
  // Record: a pass that did something, or failed, is history; one with nothing to do is counted.
  if (worth_recording(r))
    (void)m_ledger->record_pass(history_record(r, m_rev, m_opt.trigger), m_opt.retention);
  else
    (void)m_ledger->count_noop();
  return finish();
}

// A targeted pass runs only when everything outside its projects is known applied as this
// revision has it: the ledger and the record say the change's base converged, and nothing else
// asks for the whole repository. Otherwise the pass is whole and the report says why.
void OnePass::decide_targeted() {
  TargetedReport& t = r.targeted;
  t.asked = true;
  t.base = m_opt.targeted->base;
  t.projects = m_opt.targeted->projects;
  const std::string base = t.base.substr(0, 12);
  auto whole = [&](std::string why) { t.whole_because = std::move(why); };
  if (!m_opt.scope.empty()) return whole("the pass is limited to " + m_opt.scope.describe());
  if (!m_opt.held.empty()) return whole("projects are suspended");
  if (!m_w.sink->capabilities().objects.empty())
    return whole("the target holds generic objects (settings)");
  auto converged = m_w.ledger->converged_revision();
  if (!converged) return whole("ledger: " + converged.error().message);
  if (*converged != t.base) return whole("the ledger's converged revision is not " + base);
  if (m_w.record) {
    m_record_read = m_w.record->read();
    if (!*m_record_read) return whole("applied-revision record: " + m_record_read->error().message);
    const auto& stored = **m_record_read;
    if (!stored || stored->record.converged != t.base || !stored->record.in_flight.empty() ||
        stored->record.config_fingerprint != m_opt.config_fingerprint)
      return whole("the applied-revision record does not say " + base + " converged");
  }
  t.used = true;
  m_scope.projects = t.projects;
}

// The override keys a targeted observation must cover: the desired state's and the ledger's.
std::set<std::string> OnePass::observed_keys() const {
  std::set<std::string> keys;
  for (const auto& [key, o] : m_desired->overrides) keys.insert(key);
  for (const auto& [key, rec] : m_managed)
    if (key.rfind("override/", 0) == 0) keys.insert(key);
  return keys;
}

// Observe. A sink whose server cannot list what it holds (Flyte 2's settings) is told which
// objects to read: those Git declares and those the ledger says flytecd owns. A targeted pass
// reads the ledger's rows of its projects first and observes only them (no project: nothing).
std::optional<Error> OnePass::observe_scope(std::optional<sinks::State>& live) {
  if (m_scope.projects) {
    m_w.sink->expect({});
    auto owned = m_w.ledger->managed_of(*m_scope.projects);
    if (!owned) return owned.error().wrap("ledger");
    m_managed = std::move(*owned);
    if (m_scope.projects->empty()) {
      live.emplace();
      return std::nullopt;
    }
    auto seen = m_w.sink->observe_scoped(sinks::ObserveScope{*m_scope.projects, observed_keys()});
    if (!seen) return seen.error().wrap(m_w.target);
    live = std::move(*seen);
    return std::nullopt;
  }
  auto owned = m_w.ledger->managed();
  if (!owned) return owned.error().wrap("ledger");
  m_w.sink->expect(reconcile::expected_objects(*m_desired, *owned));
  auto seen = m_w.sink->observe();
  if (!seen) return seen.error().wrap(m_w.target);
  live = std::move(*seen);
  return std::nullopt;
}

// A targeted pass guards against the whole: what the ledger manages and the revision declares
// of each kind (the scope's removals are all there are: outside it nothing changed).
std::optional<Error> OnePass::count_whole() {
  auto counts = m_ledger->managed_counts();
  if (!counts) return counts.error().wrap("ledger");
  auto records = m_ledger->registrations(ledger::Ledger::Entities::skip);
  if (!records) return records.error().wrap("ledger");
  const model::Documents& docs = *m_rev.docs;
  const sinks::Capabilities held = m_w.sink->capabilities();
  size_t launch_plans = 0;
  for (const auto& [key, rec] : *records) launch_plans += rec.activated.size();
  const size_t overrides = (held.overrides ? docs.overrides.size() : 0) +
                           (held.platform_defaults ? docs.platform_defaults.size() : 0);
  m_whole_kinds = {
      {"projects", (*counts)["project"], held.projects ? docs.projects.size() : 0, 0},
      {"overrides", (*counts)["override"], overrides, 0},
      {"registrations", records->size(), docs.registrations.size(), 0},
      {"launch plans", launch_plans, docs.registrations.empty() ? 0 : launch_plans, 0}};
  return std::nullopt;
}

void OnePass::widen(reconcile::GuardInput& in) const {
  for (auto& k : in.kinds)
    for (const auto& w : m_whole_kinds)
      if (k.name == w.name) {
        k.managed = std::max(w.managed, k.destroyed);
        k.desired = w.desired;
      }
}

// Registrations are planned on a thread of their own: their packages come from registries that
// may be slow or never answer (each load is bounded by packages.fetchTimeout and stops on
// cancel), and projects and overrides need none of them. Plan mode reads changed packages whole
// (every package error is reported); execute mode reads a summary, and the package again,
// pinned to the same digest, as it executes.
void OnePass::start_registration_planning() {
  if (!m_registrations) return;
  m_planning = std::async(std::launch::async, [this] {
    return registration::plan_registrations(
        m_declared, *m_w.entities, *m_w.packages, *m_ledger,
        registrar_options(m_rev, m_opt, m_scope, /*dry_run=*/m_opt.mode == Mode::plan, &m_breaker));
  });
}

std::optional<Error> OnePass::join_planning() {
  if (!m_planning.valid()) return std::nullopt;
  auto planned = m_planning.get();
  if (!planned) return planned.error().wrap("registration plan");
  m_reg_plan = std::move(*planned);
  r.registrations = registration::report_of(*m_reg_plan);
  return std::nullopt;
}

// Guard: one verdict over every destructive step of the revision, before any of it runs.
// Execute mode first tries a bound that needs no package: removals as the ledger has them and,
// for every declared registration, every launch plan its record activated (the most a new
// version or content could deactivate). If the bound passes, the real plan passes too, and
// projects and overrides run without waiting for any package. Otherwise (and in plan mode) the
// guard waits for the registration plan and counts from it, as without the bound.
std::optional<Error> OnePass::guard() {
  std::map<std::string, ledger::RegistrationRecord> records;
  if (!m_registrations || m_opt.mode == Mode::execute) {
    auto read = m_ledger->registrations(ledger::Ledger::Entities::skip);  // activated ones counted
    if (!read) return read.error().wrap("ledger");
    records = std::move(*read);
    narrow(m_scope, records);
  }
  if (m_registrations && m_opt.mode == Mode::execute) {
    r.guard_input = guard_bound(r.plan, *m_desired, r.documents, m_managed, records, m_declared,
                                m_opt.policy.prune);
    widen(r.guard_input);
    r.guard = reconcile::guard_pass(r.guard_input, m_opt.policy);
    m_early = !r.guard.refused;
  }
  if (!m_early) {
    if (auto e = join_planning()) return e;
    r.guard_input = guard_input(r.plan, *m_desired, r.documents, m_managed, records, m_declared,
                                m_reg_plan ? &*m_reg_plan : nullptr, m_opt.policy.prune);
    widen(r.guard_input);
    r.guard = reconcile::guard_pass(r.guard_input, m_opt.policy);
  }
  // `records` goes here: the registration plan carries what it needs (no second copy of every
  // record).
  return std::nullopt;
}

Report OnePass::refused() {
  r.plan.refused = true;
  r.plan.refusal = r.guard.reason;
  r.outcome = Outcome::refused;
  r.error = Error{ErrorCode::conflict, r.guard.reason};
  if (m_opt.mode == Mode::execute)  // the history shows the refusal (no steps)
    (void)m_ledger->record_pass(history_record(r, m_rev, m_opt.trigger), m_opt.retention);
  return finish();
}

Report OnePass::plan_only() {
  // What each desired object would need, for status and `get objects` (nothing is written).
  r.applied.objects = pass::object_statuses(*m_desired, &r.plan, {}, "");
  for (auto& o : r.applied.objects)
    if (o.state == ObjectState::pending)
      o.detail = o.detail.substr(0, o.detail.find(" not started")) + " planned, not written";
  if (m_opt.on_registration)
    for (const auto& o : r.registrations.items) m_opt.on_registration(o);
  if (!r.registrations.ok()) {
    r.outcome = Outcome::failed;
    for (const auto& o : r.registrations.items)
      if (!o.ok()) {
        r.error = Error{ErrorCode::internal, o.key + ": " + o.message};
        break;
      }
  }
  return finish();
}

// Projects and overrides (phase by phase, re-observed until converged), before registrations
// (projects exist, TASK_RESOURCE limits are in place before a task is created).
void OnePass::execute_overrides() {
  // The record says a pass is in flight before its first write: a replica that takes over
  // from here knows that live values of this revision are not drift.
  // A pass limited to some scopes (--project) neither converges the revision nor marks it in
  // flight: the record and the ledger's converged revision speak for the whole repository.
  // Suspended projects are planned like the others (the plan and status show what they would
  // do) and executed nothing of: their steps, rows and registrations are left out of execution.
  m_whole = m_opt.scope.empty() && m_opt.held.empty();
  r.held = m_opt.held;
  // With no project held, round 1 executes the pass's plan in place and the desired state as it
  // is: a copy of either costs tens of MiB at 38k steps (bench_apply's cold converge).
  std::optional<reconcile::Plan> exec_plan;
  std::optional<reconcile::State> exec_desired;
  if (!m_opt.held.empty()) {
    exec_plan = without_held(r.plan, m_opt.held);
    exec_desired = without_held(*m_desired, m_opt.held);
    r.held_steps = r.plan.steps.size() - exec_plan->steps.size();
    keep_drift_of_held(r.plan, m_opt.held);
  }
  if (m_whole && r.has_changes() && (!m_own->stored || m_own->stored->record.in_flight != m_rev.id))
    write_record(m_w, *m_own, m_opt, m_own->stored ? m_own->stored->record.converged : "", m_rev.id,
                 r);

  pass::ApplyOptions ao;
  ao.revision = m_rev.id;
  ao.policy = m_opt.policy;
  ao.parallelism = m_opt.parallelism;
  ao.max_rounds = m_opt.max_rounds;
  ao.cancel = m_opt.cancel;
  ao.breaker = &m_breaker;
  ao.first_plan = exec_plan ? &*exec_plan : &r.plan;
  if (m_scope.projects) {
    ao.observe_scope.projects = *m_scope.projects;
    ao.observe_scope.override_keys = observed_keys();
    ao.widen_guard = [this](reconcile::GuardInput& in) { widen(in); };
  }
  ao.narrow = [this](reconcile::State& l, reconcile::Managed& m) {
    narrow(m_scope, l, m);
    drop_held(m_opt.held, l, m);
  };
  r.applied = pass::apply(*m_w.sink, *m_ledger, exec_desired ? *exec_desired : *m_desired, ao,
                          m_opt.on_steps);
  if (!m_opt.held.empty()) {
    auto held_objects = held_statuses(only_held(*m_desired, m_opt.held), r.plan);
    r.applied.objects.insert(r.applied.objects.end(), held_objects.begin(), held_objects.end());
    std::sort(r.applied.objects.begin(), r.applied.objects.end(),
              [](const ObjectStatus& a, const ObjectStatus& b) { return a.key < b.key; });
  }
  if (m_opt.on_applied) m_opt.on_applied(r);
}

// After the early bound let projects and overrides run: the counts from the real plan, for the
// report; they are within the bound that passed.
std::optional<Error> OnePass::check_early_bound() {
  if (!m_early || !m_reg_plan) return std::nullopt;
  r.guard_input = guard_input(r.plan, *m_desired, r.documents, m_managed, {}, m_declared,
                              &*m_reg_plan, m_opt.policy.prune);
  widen(r.guard_input);
  if (auto real = reconcile::guard_pass(r.guard_input, m_opt.policy); real.refused)
    return Error{ErrorCode::conflict, real.reason};  // cannot happen: bound >= real
  return std::nullopt;
}

void OnePass::execute_registrations() {
  const auto held_regs = split_held(*m_reg_plan, m_opt.held);
  r.registrations = registration::execute_registrations(
      *m_reg_plan, *m_w.entities, *m_w.packages, *m_ledger,
      registrar_options(m_rev, m_opt, m_scope, /*dry_run=*/false, &m_breaker),
      m_opt.on_registration);
  for (auto o : registration::report_of(held_regs).items) {
    if (o.state != registration::RegistrationState::in_sync) {
      ++r.held_steps;
      o.message = "project " + std::string(key_project(o.key)) +
                  " suspended: planned, not written" + (o.message.empty() ? "" : "; " + o.message);
    }
    r.registrations.items.push_back(std::move(o));
  }
}

void OnePass::set_outcome(const std::optional<Error>& planning_error) {
  if (!r.applied.ok()) {
    r.outcome = Outcome::failed;
    r.error = Error{r.applied.error.empty() ? ErrorCode::internal : r.applied.error_code,
                    r.applied.error.empty() ? "did not converge" : r.applied.error};
  } else if (planning_error) {
    r.outcome = Outcome::failed;
    r.error = *planning_error;
  } else if (!r.registrations.ok()) {
    r.outcome = Outcome::failed;
    if (r.registrations.target_down) {
      r.error = *r.registrations.target_down;
    } else {
      for (const auto& o : r.registrations.items)
        if (!o.ok()) {
          r.error =
              Error{o.state == registration::RegistrationState::conflict ? ErrorCode::conflict
                                                                         : ErrorCode::internal,
                    std::to_string(r.registrations.failed()) + " registration(s) failed: " + o.key +
                        ": " + o.message};
          break;
        }
    }
  }
}

// Converged: the ledger and the record name this revision (the record is written only when it
// changes, so a no-op interval writes nothing).
void OnePass::converge() {
  if (!m_whole || r.outcome != Outcome::success || cancelled()) return;
  auto had = m_ledger->converged_revision();
  if (!had || *had != m_rev.id) (void)m_ledger->set_converged_revision(m_rev.id);
  const auto& stored = m_own->stored;
  if (!stored || stored->record.converged != m_rev.id || !stored->record.in_flight.empty() ||
      stored->record.config_fingerprint != m_opt.config_fingerprint)
    write_record(m_w, *m_own, m_opt, m_rev.id, "", r);
}

}  // namespace

Report run(const Revision& rev, Wiring& w, const Options& opt) {
  return OnePass(rev, w, opt).run();
}

}  // namespace flytecd::pass
