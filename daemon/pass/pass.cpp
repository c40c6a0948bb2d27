#include "daemon/pass/pass.hpp"

#include "daemon/wiring.hpp"

#include <chrono>
#include <set>

#include "daemon/common/breaker.hpp"
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

reconcile::GuardInput guard_input(const reconcile::Plan& plan, const reconcile::State& desired,
                                  size_t documents, const reconcile::Managed& managed,
                                  const std::map<std::string, ledger::RegistrationRecord>& records,
                                  const std::vector<model::Registration>& declared,
                                  const registration::RegistrationPlan* registrations, bool prune) {
  reconcile::RegistrationCounts counts;
  counts.declared = declared.size();
  if (registrations) {
    // The registration plan holds the ledger's records (item.previous) and knows what each item
    // deactivates: on removal (prune) and on a version or activation change.
    for (const auto& it : registrations->items) {
      if (!it.previous) continue;
      ++counts.managed;
      counts.launch_plans_managed += it.previous->activated.size();
      counts.removed += it.state == registration::ItemState::remove;
    }
    counts.launch_plans_deactivated = registrations->deactivations();
    return reconcile::guard_input(plan, desired, documents, managed, counts);
  }
  // No registration plan (the pass has no registration sink): from the ledger; a removed
  // registration deactivates at most what it activated.
  std::set<std::string> keys;
  for (const auto& r : declared) keys.insert(registration::registration_key(r));
  counts.managed = records.size();
  for (const auto& [key, rec] : records) {
    counts.launch_plans_managed += rec.activated.size();
    if (keys.count(key) || !prune) continue;
    ++counts.removed;
    counts.launch_plans_deactivated += rec.activated.size();
  }
  return reconcile::guard_input(plan, desired, documents, managed, counts);
}

bool worth_recording(const Report& r) {
  if (r.mode != Mode::execute) return false;
  if (r.outcome != Outcome::success) return true;
  for (const auto& s : r.applied.results)
    if (s.step.action != reconcile::Action::adopt) return true;
  return r.registrations.has_changes();
}

ledger::PassRecord history_record(const Report& r, const Revision& rev,
                                  const std::string& trigger) {
  ledger::PassRecord rec;
  rec.revision = rev.id;
  rec.subject = rev.subject;
  rec.author = rev.author;
  rec.committed_at = rev.committed_at;
  rec.trigger = trigger;
  rec.outcome = std::string(to_string(r.outcome));
  rec.detail = r.error ? r.error->message : "";
  for (const auto& s : r.applied.results) {
    if (s.step.action == reconcile::Action::adopt) continue;
    ledger::HistoryStep h;
    h.action = std::string(reconcile::to_string(s.step.action));
    h.key = s.step.key;
    h.outcome = s.status ? "ok" : "failed";
    h.message = s.status ? s.step.reason : s.status.error().message;
    const auto changes = reconcile::step_changes(s.step);
    if (!changes.empty()) {
      nlohmann::ordered_json j = nlohmann::ordered_json::array();
      for (const auto& c : changes) j.push_back(reconcile::change_json(c));
      h.changes = j.dump();
    }
    rec.steps.push_back(std::move(h));
  }
  for (const auto& o : r.registrations.items) {
    if (o.state == "in-sync") continue;
    ledger::HistoryStep h;
    h.action = o.state;
    h.key = o.key;
    h.outcome = o.ok() ? "ok" : "failed";
    h.message = registration::describe(o);
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    auto change = [&](const char* path, const std::string& before, const std::string& after) {
      if (before != after)
        j.push_back(
            {{"path", path},
             {"live", before.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(before)},
             {"desired",
              after.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(after)}});
    };
    if (!o.previous_version.empty() || !o.previous_digest.empty()) {
      change("version", o.previous_version, o.version);
      change("digest", o.previous_digest, o.digest);
    }
    if (!j.empty()) h.changes = j.dump();
    rec.steps.push_back(std::move(h));
  }
  return rec;
}

namespace {

registration::RegistrarOptions registrar_options(const Revision& rev, const Options& opt,
                                                 bool dry_run, CircuitBreaker* breaker) {
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
  ro.in_scope = [scope = opt.scope](const std::string& p, const std::string& d) {
    return in_scope(scope, p, d);
  };
  return ro;
}

}  // namespace

