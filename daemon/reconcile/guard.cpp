#include "daemon/reconcile/guard.hpp"

#include <cmath>
#include <map>
#include <set>

namespace flytecd::reconcile {

namespace {
std::string percent(double share) {
  return std::to_string(static_cast<int>(std::lround(share * 100))) + "%";
}

bool is_object_key(const std::string& key) {
  return key.rfind("project/", 0) != 0 && key.rfind("override/", 0) != 0;
}

// One kind per generic object kind (its key's first segment: "settings"), managed and declared
// counted from the ledger and the desired state; `destroyed` says whether a managed key goes.
template <class Destroyed>
void add_object_kinds(std::vector<GuardKind>& kinds, const State& desired, const Managed& managed,
                      Destroyed destroyed) {
  std::map<std::string, GuardKind> by_kind;
  auto of = [&](const std::string& key) -> GuardKind& {
    const std::string kind = sinks::object_kind_of(key);
    auto [it, fresh] = by_kind.try_emplace(kind, GuardKind{kind, 0, 0, 0});
    return it->second;
  };
  for (const auto& [key, o] : desired.objects) ++of(key).desired;
  for (const auto& [key, rec] : managed) {
    if (!is_object_key(key)) continue;
    GuardKind& k = of(key);
    ++k.managed;
    if (destroyed(key)) ++k.destroyed;
  }
  for (auto& [name, k] : by_kind) kinds.push_back(std::move(k));
}
}  // namespace

GuardVerdict guard_pass(const GuardInput& in, const Policy& policy) {
  GuardVerdict v;
  auto refuse = [&](std::string why) {
    v.refused = true;
    v.reason = std::move(why);
    return v;
  };
  if (!policy.allow_empty) {
    if (in.documents == 0)
      return refuse(
          "refusing a revision with zero documents (an empty or mis-pointed repository path "
          "would remove everything flytecd manages); if this is intended, allow empty revisions "
          "explicitly (--allow-empty / policy.allowEmpty)");
    for (const auto& k : in.kinds)
      if (k.managed > 0 && k.desired == 0)
        return refuse("refusing a revision that declares no " + k.name + " while flytecd manages " +
                      std::to_string(k.managed) +
                      "; if this is intended, allow empty revisions explicitly (--allow-empty / "
                      "policy.allowEmpty)");
  }
  if (policy.allow_mass_prune) return v;
  size_t managed = 0, destroyed = 0;
  for (const auto& k : in.kinds) {
    managed += k.managed;
    destroyed += k.destroyed;
    if (k.destroyed == 0) continue;
    const double share = static_cast<double>(k.destroyed) / static_cast<double>(k.managed);
    if (k.destroyed >= k.managed || share > policy.max_prune_share)
      return refuse("refusing to remove " + std::to_string(k.destroyed) + " of " +
                    std::to_string(k.managed) + " managed " + k.name + " (more than " +
                    percent(policy.max_prune_share) +
                    " or all of them); if this is intended, allow mass pruning explicitly "
                    "(--allow-mass-prune / policy.allowMassPrune)");
  }
  if (destroyed > 0 &&
      static_cast<double>(destroyed) / static_cast<double>(managed) > policy.max_prune_share)
    return refuse("refusing to remove " + std::to_string(destroyed) + " of " +
                  std::to_string(managed) + " managed objects (more than " +
                  percent(policy.max_prune_share) +
                  "); if this is intended, allow mass pruning explicitly (--allow-mass-prune / "
                  "policy.allowMassPrune)");
  return v;
}

GuardInput guard_input(const State& desired, const std::set<std::string>& desired_registrations,
                       size_t documents, const Managed& managed,
                       const std::set<std::string>& managed_registrations, bool prune) {
  GuardInput in;
  in.documents = documents;
  GuardKind projects{"projects", 0, desired.projects.size(), 0};
  GuardKind overrides{"overrides", 0, desired.overrides.size(), 0};
  GuardKind registrations{"registrations", managed_registrations.size(),
                          desired_registrations.size(), 0};
  for (const auto& [key, rec] : managed) {
    if (key.rfind("project/", 0) == 0) {
      ++projects.managed;
      if (prune && !desired.projects.count(key.substr(8))) ++projects.destroyed;
    } else if (key.rfind("override/", 0) == 0) {
      ++overrides.managed;
      if (prune && !desired.overrides.count(key)) ++overrides.destroyed;
    }
  }
  if (prune)
    for (const auto& key : managed_registrations)
      if (!desired_registrations.count(key)) ++registrations.destroyed;
  in.kinds = {projects, overrides, registrations};
  add_object_kinds(in.kinds, desired, managed,
                   [&](const std::string& key) { return prune && !desired.objects.count(key); });
  return in;
}

GuardInput guard_input(const Plan& plan, const State& desired, size_t documents,
                       const Managed& managed, const RegistrationCounts& registrations) {
  GuardInput in;
  in.documents = documents;
  GuardKind projects{"projects", 0, desired.projects.size(), 0};
  GuardKind overrides{"overrides", 0, desired.overrides.size(), 0};
  for (const auto& [key, rec] : managed)
    if (!is_object_key(key)) ++(key.rfind("project/", 0) == 0 ? projects : overrides).managed;
  std::set<std::string> removed_objects;
  for (const auto& s : plan.steps)
    if (s.action == Action::remove && s.kind == ObjectKind::object)
      removed_objects.insert(s.key);
    else if (s.action == Action::remove)
      ++(s.kind == ObjectKind::project ? projects : overrides).destroyed;
  GuardKind regs{"registrations", registrations.managed, registrations.declared,
                 registrations.removed};
  // Launch plans have no "declared" count of their own: a revision declaring registrations
  // declares their launch plans.
  GuardKind lps{"launch plans", registrations.launch_plans_managed,
                registrations.declared > 0 ? registrations.launch_plans_managed : 0,
                registrations.launch_plans_deactivated};
  in.kinds = {projects, overrides, regs, lps};
  add_object_kinds(in.kinds, desired, managed,
                   [&](const std::string& key) { return removed_objects.count(key) > 0; });
  return in;
}

}  // namespace flytecd::reconcile
