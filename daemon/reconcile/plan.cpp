#include "daemon/reconcile/plan.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <set>

#include <google/protobuf/message.h>

#include "daemon/model/proto_yaml.hpp"

namespace flytecd::reconcile {
namespace admin = flyteidl::admin;

size_t Plan::count(Action a, ObjectKind k) const {
  return static_cast<size_t>(std::count_if(
      steps.begin(), steps.end(), [&](const Step& s) { return s.action == a && s.kind == k; }));
}

namespace {

bool same(const OverrideState& a, const OverrideState& b) {
  return model::canonical_bytes(a.value) == model::canonical_bytes(b.value);
}

// PLUGIN_OVERRIDE rows merge on Update: an entry for a task type Git no longer lists survives.
bool plugin_needs_replace(const OverrideState& desired, const OverrideState& live) {
  if (desired.type != admin::PLUGIN_OVERRIDE) return false;
  std::set<std::string> want;
  for (const auto& o : desired.value.plugin_overrides().overrides()) want.insert(o.task_type());
  for (const auto& o : live.value.plugin_overrides().overrides())
    if (!want.count(o.task_type())) return true;
  return false;
}

int level_rank(const model::Scope& s) {
  return s.level() == model::Level::project ? 0 : s.level() == model::Level::project_domain ? 1 : 2;
}

// FlyteAdmin's Delete at `scope` removes rows of `type` at that scope and every narrower one.
void cascade_delete(std::map<std::string, OverrideState>& sim, const model::Scope& scope,
                    model::AttributeType type) {
  for (auto it = sim.begin(); it != sim.end();) {
    const auto& s = it->second.scope;
    bool covered = it->second.type == type && s.project == scope.project &&
                   (scope.domain.empty() || s.domain == scope.domain) &&
                   (scope.workflow.empty() || s.workflow == scope.workflow);
    it = covered ? sim.erase(it) : std::next(it);
  }
}

// FlyteAdmin merges a project-domain PLUGIN_OVERRIDE update into the row GetRaw finds, a GORM
// struct query that ignores the empty workflow: the oldest PLUGIN_OVERRIDE row of the (project,
// domain), which can be a workflow row (the update then lands there and the project-domain row is
// not written). Row age cannot be observed, so while workflow rows exist the write must go
// through a project-domain Delete (which removes them too) and they are re-created after it.
// Returns the workflow rows in `sim` that such a write could be merged into.
std::vector<std::string> merge_targets(const std::map<std::string, OverrideState>& sim,
                                       const OverrideState& pd) {
  std::vector<std::string> out;
  if (pd.type != admin::PLUGIN_OVERRIDE || pd.scope.level() != model::Level::project_domain)
    return out;
  for (const auto& [k, o] : sim) {
    if (o.type == pd.type && o.scope.level() == model::Level::workflow &&
        o.scope.project == pd.scope.project && o.scope.domain == pd.scope.domain)
      out.push_back(k);
  }
  return out;
}

std::string describe(const ProjectState& p) { return p.id; }

// The field changes toward a desired override, each with where Git declares its value.
std::vector<FieldChange> located(std::vector<FieldChange> changes, const OverrideState& want) {
  if (want.source) locate(changes, want.source->file, want.source->line, want.source->fields);
  return changes;
}

// A project's fields as FlyteAdmin's JSON names them (for field-level diffs).
nlohmann::json project_json(const ProjectState& p) {
  nlohmann::json j{{"name", p.name}, {"state", p.archived ? "ARCHIVED" : "ACTIVE"}};
  if (!p.description.empty()) j["description"] = p.description;
  if (!p.labels.empty()) j["labels"] = {{"values", p.labels}};
  return j;
}

void plan_projects(const State& desired, const State& live, const Managed& managed,
                   const Policy& policy, Plan& out, std::vector<Step>& archives) {
  std::set<std::string> ids;
  for (const auto& [id, p] : desired.projects) ids.insert(id);
  for (const auto& [id, p] : live.projects) ids.insert(id);
  for (const auto& id : ids) {
    const std::string key = project_key(id);
    auto d = desired.projects.find(id);
    auto l = live.projects.find(id);
    auto m = managed.find(key);
    if (m != managed.end()) ++out.managed_count;
    if (d == desired.projects.end()) {
      if (m == managed.end()) {
        // An archived project is not something left standing: flytecd archived it (and forgot
        // it) or someone else did; either way it is not listed as unmanaged on every pass.
        if (!l->second.archived) out.unmanaged.push_back(key);
      } else if (!l->second.archived) {
        if (policy.prune) {
          archives.push_back(Step{Action::remove,
                                  ObjectKind::project,
                                  key,
                                  l->second,
                                  {},
                                  {},
                                  "removed from Git: archive "
                                  "(FlyteAdmin cannot delete projects)",
                                  false});
        } else {
          out.orphaned.push_back(key);
        }
      }
      continue;
    }
    const ProjectState& want = d->second;
    if (l == live.projects.end()) {
      out.steps.push_back(
          Step{Action::create, ObjectKind::project, key, want, {}, {}, "new in Git", false});
      continue;
    }
    const ProjectState& have = l->second;
    const std::string want_hash = hash_of(want);
    if (have == want) {
      if (m == managed.end() || m->second.hash != want_hash)
        out.steps.push_back(Step{
            Action::adopt, ObjectKind::project, key, want, {}, {}, "already as in Git", false});
      else
        ++out.in_sync;
      continue;
    }
    bool git_unchanged = m != managed.end() && m->second.hash == want_hash;
    if (git_unchanged) {
      out.drift.push_back(
          DriftItem{ObjectKind::project, key, "project " + describe(have) + " changed outside Git",
                    policy.self_heal, diff_json(project_json(have), project_json(want))});
      if (!policy.self_heal) continue;
    }
    out.steps.push_back(Step{Action::update,
                             ObjectKind::project,
                             key,
                             want,
                             {},
                             {},
                             git_unchanged ? "drift: changed outside Git" : "changed in Git",
                             git_unchanged});
  }
}

}  // namespace

std::vector<FieldChange> step_changes(const Step& s, size_t max_value) {
  // Creates show their whole desired value elsewhere; adopt changes nothing.
  if (s.action == Action::adopt || s.action == Action::create) return {};
  if (s.kind == ObjectKind::object) {
    const bool removes = s.action == Action::remove || !s.object;
    auto changes = diff_messages(s.object_live ? s.object_live->value.get() : nullptr,
                                 removes ? nullptr : s.object->value.get(), max_value);
    if (!removes && s.object->source)
      locate(changes, s.object->source->file, s.object->source->line, s.object->source->fields);
    return changes;
  }
  if (s.kind == ObjectKind::project)  // an update's live fields are in its drift item
    return s.action == Action::remove
               ? std::vector<FieldChange>{FieldChange{"state", "\"ACTIVE\"", "\"ARCHIVED\"", false}}
               : std::vector<FieldChange>{};
  const bool removes = s.action == Action::remove || !s.desired;
  auto changes = diff_messages(s.live ? &s.live->value : nullptr,
                               removes ? nullptr : &s.desired->value, max_value);
  return removes ? changes : located(std::move(changes), *s.desired);
}

namespace {

// Every override key of the desired state, live state and ledger, broad scopes first so that a
// cascading delete is seen by the narrower rows after it.
std::vector<std::string> override_keys(const State& desired, const State& live,
                                       const Managed& managed) {
  std::set<std::string> key_set;
  for (const auto& [k, v] : desired.overrides) key_set.insert(k);
  for (const auto& [k, v] : live.overrides) key_set.insert(k);
  for (const auto& [k, v] : managed)
    if (k.rfind("override/", 0) == 0) key_set.insert(k);
  auto scope_of = [&](const std::string& k) -> const OverrideState* {
    if (auto it = desired.overrides.find(k); it != desired.overrides.end()) return &it->second;
    if (auto it = live.overrides.find(k); it != live.overrides.end()) return &it->second;
    return nullptr;
  };
  // By level, in key order within each (the set's order): one lookup per key, not per comparison.
  std::array<std::vector<std::string>, 4> by_rank;
  for (auto it = key_set.begin(); it != key_set.end();) {
    const auto* scope = scope_of(*it);
    const int rank = scope ? level_rank(scope->scope) : 3;
    by_rank[static_cast<size_t>(rank)].push_back(std::move(key_set.extract(it++).value()));
  }
  std::vector<std::string> keys;
  keys.reserve(by_rank[0].size() + by_rank[1].size() + by_rank[2].size() + by_rank[3].size());
  for (auto& bucket : by_rank)
    for (auto& k : bucket) keys.push_back(std::move(k));
  return keys;
}

// Plans the override rows key by key over `sim`, live as it will be mid-apply.
struct OverridePlanner {
  const State& desired;
  const State& live;
  const Managed& managed;
  const Policy& policy;
  Plan& out;
  std::map<std::string, OverrideState> sim = live.overrides;
  std::deque<Step> removals, writes;  // drained into the plan chunk by chunk

