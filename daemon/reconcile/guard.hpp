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

// What a pass's registration plan would do to what the ledger owns (counted by the caller from
// the registration plan).
struct RegistrationCounts {
  size_t managed = 0;   // registrations the ledger records
  size_t declared = 0;  // registrations the revision declares
  size_t removed = 0;   // recorded, not declared, and pruned (their launch plans deactivated)
  size_t launch_plans_managed = 0;      // launch plans flytecd activated, per the ledger
  size_t launch_plans_deactivated = 0;  // on removal and on version / activation change
};

// Counts for guard_pass from a pass's plan: projects archived and managed override rows deleted
// (the plan's remove steps), registrations removed and launch plans deactivated, against what
// the ledger manages. Deactivations on a version change count even with prune off: they run
// regardless. Pure.
GuardInput guard_input(const Plan& plan, const State& desired, size_t documents,
                       const Managed& managed, const RegistrationCounts& registrations);

}  // namespace flytecd::reconcile
