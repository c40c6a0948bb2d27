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

// The live rows as they will be mid-apply: the observation minus the rows the plan's deletes take
// with them (FlyteAdmin cascades). An overlay on the observation, not a copy of it: a converged
// pass observes ~36k rows.
class LiveRows {
 public:
  using Rows = std::map<std::string, OverrideState>;
  explicit LiveRows(const Rows& observed) : m_observed(observed) {}

  const OverrideState* find(const std::string& key) const {
    auto it = m_observed.find(key);
    return it == m_observed.end() || m_gone.count(key) ? nullptr : &it->second;
  }

  // FlyteAdmin's Delete at `scope` removes rows of `type` at that scope and every narrower one.
  void cascade_delete(const model::Scope& scope, model::AttributeType type) {
    for_each_of(scope.project, [&](const std::string& key, const OverrideState& o) {
      const auto& s = o.scope;
      if (o.type == type && (scope.domain.empty() || s.domain == scope.domain) &&
          (scope.workflow.empty() || s.workflow == scope.workflow))
        m_gone.insert(key);
    });
  }

  // FlyteAdmin merges a project-domain PLUGIN_OVERRIDE update into the row GetRaw finds, a GORM
  // struct query that ignores the empty workflow: the oldest PLUGIN_OVERRIDE row of the
  // (project, domain), which can be a workflow row (the update then lands there and the
  // project-domain row is not written). Row age cannot be observed, so while workflow rows exist
  // the write must go through a project-domain Delete (which removes them too) and they are
  // re-created after it. Returns the workflow rows such a write could be merged into.
  std::vector<std::string> merge_targets(const OverrideState& pd) const {
    std::vector<std::string> out;
    if (pd.type != admin::PLUGIN_OVERRIDE || pd.scope.level() != model::Level::project_domain)
      return out;
    for_each_of(pd.scope.project, [&](const std::string& key, const OverrideState& o) {
      if (o.type == pd.type && o.scope.level() == model::Level::workflow &&
          o.scope.domain == pd.scope.domain)
        out.push_back(key);
    });
    return out;
  }

 private:
  // Every row of `project` still standing: its keys share the prefix "override/<project>/" (a
  // project id holds no '/'; the scope is checked too).
  template <class F>
  void for_each_of(const std::string& project, F&& f) const {
    const std::string stem = "override/" + project + "/";  // as sinks::override_key spells it
    for (auto it = m_observed.lower_bound(stem);
         it != m_observed.end() && it->first.starts_with(stem); ++it)
      if (it->second.scope.project == project && !m_gone.count(it->first)) f(it->first, it->second);
  }

  const Rows& m_observed;
  std::set<std::string> m_gone;
};

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

// The desired values a step carries: pointers into the desired state that keep its owner alive
// when the caller shares one (no copy of ~40k protobuf values in a cold plan), else copies.
struct DesiredValues {
  const std::shared_ptr<const State>* owner = nullptr;

  template <class T>
  Shared<T> of(const T& want) const {
    return owner ? Shared<T>(*owner, &want) : share(want);
  }
};