  void plan_key(const std::string& key);

 private:
  using ManagedIt = Managed::const_iterator;
  bool write_via_delete(const OverrideState& want, std::string& reason);
  void plan_not_in_git(const std::string& key, ManagedIt m, bool was_live);
  void plan_not_live(const std::string& key, const OverrideState& want, ManagedIt m, bool was_live);
  void plan_live(const std::string& key, const OverrideState& want, const OverrideState& have,
                 ManagedIt m);
  static Step step(Action action, const std::string& key, std::optional<OverrideState> desired,
                   std::optional<OverrideState> live, std::string reason, bool drift) {
    return Step{action,          ObjectKind::override_attr, key,  {}, std::move(desired),
                std::move(live), std::move(reason),         drift};
  }
};

// A project-domain PLUGIN_OVERRIDE write that FlyteAdmin could merge into a workflow row
// (merge_targets) becomes Delete + Update; the workflow rows it deletes are re-created below.
// Returns true (and extends `reason`) then. Rows Git neither wants nor prunes are never
// deleted: the write stays plain and its reason names the row it may be merged into.
bool OverridePlanner::write_via_delete(const OverrideState& want, std::string& reason) {
  const auto targets = merge_targets(sim, want);
  if (targets.empty()) return false;
  for (const auto& t : targets) {
    // Deleting is fine for a row Git wants (re-created) or prunes; not for any other.
    if (!desired.overrides.count(t) && !(managed.count(t) && policy.prune)) {
      reason += "; FlyteAdmin may merge it into the workflow row " + t +
                ", which flytecd does not delete (not managed, or kept with prune off)";
      return false;
    }
  }
  cascade_delete(sim, want.scope, want.type);
  reason +=
      "; FlyteAdmin could merge it into an older workflow-level row, so delete and "
      "re-create (" +
      std::to_string(targets.size()) + " workflow row" + (targets.size() == 1 ? "" : "s") +
      " re-created after it)";
  return true;
}

void OverridePlanner::plan_key(const std::string& key) {
  auto d = desired.overrides.find(key);
  auto m = managed.find(key);
  auto l = sim.find(key);
  const bool was_live = live.overrides.count(key) > 0;
  if (m != managed.end()) ++out.managed_count;
  if (d == desired.overrides.end())
    plan_not_in_git(key, m, was_live);
  else if (l == sim.end())
    plan_not_live(key, d->second, m, was_live);
  else
    plan_live(key, d->second, l->second, m);
}

// Not in Git: removed if flytecd manages it (and prunes), else listed.
void OverridePlanner::plan_not_in_git(const std::string& key, ManagedIt m, bool was_live) {
  if (m == managed.end()) {
    if (was_live) out.unmanaged.push_back(key);
    return;
  }
  auto l = sim.find(key);
  if (l == sim.end()) {
    // Already gone (deleted by hand, or by a cascade): just forget it.
    removals.push_back(
        step(Action::remove, key, {}, std::nullopt, "removed from Git (already absent)", false));
    return;
  }
  if (!policy.prune) {
    out.orphaned.push_back(key);
    return;
  }
  OverrideState gone = l->second;
  removals.push_back(step(Action::remove, key, {}, gone, "removed from Git", false));
  cascade_delete(sim, gone.scope, gone.type);
}

// In Git, not live (or not any more, after a broader delete): created.
void OverridePlanner::plan_not_live(const std::string& key, const OverrideState& want, ManagedIt m,
                                    bool was_live) {
  const std::string want_hash = hash_of(want);
  std::string reason =
      was_live ? "re-create after a broader delete removed it (FlyteAdmin cascades deletes)"
               : (m != managed.end() && m->second.hash == want_hash ? "drift: deleted outside Git"
                                                                    : "new in Git");
  bool drift = !was_live && m != managed.end() && m->second.hash == want_hash;
  if (drift) {
    out.drift.push_back(DriftItem{ObjectKind::override_attr, key, "deleted outside Git",
                                  policy.self_heal,
                                  located(diff_messages(nullptr, &want.value), want)});
    if (!policy.self_heal) return;
  }
  if (write_via_delete(want, reason)) {
    // Nothing to delete at this scope: the live side is an empty row of the same scope.
    removals.push_back(
        step(Action::replace, key, want, OverrideState{want.scope, want.type, {}}, reason, drift));
    return;
  }
  writes.push_back(step(Action::create, key, want, std::nullopt, reason, drift));
}

// In Git and live: adopted, in sync, or updated (drift when Git did not change).
void OverridePlanner::plan_live(const std::string& key, const OverrideState& want,
                                const OverrideState& have, ManagedIt m) {
  const std::string want_hash = hash_of(want);
  if (same(want, have)) {
    if (m == managed.end() || m->second.hash != want_hash)
      writes.push_back(step(Action::adopt, key, want, have, "already as in Git", false));
    else
      ++out.in_sync;
    return;
  }
  const bool git_unchanged = m != managed.end() && m->second.hash == want_hash;
  if (git_unchanged) {
    out.drift.push_back(DriftItem{ObjectKind::override_attr, key, "changed outside Git",
                                  policy.self_heal,
                                  located(diff_messages(&have.value, &want.value), want)});
    if (!policy.self_heal) return;
  }
  std::string reason = git_unchanged        ? "drift: changed outside Git"
                       : m == managed.end() ? "differs from Git (not yet managed)"
                                            : "changed in Git";
  if (plugin_needs_replace(want, have)) {
    // Delete (cascading) then Update; narrower rows of this type are re-created below.
    removals.push_back(step(Action::replace, key, want, have,
                            reason + "; plugin overrides merge on update, so delete and re-create",
                            git_unchanged));
    cascade_delete(sim, have.scope, have.type);
    return;
  }
  // write_via_delete's cascade erases `have` (a row of `sim`): keep the live value first.
  std::optional<OverrideState> live_value;
  if (want.type == admin::PLUGIN_OVERRIDE) live_value = have;
  if (write_via_delete(want, reason)) {
    removals.push_back(
        step(Action::replace, key, want, std::move(live_value), reason, git_unchanged));
    return;
  }
  writes.push_back(step(Action::update, key, want, have, reason, git_unchanged));
}

bool same(const ObjectValue& a, const ObjectValue& b) {
  return a.kind == b.kind && model::canonical_bytes(*a.value) == model::canonical_bytes(*b.value);
}

std::vector<FieldChange> object_changes(const ObjectValue* have, const ObjectValue& want) {
  auto changes = diff_messages(have ? have->value.get() : nullptr, want.value.get());
  if (want.source) locate(changes, want.source->file, want.source->line, want.source->fields);
  return changes;
}

// Generic objects (sinks::ObjectValue): no cascades and no merges, so each key is planned alone:
// created, updated, adopted, in sync, drift, removed, orphaned or unmanaged, as projects and
// override rows are.
struct ObjectPlanner {
  const State& desired;
  const State& live;
  const Managed& managed;
  const Policy& policy;
  Plan& out;
  std::deque<Step> removals, writes;  // drained into the plan chunk by chunk

