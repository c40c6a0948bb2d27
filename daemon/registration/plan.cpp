#include "daemon/registration/plan.hpp"

#include <algorithm>
#include <tuple>

#include "daemon/common/digest.hpp"

namespace flytecd::registration {

std::string registration_key(const model::Registration& r) {
  return "registration/" + r.project + "/" + r.domain + "/" + r.name;
}

std::string registration_fingerprint(const model::Registration& r, const std::string& digest) {
  std::string s;
  for (const std::string& part :
       {digest, r.project, r.domain, r.version, r.service_account, r.iam_role, r.raw_output_prefix,
        r.destination_dir, std::string(model::to_string(r.activate))})
    s += std::to_string(part.size()) + ":" + part + ";";
  // The "sha256:" form the ledger has always stored: existing records stay in sync.
  return "sha256:" + digest::sha256_hex(s);
}

std::string_view to_string(ItemState s) {
  switch (s) {
    case ItemState::in_sync:
      return "in-sync";
    case ItemState::register_:
      return "register";
    case ItemState::activate:
      return "activate";
    case ItemState::remove:
      return "remove";
    case ItemState::orphaned:
      return "orphaned";
    case ItemState::failed:
      return "failed";
  }
  return "unknown";
}

std::string_view to_string(StepKind k) {
  switch (k) {
    case StepKind::fetch_package:
      return "fetch package";
    case StepKind::upload_fast_source:
      return "upload fast source";
    case StepKind::create_tasks:
      return "create tasks";
    case StepKind::create_workflows:
      return "create workflows";
    case StepKind::create_launch_plans:
      return "create launch plans";
    case StepKind::activate:
      return "activate";
    case StepKind::deactivate:
      return "deactivate";
  }
  return "unknown";
}

size_t PlanItem::count(StepKind k) const {
  return static_cast<size_t>(
      std::count_if(steps.begin(), steps.end(), [k](const auto& s) { return s.kind == k; }));
}

size_t PlanItem::deactivations() const { return count(StepKind::deactivate); }

std::vector<std::string> PlanItem::names(StepKind k) const {
  std::vector<std::string> out;
  for (const auto& s : steps)
    if (s.kind == k) out.push_back(s.launch_plan);
  return out;
}

namespace {

size_t count_deactivations(const std::vector<PlanItem>& items, int removal) {
  size_t n = 0;
  for (const auto& i : items)
    for (const auto& s : i.steps)
      n += s.kind == StepKind::deactivate && (removal < 0 || s.removal == (removal == 1));
  return n;
}

RegistrationStep lp_step(StepKind kind, const std::string& name, const std::string& version,
                         std::string reason) {
  RegistrationStep s;
  s.kind = kind;
  s.launch_plan = name;
  s.version = version;
  s.reason = std::move(reason);
  return s;
}

RegistrationStep create_step(StepKind kind, size_t count, std::string reason) {
  RegistrationStep s;
  s.kind = kind;
  s.count = count;
  s.reason = std::move(reason);
  return s;
}

// Why the package is registered again (the first difference that decides it).
std::string register_reason(const model::Registration& r, const ledger::RegistrationRecord* prev,
                            const PackageFacts& pkg, const std::vector<std::string>& missing) {
  if (!missing.empty()) return missing_reason(missing, r.version);
  if (!prev) return "new registration";
  if (prev->version != r.version)
    return "new version " + r.version + " (was " + prev->version + ")";
  if (prev->digest != pkg.digest)
    return "package content changed: " + pkg.digest + " (was " + prev->digest + ")";
  return "registration settings changed (activate mode or hydration settings)";
}

// Activation steps: wanted launch plans not ACTIVE at the version, then launch plans this
// registration activated before that it no longer wants (if still ACTIVE at the old version).
void plan_activation(const model::Registration& r, const ledger::RegistrationRecord* prev,
                     bool registered_before, const std::map<std::string, std::string>& live,
                     const PlanPolicy& policy, PlanItem& it) {
  const std::set<std::string> wanted(it.wanted.begin(), it.wanted.end());
  const std::set<std::string> managed_before =
      prev ? std::set<std::string>(prev->activated.begin(), prev->activated.end())
           : std::set<std::string>{};
  for (const auto& name : it.wanted) {
    auto found = live.find(name);
    if (found != live.end() && found->second == r.version) {
      it.active.push_back(name);
      continue;
    }
    const bool drift = registered_before && managed_before.count(name);
    if (drift)
      it.drift.push_back("launch plan " + name + ": " +
                         (found == live.end() ? std::string("no version is ACTIVE")
                                              : "version " + found->second + " is ACTIVE") +
                         ", Git says " + r.version);
    if (drift && !policy.self_heal) continue;
    std::string reason =
        drift ? (found == live.end()
                     ? "launch plan " + name + " was deactivated outside Git"
                     : "launch plan " + name + " was set to " + found->second + " outside Git")
        : prev && prev->version != r.version && managed_before.count(name)
            ? "new version " + r.version + " (was " + prev->version + ")"
            : "activate: " + std::string(model::to_string(r.activate)) + " wants it ACTIVE";
    it.steps.push_back(lp_step(StepKind::activate, name, r.version, std::move(reason)));
  }
  if (!prev) return;
  const std::set<std::string> in_package(it.launch_plans.begin(), it.launch_plans.end());
  for (const auto& name : prev->activated) {
    if (wanted.count(name)) continue;
    auto found = live.find(name);
    if (found == live.end() || found->second != prev->version) continue;  // someone else's now
    std::string reason =
        !in_package.count(name)
            ? "not in the package at " + r.version + " (was in " + prev->version + ")"
            : "no longer wanted by activate: " + std::string(model::to_string(r.activate));
    it.steps.push_back(lp_step(StepKind::deactivate, name, prev->version, std::move(reason)));
  }
}

}  // namespace

namespace {

// `previous` is moved into the item (compute_plan hands over the observation's records, so a
// plan of many registrations does not hold every record twice).
PlanItem plan_item(const model::Registration& r, std::optional<ledger::RegistrationRecord> previous,
                   const Result<PackageFacts>& package, const LiveLaunchPlans* live,
                   const PlanPolicy& policy, const std::vector<std::string>& missing) {
  PlanItem it;
  it.key = registration_key(r);
  it.registration = r;
  it.previous = std::move(previous);
  const ledger::RegistrationRecord* prev = it.previous ? &*it.previous : nullptr;
  auto fail = [&](const Error& e) {
    it.state = ItemState::failed;
    it.steps.clear();
    it.message = e.message;
    it.error = e;
    return it;
  };
  if (!package) return fail(package.error());
  it.package = *package;
  it.fingerprint = registration_fingerprint(r, package->digest);
  if (!live)
    return fail(Error{ErrorCode::internal, "active launch plans of " + r.project + "/" + r.domain +
                                               " were not observed"});
  if (!*live) return fail(live->error().wrap("reading active launch plans"));
  const bool registered_before = missing.empty() && prev && prev->fingerprint == it.fingerprint;
  if (registered_before) {
    it.launch_plans = prev->launch_plans;
    it.wanted = prev->activated;
  } else {
    if (!package->read)
      return fail(Error{ErrorCode::internal, "package " + package->reference +
                                                 " must be read to plan its registration"});
    for (const auto& lp : package->plans) {
      it.launch_plans.push_back(lp.name);
      if (r.activate == model::Activate::all ||
          (r.activate == model::Activate::scheduled && lp.scheduled))
        it.wanted.push_back(lp.name);
    }
    const std::string why = register_reason(r, prev, *package, missing);
    it.steps.push_back(create_step(StepKind::fetch_package, 0, why));
    if (!package->fast_source.empty())
      it.steps.push_back(create_step(StepKind::upload_fast_source, 0,
                                     "the package carries " + package->fast_source));
    const std::string at = " at " + r.version + ": " + why;
    if (package->tasks)
      it.steps.push_back(create_step(StepKind::create_tasks, package->tasks,
                                     std::to_string(package->tasks) + " tasks" + at));
    if (package->workflows)
      it.steps.push_back(create_step(StepKind::create_workflows, package->workflows,
                                     std::to_string(package->workflows) + " workflows" + at));
    if (package->launch_plans)
      it.steps.push_back(create_step(StepKind::create_launch_plans, package->launch_plans,
                                     std::to_string(package->launch_plans) + " launch plans" + at));
  }
  plan_activation(r, prev, registered_before, live->value(), policy, it);
  it.state = !registered_before ? ItemState::register_
             : it.steps.empty() ? ItemState::in_sync
                                : ItemState::activate;
  return it;
}

}  // namespace

std::string missing_reason(const std::vector<std::string>& missing, const std::string& version) {
  if (missing.empty()) return "";
  return "missing in FlyteAdmin: launch plan " + missing.front() +
         (missing.size() > 1 ? " (and " + std::to_string(missing.size() - 1) + " more)" : "") +
         " not registered at " + version;
}

PlanItem plan_registration(const model::Registration& r, const ledger::RegistrationRecord* prev,
                           const Result<PackageFacts>& package, const LiveLaunchPlans* live,
                           const PlanPolicy& policy, const std::vector<std::string>& missing) {
  return plan_item(r, prev ? std::optional<ledger::RegistrationRecord>(*prev) : std::nullopt,
                   package, live, policy, missing);
}

PlanItem plan_removal(const ledger::RegistrationRecord& rec, const LiveLaunchPlans* live,
                      const PlanPolicy& policy, const std::set<std::string>& claimed) {
  PlanItem it;
  it.key = rec.key;
  it.previous = rec;
  it.package.reference = rec.package;
  it.package.digest = rec.digest;
  it.fingerprint = rec.fingerprint;
  it.launch_plans = rec.launch_plans;
  if (!policy.prune) {
    it.state = ItemState::orphaned;
    it.message = "removed from Git; prune is off, so its launch plans stay as they are";
    return it;
  }
  auto fail = [&](const Error& e) {
    it.state = ItemState::failed;
    it.message = e.message;
    it.error = e;
    return it;
  };
  if (!live)
    return fail(Error{ErrorCode::internal, "active launch plans of " + rec.project + "/" +
                                               rec.domain + " were not observed"});
  if (!*live) return fail(live->error());
  it.state = ItemState::remove;
  for (const auto& name : rec.activated) {
    auto found = live->value().find(name);
    if (found == live->value().end() || found->second != rec.version) continue;
    if (claimed.count(rec.project + "/" + rec.domain + "/" + name)) continue;  // another's now
    auto step = lp_step(StepKind::deactivate, name, rec.version, "removed from Git");
    step.removal = true;
    it.steps.push_back(std::move(step));
  }
  return it;
}

RegistrationPlan compute_plan(const std::vector<model::Registration>& desired, Observation observed,
                              const PlanPolicy& policy) {
  RegistrationPlan plan;
  std::vector<const model::Registration*> order;
  for (const auto& r : desired) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return registration_key(*a) < registration_key(*b);
  });
  const Result<PackageFacts> unobserved =
      Error{ErrorCode::internal, "the package was not observed"};
  std::set<std::string> claimed;
  for (const auto* r : order) {
    const std::string key = registration_key(*r);
    std::optional<ledger::RegistrationRecord> prev;
    if (auto rec = observed.records.find(key); rec != observed.records.end()) {
      prev = std::move(rec->second);
      observed.records.erase(rec);
    }
    auto pkg = observed.packages.find(key);
    auto live = observed.live.find({r->project, r->domain});
    static const std::vector<std::string> k_none;
    const std::vector<std::string>* missing = &k_none;
    std::optional<Result<PackageFacts>> unverified;
    if (auto m = observed.missing.find(key); m != observed.missing.end()) {
      if (m->second)
        missing = &*m->second;
      else
        unverified.emplace(
            m->second.error().wrap("checking that FlyteAdmin holds " + key + " at " + r->version));
    }
    plan.items.push_back(plan_item(*r, std::move(prev),
                                   unverified                       ? *unverified
                                   : pkg == observed.packages.end() ? unobserved
                                                                    : pkg->second,
                                   live == observed.live.end() ? nullptr : &live->second, policy,
                                   *missing));
  }
  // Two registrations that both want a launch plan of one name ACTIVE would take its activation
  // from each other on every pass: neither is carried out.
  std::vector<std::pair<const model::Registration*, std::vector<std::string>>> held;
  for (const auto& it : plan.items)
    if (it.state != ItemState::failed) held.emplace_back(&*it.registration, it.wanted);
  for (const auto& clash : launch_plan_clashes(held))
    for (auto& it : plan.items)
      if (it.state != ItemState::failed &&
          (it.key == registration_key(*clash.first) || it.key == registration_key(*clash.second))) {
        it.state = ItemState::failed;
        it.steps.clear();
        it.message = describe(clash);
        it.error = Error{ErrorCode::invalid_input, it.message};
      }
  for (const auto& it : plan.items) {
    // A registration that could not be planned still holds on to what it activated before.
    const auto& names =
        it.state == ItemState::failed && it.previous ? it.previous->activated : it.wanted;
    for (const auto& name : names)
      claimed.insert(it.registration->project + "/" + it.registration->domain + "/" + name);
  }
  for (const auto& [key, rec] : observed.records) {  // what is left is gone from Git
    auto live = observed.live.find({rec.project, rec.domain});
    plan.items.push_back(
        plan_removal(rec, live == observed.live.end() ? nullptr : &live->second, policy, claimed));
  }
  plan.live = std::move(observed.live);
  return plan;
}

