#pragma once

// Projects whose writes are suspended (`flytecd suspend --project P`): a pass plans them like any
// other project and shows what it would do, but executes nothing of theirs, while the other
// projects are applied as usual (Flux suspends one Kustomization the same way). Pure filters
// over the pass's plan, states and registration plan; identity for an empty set.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/pass/apply.hpp"
#include "daemon/reconcile/plan.hpp"
#include "daemon/registration/plan.hpp"

namespace flytecd::pass {

using HeldProjects = std::set<std::string>;

// The project an object key names ("project/P", "override/P/D/W/TYPE", "registration/P/D/N");
// "" for platform defaults ("override//D//TYPE") and keys of another form.
std::string_view key_project(std::string_view key);
// Whether the key's project is held (platform defaults never are).
bool is_held(const HeldProjects& held, std::string_view key);

// The plan without the steps of held projects (what is executed).
reconcile::Plan without_held(const reconcile::Plan& plan, const HeldProjects& held);
// Marks the drift of held projects as not healed: no step of this pass reverts it.
void keep_drift_of_held(reconcile::Plan& plan, const HeldProjects& held);
// The state without held projects' projects and override rows.
reconcile::State without_held(reconcile::State state, const HeldProjects& held);
// The state of held projects only.
reconcile::State only_held(const reconcile::State& state, const HeldProjects& held);
void drop_held(const HeldProjects& held, reconcile::State& live, reconcile::Managed& managed);

// Moves the items of held projects out of `plan` (left with what is executed) and returns them
// as a plan of their own (same observation), to be reported as planned.
registration::RegistrationPlan split_held(registration::RegistrationPlan& plan,
                                          const HeldProjects& held);

// The per-object view of held projects' desired objects: from `plan` (the pass's first plan),
// an object with a step is pending ("project P suspended: update planned, not written"), one
// drifted is drifted, the others synced.
std::vector<ObjectStatus> held_statuses(const reconcile::State& desired_held,
                                        const reconcile::Plan& plan);

// "a, b" (sorted).
std::string describe(const HeldProjects& held);

}  // namespace flytecd::pass
