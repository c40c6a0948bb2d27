// The pure functions of pass.hpp that the pass and its callers share: the guard's counts of a
// plan (and their bound before packages are read), the desired state a sink holds, and the
// history entry of an executed pass.
#include "daemon/pass/pass.hpp"

#include <algorithm>
#include <set>

#include "daemon/common/json_dump.hpp"
#include "daemon/reconcile/render.hpp"
#include "daemon/reconcile/state.hpp"

namespace flytecd::pass {

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

reconcile::GuardInput guard_bound(const reconcile::Plan& plan, const reconcile::State& desired,
                                  size_t documents, const reconcile::Managed& managed,
                                  const std::map<std::string, ledger::RegistrationRecord>& records,
                                  const std::vector<model::Registration>& declared, bool prune) {
  auto in = guard_input(plan, desired, documents, managed, records, declared, nullptr, prune);
  // What a declared registration's plan can deactivate on a change is a subset of what its
  // record activated (removals are counted above from the ledger).
  size_t on_change = 0;
  for (const auto& r : declared)
    if (auto rec = records.find(registration::registration_key(r)); rec != records.end())
      on_change += rec->second.activated.size();
  for (auto& k : in.kinds)
    if (k.name == "launch plans") k.destroyed = std::min(k.managed, k.destroyed + on_change);
  return in;
}

reconcile::State desired_state(const model::Documents& docs, const sinks::Capabilities& held) {
  reconcile::State st = reconcile::desired_state(docs);
  if (held.platform_defaults)
    for (const auto& p : docs.platform_defaults) {
      model::Scope scope{"", p.domain, ""};
      st.overrides[reconcile::override_key(scope, p.type)] =
          reconcile::OverrideState{scope, p.type, p.value.get()};
    }
  return sinks::held_part(std::move(st), held);
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
      h.changes = dump_json(j);
    }
    rec.steps.push_back(std::move(h));
  }
  for (const auto& o : r.registrations.items) {
    if (o.state == registration::RegistrationState::in_sync) continue;
    ledger::HistoryStep h;
    h.action = std::string(registration::to_string(o.state));
    h.key = o.key;
    h.outcome = o.ok() ? "ok" : "failed";
    h.message = registration::describe(o);
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    auto change = [&](const char* path, const std::string& before, const std::string& after) {
      if (before == after) return;
      reconcile::FieldChange c;
      c.path = path;
      if (!before.empty()) c.before = dump_json(nlohmann::json(before));
      if (!after.empty()) c.after = dump_json(nlohmann::json(after));
      j.push_back(reconcile::change_json(c));
    };
    if (!o.previous_version.empty() || !o.previous_digest.empty()) {
      change("version", o.previous_version, o.version);
      change("digest", o.previous_digest, o.digest);
    }
    if (!j.empty()) h.changes = dump_json(j);
    rec.steps.push_back(std::move(h));
  }
  return rec;
}

}  // namespace flytecd::pass