void plan_projects(const State& desired, const State& live, const Managed& managed,
                   const Policy& policy, const DesiredValues& values, Plan& out,
                   std::vector<Step>& archives) {
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
                                  share(l->second),
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
      out.steps.push_back(Step{
          Action::create, ObjectKind::project, key, values.of(want), {}, {}, "new in Git", false});
      continue;
    }
    const ProjectState& have = l->second;
    const std::string want_hash = hash_of(want);
    if (have == want) {
      if (m == managed.end() || m->second.hash != want_hash)
        out.steps.push_back(Step{Action::adopt,
                                 ObjectKind::project,
                                 key,
                                 values.of(want),
                                 {},
                                 {},
                                 "already as in Git",
                                 false});
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
                             values.of(want),
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
// cascading delete is seen by the narrower rows after it. The keys are the maps' own (a merge of
// three sorted sequences; a converged pass has ~36k keys in each).
std::vector<const std::string*> override_keys(const State& desired, const State& live,
                                              const Managed& managed) {
  auto d = desired.overrides.begin();
  auto l = live.overrides.begin();
  auto m = managed.lower_bound("override/");
  const auto m_end = managed.lower_bound("override0");  // '0' follows '/'
  // By level, in key order within each: one lookup per key, not per comparison.
  std::array<std::vector<const std::string*>, 4> by_rank;
  while (true) {
    const std::string* next = nullptr;
    if (d != desired.overrides.end()) next = &d->first;
    if (l != live.overrides.end() && (!next || l->first < *next)) next = &l->first;
    if (m != m_end && (!next || m->first < *next)) next = &m->first;
    if (!next) break;
    const OverrideState* row = nullptr;
    if (d != desired.overrides.end() && d->first == *next) row = &(d++)->second;
    if (l != live.overrides.end() && l->first == *next) {
      if (!row) row = &l->second;
      ++l;
    }
    if (m != m_end && m->first == *next) ++m;
    by_rank[static_cast<size_t>(row ? level_rank(row->scope) : 3)].push_back(next);
  }
  std::vector<const std::string*> keys;
  keys.reserve(by_rank[0].size() + by_rank[1].size() + by_rank[2].size() + by_rank[3].size());
  for (auto& bucket : by_rank) keys.insert(keys.end(), bucket.begin(), bucket.end());
  return keys;
}

// Plans the override rows key by key over `sim`, live as it will be mid-apply.
struct OverridePlanner {
  const State& desired;
  const State& live;
  const Managed& managed;
  const Policy& policy;
  const DesiredValues& values;
  Plan& out;
  LiveRows sim{live.overrides};
  std::deque<Step> removals, writes;  // drained into the plan chunk by chunk

  void plan_key(const std::string& key);

 private:
  using ManagedIt = Managed::const_iterator;
  bool write_via_delete(const OverrideState& want, std::string& reason);
  void plan_not_in_git(const std::string& key, ManagedIt m, bool was_live);
  void plan_not_live(const std::string& key, const OverrideState& want, ManagedIt m, bool was_live);
  void plan_live(const std::string& key, const OverrideState& want, const OverrideState& have,
                 ManagedIt m);
  static Step step(Action action, const std::string& key, Shared<OverrideState> desired,
                   Shared<OverrideState> live, std::string reason, bool drift) {
    return Step{action,          ObjectKind::override_attr, key,  {}, std::move(desired),
                std::move(live), std::move(reason),         drift};
  }
};

// A project-domain PLUGIN_OVERRIDE write that FlyteAdmin could merge into a workflow row
// (merge_targets) becomes Delete + Update; the workflow rows it deletes are re-created below.
// Returns true (and extends `reason`) then. Rows Git neither wants nor prunes are never
// deleted: the write stays plain and its reason names the row it may be merged into.
bool OverridePlanner::write_via_delete(const OverrideState& want, std::string& reason) {
  const auto targets = sim.merge_targets(want);
  if (targets.empty()) return false;
  for (const auto& t : targets) {
    // Deleting is fine for a row Git wants (re-created) or prunes; not for any other.
    if (!desired.overrides.count(t) && !(managed.count(t) && policy.prune)) {
      reason += "; FlyteAdmin may merge it into the workflow row " + t +
                ", which flytecd does not delete (not managed, or kept with prune off)";
      return false;
    }
  }
  sim.cascade_delete(want.scope, want.type);
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
  const OverrideState* l = sim.find(key);
  const bool was_live = live.overrides.count(key) > 0;
  if (m != managed.end()) ++out.managed_count;
  if (d == desired.overrides.end())
    plan_not_in_git(key, m, was_live);
  else if (!l)
    plan_not_live(key, d->second, m, was_live);
  else
    plan_live(key, d->second, *l, m);
}

// Not in Git: removed if flytecd manages it (and prunes), else listed.
void OverridePlanner::plan_not_in_git(const std::string& key, ManagedIt m, bool was_live) {
  if (m == managed.end()) {
    if (was_live) out.unmanaged.push_back(key);
    return;
  }
  const OverrideState* l = sim.find(key);
  if (!l) {
    // Already gone (deleted by hand, or by a cascade): just forget it.
    removals.push_back(
        step(Action::remove, key, {}, nullptr, "removed from Git (already absent)", false));
    return;
  }
  if (!policy.prune) {
    out.orphaned.push_back(key);
    return;
  }
  removals.push_back(step(Action::remove, key, {}, share(*l), "removed from Git", false));
  sim.cascade_delete(l->scope, l->type);  // `l` is a row of the observation: it stays valid
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
    removals.push_back(step(Action::replace, key, values.of(want),
                            share(OverrideState{want.scope, want.type, {}}), reason, drift));
    return;
  }
  writes.push_back(step(Action::create, key, values.of(want), nullptr, reason, drift));
}