std::vector<LaunchPlanClash> launch_plan_clashes(
    const std::vector<std::pair<const model::Registration*, std::vector<std::string>>>& regs) {
  // (project, domain, launch plan) -> the first registration holding it; then one clash per pair
  // of registrations, with every name they share.
  std::map<std::tuple<std::string, std::string, std::string>, const model::Registration*> first;
  std::map<std::pair<const model::Registration*, const model::Registration*>, size_t> pair_at;
  std::vector<LaunchPlanClash> out;
  for (const auto& [r, names] : regs) {
    const std::set<std::string> own(names.begin(), names.end());
    for (const auto& name : own) {
      auto [at, fresh] = first.try_emplace({r->project, r->domain, name}, r);
      if (fresh || at->second == r) continue;
      auto [slot, added] = pair_at.try_emplace({at->second, r}, out.size());
      if (added) out.push_back({r->project, r->domain, {}, at->second, r});
      out[slot->second].launch_plans.push_back(name);
    }
  }
  return out;
}

std::string describe(const LaunchPlanClash& c) {
  const auto& names = c.launch_plans;
  std::string what = names.size() == 1 ? "launch plan " + names.front() + " is"
                                       : std::to_string(names.size()) + " launch plans (";
  if (names.size() > 1) {
    for (size_t i = 0; i < names.size() && i < 3; ++i) what += (i ? ", " : "") + names[i];
    what += names.size() > 3 ? ", …) are" : ") are";
  }
  return what + " kept ACTIVE by two registrations of " + c.project + "/" + c.domain + ": " +
         c.first->name + " (" + model::to_string(c.first->where) + ") and " + c.second->name +
         " (" + model::to_string(c.second->where) +
         "); each would take the activation from the other on every pass (rename the launch "
         "plans, or register them in different domains)";
}

size_t RegistrationPlan::deactivations() const { return count_deactivations(items, -1); }
size_t RegistrationPlan::deactivations_on_removal() const { return count_deactivations(items, 1); }
size_t RegistrationPlan::deactivations_on_change() const { return count_deactivations(items, 0); }

size_t RegistrationPlan::failed() const {
  return static_cast<size_t>(std::count_if(
      items.begin(), items.end(), [](const auto& i) { return i.state == ItemState::failed; }));
}

bool RegistrationPlan::has_changes() const {
  return std::any_of(items.begin(), items.end(),
                     [](const auto& i) { return i.state != ItemState::in_sync; });
}

}  // namespace flytecd::registration
