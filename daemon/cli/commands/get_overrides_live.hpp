#pragma once

// `flytecd get overrides --live -p P [-d D] [--workflow W]`: what FlyteAdmin holds at exactly one
// scope, attribute type by attribute type, beside what Git declares for that scope (like
// `flytectl get task-resource-attribute`, with Git's value and the field diff next to it). Read
// through the target's sink (ListMatchableAttributes per type, as `plan --live` observes); writes
// nothing.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/cli/commands.hpp"
#include "daemon/reconcile/plan.hpp"

namespace flytecd::cli {

// The document for `scope` (exact level, no inheritance): {"project", "domain", "workflow",
// "attributes": [{"type", "attribute", "state": in-sync | differs | live-only | git-only,
// "managed", "source", "live", "git", "changes"}]}, one entry per attribute type either side
// holds there, in type order. `managed`: the ledger's keys. Pure.
nlohmann::ordered_json live_overrides_document(const model::Scope& scope,
                                               const reconcile::State& desired,
                                               const reconcile::State& live,
                                               const reconcile::Managed& managed);

// One block per attribute: "TYPE: state (managed|unmanaged), Git file:line", then each changed
// field (change_line) or the value when only one side has it. Pure.
std::string live_overrides_text(const nlohmann::ordered_json& doc);

// `get overrides --live`: 0, 1 when the target or the repository cannot be read.
int run_get_overrides_live(const TargetOptions& target, const GetOverridesOptions& g,
                           std::ostream& out, std::ostream& err);

}  // namespace flytecd::cli