// In Git and live: adopted, in sync, or updated (drift when Git did not change).
void OverridePlanner::plan_live(const std::string& key, const OverrideState& want,
                                const OverrideState& have, ManagedIt m) {
  // One serialization of the desired value for both its hash and the comparison (a converged
  // pass compares ~36k rows).
  const std::string want_bytes = model::canonical_bytes(want.value);
  const std::string want_hash = hash_of_canonical(want_bytes);
  if (want_bytes == model::canonical_bytes(have.value)) {
    if (m == managed.end() || m->second.hash != want_hash)
      writes.push_back(
          step(Action::adopt, key, values.of(want), share(have), "already as in Git", false));
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
    removals.push_back(step(Action::replace, key, values.of(want), share(have),
                            reason + "; plugin overrides merge on update, so delete and re-create",
                            git_unchanged));
    sim.cascade_delete(have.scope, have.type);
    return;
  }
  if (write_via_delete(want, reason)) {
    removals.push_back(step(Action::replace, key, values.of(want),
                            want.type == admin::PLUGIN_OVERRIDE ? share(have) : nullptr, reason,
                            git_unchanged));
    return;
  }
  writes.push_back(step(Action::update, key, values.of(want), share(have), reason, git_unchanged));
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
  const DesiredValues& values;
  Plan& out;
  std::deque<Step> removals, writes;  // drained into the plan chunk by chunk

  static Step step(Action action, const std::string& key, Shared<ObjectValue> want,
                   Shared<ObjectValue> have, std::string reason, bool drift) {
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
        removals.push_back(
            step(Action::remove, key, {}, nullptr, "removed from Git (already absent)", false));
      } else if (!policy.prune) {
        out.orphaned.push_back(key);
      } else {
        removals.push_back(step(Action::remove, key, {}, share(*have), "removed from Git", false));
      }
      return;
    }
    const ObjectValue& want = d->second;
    const std::string want_hash = hash_of(want);
    const bool git_unchanged = m != managed.end() && m->second.hash == want_hash;
    if (have && same(want, *have)) {
      if (!git_unchanged)
        writes.push_back(
            step(Action::adopt, key, values.of(want), share(*have), "already as in Git", false));
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
    writes.push_back(step(have ? Action::update : Action::create, key, values.of(want),
                          have ? share(*have) : nullptr, std::move(reason), outside));
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

namespace {

Plan plan_with(const State& desired, const State& live, const Managed& managed,
               const Policy& policy, const DesiredValues& values) {
  Plan out;
  std::vector<Step> archives;
  plan_projects(desired, live, managed, policy, values, out, archives);
  OverridePlanner overrides{desired, live, managed, policy, values, out, LiveRows{live.overrides},
                            {},      {}};
  for (const std::string* key : override_keys(desired, live, managed)) overrides.plan_key(*key);
  ObjectPlanner objects{desired, live, managed, policy, values, out, {}, {}};
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

}  // namespace

Plan plan(const State& desired, const State& live, const Managed& managed, const Policy& policy) {
  return plan_with(desired, live, managed, policy, DesiredValues{});
}

Plan plan(const std::shared_ptr<const State>& desired, const State& live, const Managed& managed,
          const Policy& policy) {
  return plan_with(*desired, live, managed, policy, DesiredValues{&desired});
}

}  // namespace flytecd::reconcile
