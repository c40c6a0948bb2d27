#pragma once

#include <cstdint>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/reconcile/diff.hpp"
#include "daemon/reconcile/state.hpp"

namespace flytecd::reconcile {

// What flytecd remembers about an object it manages (from the ledger).
struct ManagedRecord {
  std::string hash;      // hash of what flytecd last applied
  std::string revision;  // Git revision it came from
  // The server's version of the record that write left, for a sink whose writes are conditional
  // on one (Flyte 2 settings); 0 when it keeps none.
  uint64_t version = 0;
};
using Managed = std::map<std::string, ManagedRecord>;  // by object key

struct Policy {
  bool self_heal = true;          // revert drift (changes made outside Git); off = report only
  bool prune = true;              // delete managed objects removed from Git
  double max_prune_share = 0.5;   // refuse plans deleting more than this share of managed objects
  bool allow_mass_prune = false;  // override the guard
  bool allow_empty = false;       // accept a revision with no documents (or none of a kind)
};

// A plan's steps are what a sink executes (sinks/types.hpp).
using sinks::Action;
using sinks::share;
using sinks::Shared;
using sinks::Step;

struct DriftItem {
  ObjectKind kind;
  std::string key;
  std::string detail;
  bool healed = false;  // a step in this plan reverts it
  // What changed outside Git, field by field: before = live, after = what flytecd applied (Git).
  std::vector<FieldChange> changes;
};

// The field-level diff of an update, replace or delete: before = live, after = desired (Git).
// Empty for create (its desired value is the step) and adopt. Pure.
std::vector<FieldChange> step_changes(const Step& step, size_t max_value = 200);

struct Plan {
  std::vector<Step>
      steps;  // in execution order: projects, override removals broad->narrow, writes, archives
  std::vector<DriftItem> drift;
  std::vector<std::string> unmanaged;  // live objects flytecd never created (never touched)
  std::vector<std::string> orphaned;   // managed, removed from Git, kept because prune is off
  size_t in_sync = 0;
  size_t managed_count = 0;
  bool refused = false;
  std::string refusal;  // why the whole plan is refused (set from the guard, reconcile/guard.hpp)

  bool has_changes() const {
    for (const auto& s : steps)
      if (s.action != Action::adopt) return true;
    return false;
  }
  size_t count(Action a, ObjectKind k) const;
};

// The generic objects a pass must observe (Sink::expect): those Git declares and those the ledger
// says flytecd manages.
std::set<std::string> expected_objects(const State& desired, const Managed& managed);

// The pure heart of flytecd: what to do so `live` becomes `desired`, given what we `managed`.
// Accounts for FlyteAdmin's quirks: Update replaces the whole (scope, type) message;
// PLUGIN_OVERRIDE merges by task type (removing entries needs Delete + Update); Delete at a broad
// scope also deletes narrower rows of that type, which are re-created when Git still wants them.
// Deterministic; no I/O.
Plan plan(const State& desired, const State& live, const Managed& managed, const Policy& policy);
// The same plan, its steps' desired values pointing into `desired` (and keeping it alive) instead
// of copies of them: a cold pass plans ~40k steps.
Plan plan(const std::shared_ptr<const State>& desired, const State& live, const Managed& managed,
          const Policy& policy);

}  // namespace flytecd::reconcile
