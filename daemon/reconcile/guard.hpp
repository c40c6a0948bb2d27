#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/reconcile/plan.hpp"

namespace flytecd::reconcile {

// What one revision would destroy, per kind of managed object, before anything executes.
struct GuardKind {
  std::string name;      // "projects", "overrides", "registrations"
  size_t managed = 0;    // owned per the ledger
  size_t desired = 0;    // declared by the revision
  size_t destroyed = 0;  // owned, not declared: archived / deleted / launch plans deactivated
};

struct GuardInput {
  size_t documents = 0;          // documents in the revision
  std::vector<GuardKind> kinds;  // one entry per kind
};

struct GuardVerdict {
  bool refused = false;
  std::string reason;  // one line: what the revision would destroy and the flag that allows it
};

// The pass-level guard over every destructive step (override deletes, project archives,
// launch-plan deactivations of removed registrations), applied before any step of the revision
// runs:
//   * a revision with zero documents, or with none left of a kind the ledger manages, is
//     refused unless policy.allow_empty;
//   * destroying all managed objects of a kind, or more than policy.max_prune_share of a kind or
//     of the total, is refused unless policy.allow_mass_prune.
// With prune off nothing is destroyed, so only the empty rule applies. Pure, deterministic.
GuardVerdict guard_pass(const GuardInput& input, const Policy& policy);

// Counts for guard_pass from the desired state, the registrations declared (keys), the ledger's
// managed objects and the ledger's registration keys. Pure.
GuardInput guard_input(const State& desired, const std::set<std::string>& desired_registrations,
                       size_t documents, const Managed& managed,
                       const std::set<std::string>& managed_registrations, bool prune);

}  // namespace flytecd::reconcile
