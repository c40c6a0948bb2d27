#include "daemon/pass/hold.hpp"

#include <algorithm>
#include <iterator>

namespace flytecd::pass {
namespace {

template <typename Map, typename Pred>
void erase_where(Map& m, Pred drop) {
  for (auto it = m.begin(); it != m.end();) it = drop(*it) ? m.erase(it) : std::next(it);
}

}  // namespace

std::string_view key_project(std::string_view key) {
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view kind = key.substr(0, slash);
  if (kind != "project" && kind != "override" && kind != "registration") return {};
  key.remove_prefix(slash + 1);
  return key.substr(0, key.find('/'));
}

bool is_held(const HeldProjects& held, std::string_view key) {
  if (held.empty()) return false;
  const auto project = key_project(key);
  return !project.empty() && held.count(std::string(project)) > 0;
}

reconcile::Plan without_held(const reconcile::Plan& plan, const HeldProjects& held) {
  reconcile::Plan out = plan;
  std::erase_if(out.steps, [&](const reconcile::Step& s) { return is_held(held, s.key); });
  return out;
}

void keep_drift_of_held(reconcile::Plan& plan, const HeldProjects& held) {
  for (auto& d : plan.drift)
    if (is_held(held, d.key)) d.healed = false;
}

reconcile::State without_held(reconcile::State state, const HeldProjects& held) {
  if (held.empty()) return state;
  erase_where(state.projects, [&](const auto& kv) { return held.count(kv.first) > 0; });
  erase_where(state.overrides,
              [&](const auto& kv) { return held.count(kv.second.scope.project) > 0; });
  return state;
}

reconcile::State only_held(const reconcile::State& state, const HeldProjects& held) {
  reconcile::State out;
  for (const auto& [id, p] : state.projects)
    if (held.count(id)) out.projects.emplace(id, p);
  for (const auto& [k, o] : state.overrides)
    if (held.count(o.scope.project)) out.overrides.emplace(k, o);
  return out;
}

void drop_held(const HeldProjects& held, reconcile::State& live, reconcile::Managed& managed) {
  if (held.empty()) return;
  live = without_held(std::move(live), held);
  erase_where(managed, [&](const auto& kv) { return is_held(held, kv.first); });
}

registration::RegistrationPlan split_held(registration::RegistrationPlan& plan,
                                          const HeldProjects& held) {
  registration::RegistrationPlan out;
  out.live = plan.live;
  out.target_down = plan.target_down;
  if (held.empty()) return out;
  std::vector<registration::PlanItem> kept;
  for (auto& item : plan.items)
    (is_held(held, item.key) ? out.items : kept).push_back(std::move(item));
  plan.items = std::move(kept);
  return out;
}

std::vector<ObjectStatus> held_statuses(const reconcile::State& desired_held,
                                        const reconcile::Plan& plan) {
  auto out = object_statuses(desired_held, &plan, {}, "");
  for (auto& o : out) {
    const std::string project(key_project(o.key));
    if (o.state == ObjectState::pending) {
      auto step = std::find_if(plan.steps.begin(), plan.steps.end(),
                               [&](const reconcile::Step& s) { return s.key == o.key; });
      o.detail = "project " + project + " suspended: " +
                 (step == plan.steps.end() ? std::string("a step")
                                           : std::string(reconcile::to_string(step->action))) +
                 " planned, not written";
    } else if (o.state == ObjectState::drifted) {
      o.detail += " (project " + project + " suspended: left in place)";
    }
  }
  return out;
}

std::string describe(const HeldProjects& held) {
  std::string out;
  for (const auto& p : held) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace flytecd::pass