Report run(const Revision& rev, Wiring& w, const Options& opt) {
  const auto started = std::chrono::steady_clock::now();
  Report r;
  r.mode = opt.mode;
  r.revision = rev.id;
  r.subject = rev.subject;
  r.target = w.target;
  r.documents = rev.docs->document_count;
  auto finish = [&]() -> Report {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return std::move(r);
  };
  // The parts the sink holds: platform defaults are rows only where a sink holds them (ConfigMap).
  const reconcile::State desired =
      narrowed(opt.scope, wiring::desired_state(*rev.docs, w.sink->capabilities()));
  auto fail = [&](const Error& e) {
    r.outcome = Outcome::failed;
    r.error = e;
    // Nothing was observed: every desired object's state is unknown, and says why.
    r.applied.objects = reconcile::object_statuses(desired, nullptr, {}, e.message);
    return finish();
  };
  if (opt.cancel && opt.cancel->load())
    return fail(Error{ErrorCode::unavailable, "cancelled before the pass started"});

  const auto declared = narrowed(opt.scope, rev.docs->registrations);
  const bool registrations = w.entities && w.packages;

  // Observe.
  auto live = w.sink->observe();
  if (!live) return fail(live.error().wrap(w.target));
  r.observed = true;
  auto managed = w.ledger->managed();
  if (!managed) return fail(managed.error().wrap("ledger"));
  narrow(opt.scope, *live, *managed);

  // Plan: projects and overrides, then registrations (plan mode: the registration plan; execute
  // mode: counted from the ledger, the registrations are planned again as they execute).
  r.plan = reconcile::plan(desired, *live, *managed, opt.policy);
  *live = reconcile::State{};  // the plan holds what it needs; a cold pass's observation is large
  CircuitBreaker breaker;      // one per pass: a target that stops answering stops all of it
  std::optional<registration::RegistrationPlan> reg_plan;
  if (registrations) {
    // Plan mode reads changed packages whole (every package error is reported); execute mode
    // reads a summary, and the package again, pinned to the same digest, as it executes.
    auto planned = registration::plan_registrations(
        declared, *w.entities, *w.packages, *w.ledger,
        registrar_options(rev, opt, /*dry_run=*/opt.mode == Mode::plan, &breaker));
    if (!planned) return fail(planned.error().wrap("registration plan"));
    reg_plan = std::move(*planned);
    r.registrations = registration::report_of(*reg_plan);
  }

  // Guard: one verdict over every destructive step of the revision, before any of it runs.
  // Without a registration sink the guard counts from the ledger's records; with one, the
  // registration plan carries them (no second copy of every record).
  std::map<std::string, ledger::RegistrationRecord> records;
  if (!reg_plan) {
    auto read = w.ledger->registrations();
    if (!read) return fail(read.error().wrap("ledger"));
    records = std::move(*read);
    narrow(opt.scope, records);
  }
  r.guard_input = guard_input(r.plan, desired, r.documents, *managed, records, declared,
                              reg_plan ? &*reg_plan : nullptr, opt.policy.prune);
  r.guard = reconcile::guard_pass(r.guard_input, opt.policy);
  if (r.guard.refused) {
    r.plan.refused = true;
    r.plan.refusal = r.guard.reason;
    r.outcome = Outcome::refused;
    r.error = Error{ErrorCode::conflict, r.guard.reason};
    if (opt.mode == Mode::execute)  // the history shows the refusal (no steps)
      (void)w.ledger->record_pass(history_record(r, rev, opt.trigger), opt.retention);
    return finish();
  }
  if (opt.mode == Mode::plan) {
    if (opt.on_registration)
      for (const auto& o : r.registrations.items) opt.on_registration(o);
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

  // Execute: projects and overrides (phase by phase, re-observed until converged), then
  // registrations (projects exist, TASK_RESOURCE limits are in place before a task is created).
  reconcile::ApplyOptions ao;
  ao.revision = rev.id;
  ao.policy = opt.policy;
  ao.parallelism = opt.parallelism;
  ao.max_rounds = opt.max_rounds;
  ao.cancel = opt.cancel;
  ao.breaker = &breaker;
  ao.first_plan = &r.plan;
  ao.narrow = [&](reconcile::State& l, reconcile::Managed& m) { narrow(opt.scope, l, m); };
  r.applied = reconcile::apply(*w.sink, *w.ledger, desired, ao, opt.on_step);
  if (reg_plan && !(opt.cancel && opt.cancel->load()))
    r.registrations = registration::execute_registrations(
        *reg_plan, *w.entities, *w.packages, *w.ledger,
        registrar_options(rev, opt, /*dry_run=*/false, &breaker), opt.on_registration);
  if (!r.applied.ok()) {
    r.outcome = Outcome::failed;
    r.error = Error{r.applied.error.empty() ? ErrorCode::internal : r.applied.error_code,
                    r.applied.error.empty() ? "did not converge" : r.applied.error};
  } else if (!r.registrations.ok()) {
    r.outcome = Outcome::failed;
    if (r.registrations.target_down) {
      r.error = *r.registrations.target_down;
    } else {
      for (const auto& o : r.registrations.items)
        if (!o.ok()) {
          r.error = Error{o.state == "conflict" ? ErrorCode::conflict : ErrorCode::internal,
                          std::to_string(r.registrations.failed()) +
                              " registration(s) failed: " + o.key + ": " + o.message};
          break;
        }
    }
  }
  // Record: a pass that did something, or failed, is history; one with nothing to do is counted.
  if (worth_recording(r))
    (void)w.ledger->record_pass(history_record(r, rev, opt.trigger), opt.retention);
  else
    (void)w.ledger->count_noop();
  return finish();
}

}  // namespace flytecd::pass