  static Step step(Action action, const std::string& key, std::optional<ObjectValue> want,
                   std::optional<ObjectValue> have, std::string reason, bool drift) {
    Step s{action, ObjectKind::object, key, {}, {}, {}, std::move(reason), drift};
    s.object = std::move(want);
    s.object_live = std::move(have);
    return s;
  }

  void plan_all() {
    std::set<std::string> keys;
    for (const auto& [k, o] : desired.objects) keys.insert(k);
    for (const auto& [k, o] : live.objects) keys.insert(k);
    for (const auto& k : expected_objects(desired, managed)) keys.insert(k);
    for (const auto& k : keys) plan_key(k);
  }

  void plan_key(const std::string& key) {
    auto d = desired.objects.find(key);
    auto l = live.objects.find(key);
    auto m = managed.find(key);
    const ObjectValue* have = l == live.objects.end() ? nullptr : &l->second;
    if (m != managed.end()) ++out.managed_count;
    if (d == desired.objects.end()) {
      if (m == managed.end()) {
        if (have) out.unmanaged.push_back(key);
      } else if (!have) {
        removals.push_back(step(Action::remove, key, {}, std::nullopt,
                                "removed from Git (already absent)", false));
      } else if (!policy.prune) {
        out.orphaned.push_back(key);
      } else {
        removals.push_back(step(Action::remove, key, {}, *have, "removed from Git", false));
      }
      return;
    }
    const ObjectValue& want = d->second;
    const std::string want_hash = hash_of(want);
    const bool git_unchanged = m != managed.end() && m->second.hash == want_hash;
    if (have && same(want, *have)) {
      if (!git_unchanged)
        writes.push_back(step(Action::adopt, key, want, *have, "already as in Git", false));
      else
        ++out.in_sync;
      return;
    }
    // Drift: a managed object that is not what flytecd last wrote — also when Git changed since
    // (a write refused as stale finds this: someone wrote between flytecd's read and its write).
    // Self-heal writes Git's value over it; without it the change is reported and left.
    const bool outside = m != managed.end() && !(have && hash_of(*have) == m->second.hash);
    if (outside) {
      // A versioned record says how many writes came since flytecd's own.
      std::string versions;
      if (have && have->version && m->second.version && have->version != m->second.version)
        versions = " (the record is at version " + std::to_string(have->version) +
                   "; flytecd wrote version " + std::to_string(m->second.version) + ")";
      out.drift.push_back(
          DriftItem{ObjectKind::object, key,
                    std::string(have ? "changed outside Git" : "deleted outside Git") + versions +
                        (git_unchanged ? "" : " (and changed in Git since flytecd wrote it)"),
                    policy.self_heal, object_changes(have, want)});
      if (!policy.self_heal) return;
    }
    std::string reason = outside
                             ? (have ? "drift: changed outside Git" : "drift: deleted outside Git")
                         : !have              ? "new in Git"
                         : m == managed.end() ? "differs from Git (not yet managed)"
                                              : "changed in Git";
    writes.push_back(step(have ? Action::update : Action::create, key, want,
                          have ? std::optional<ObjectValue>(*have) : std::nullopt,
                          std::move(reason), outside));
  }
};

}  // namespace

std::set<std::string> expected_objects(const State& desired, const Managed& managed) {
  std::set<std::string> keys;
  for (const auto& [k, o] : desired.objects) keys.insert(k);
  for (const auto& [k, m] : managed)
    if (k.rfind("project/", 0) != 0 && k.rfind("override/", 0) != 0 &&
        k.rfind("registration/", 0) != 0)
      keys.insert(k);
  return keys;
}

Plan plan(const State& desired, const State& live, const Managed& managed, const Policy& policy) {
  Plan out;
  std::vector<Step> archives;
  plan_projects(desired, live, managed, policy, out, archives);
  OverridePlanner overrides{desired, live, managed, policy, out, live.overrides, {}, {}};
  for (const auto& key : override_keys(desired, live, managed)) overrides.plan_key(key);
  ObjectPlanner objects{desired, live, managed, policy, out, {}, {}};
  objects.plan_all();
  // The steps are moved into one array of their exact size, each list freed chunk by chunk as
  // it is drained: a cold pass plans ~40k steps of ~700 bytes, and a vector grown by doubling,
  // then copied, held up to three times that at once.
  out.steps.reserve(out.steps.size() + overrides.removals.size() + overrides.writes.size() +
                    objects.removals.size() + objects.writes.size() + archives.size());
  for (auto* list : {&overrides.removals, &overrides.writes, &objects.removals, &objects.writes})
    for (; !list->empty(); list->pop_front()) out.steps.push_back(std::move(list->front()));
  for (auto& s : archives) out.steps.push_back(std::move(s));
  return out;
}

}  // namespace flytecd::reconcile
