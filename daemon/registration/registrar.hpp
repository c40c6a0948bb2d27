#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/breaker.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/registration/budget.hpp"
#include "daemon/registration/package.hpp"
#include "daemon/registration/packages.hpp"
#include "daemon/registration/plan.hpp"
#include "sinks/entity_sink.hpp"

namespace flytecd::registration {

struct RegistrarOptions {
  std::string revision;
  bool self_heal = true;  // re-activate launch plans someone deactivated or replaced
  bool prune = true;      // deactivate launch plans of registrations removed from Git
  bool dry_run = false;   // plan only: observe (packages read in full), write nothing
  int parallelism = 8;    // tasks in flight per package; packages in flight: half of it
  const std::atomic<bool>* cancel = nullptr;
  // Decompressed bytes one package may hold (packages.maxPackageBytes).
  uint64_t max_package_bytes = k_default_max_package_bytes;
  // What package reading may hold across the registrations in flight (the daemon passes one
  // process-wide budget; null = one of k_default_memory_budget_bytes for this call).
  MemoryBudget* memory = nullptr;
  // Counts FlyteAdmin calls that found it unreachable; once open, no registration starts and
  // calls not yet made fail at once (the next reconcile retries). Shared with the overrides
  // apply of the same pass; null: one of its own.
  CircuitBreaker* breaker = nullptr;
  // The pass's scope (--project/--domain): records outside it are not planned (null: all).
  std::function<bool(const std::string& project, const std::string& domain)> in_scope;
};

// What happened to (or, planning only, would happen to) one registration.
enum class RegistrationState {
  in_sync,     // "in-sync": registered at this version and content, launch plans observed
  registered,  // "registered": entities written this run
  activated,   // "activated": only activation was fixed this run
  register_,   // "register": dry run, would register
  activate,    // "activate": dry run, only activation to fix
  removed,     // "removed": gone from Git, its launch plans deactivated
  orphaned,    // "orphaned": gone from Git, prune off
  failed,      // "failed"
  conflict,    // "conflict": same version, different content
};
// The spelling in text, JSON, history and metrics ("in-sync", "register", …).
std::string_view to_string(RegistrationState s);

// What happened (or, in a dry run, would happen) to one registration.
struct RegistrationOutcome {
  std::string key;
  std::string name, source_kind, project, domain, version;
  std::string source;   // "registrations/x.yaml:12": the document (empty for removals)
  std::string package;  // as written in Git (expanded for FlyteRegistration)
  std::string digest;   // package content digest
  std::string manifest_digest;
  // A signature policy applied: who signed the manifest ("signed by … via …"), and who signed
  // the version the ledger recorded before when that was someone else (or nobody).
  std::string signed_by, signer_identity, signer_issuer;
  int64_t signed_at = 0;
  std::string previous_signed_by;
  bool signer_changed = false;
  // What the ledger says was registered before, when this registration changes it (a new
  // version, or new content under the same name): shown as "was v1 (sha256:…)".
  std::string previous_version, previous_digest;
  // The new version is one registered before: a rollback (previous_version -> version).
  bool rollback = false;
  model::Activate activate = model::Activate::scheduled;
  size_t tasks = 0, workflows = 0, launch_plans = 0;
  size_t created = 0, existed = 0;       // Create* results (ALREADY_EXISTS counts as existed)
  std::vector<std::string> activated;    // launch plans made ACTIVE by this run
  std::vector<std::string> deactivated;  // launch plans made INACTIVE by this run
  std::vector<std::string> active;       // names ACTIVE at this version after the run
  std::vector<std::string> drift;        // activation changed outside Git
  RegistrationState state = RegistrationState::in_sync;
  std::string message;  // error or conflict detail
  bool ok() const {
    return state != RegistrationState::failed && state != RegistrationState::conflict;
  }
};

struct RegistrationReport {
  std::vector<RegistrationOutcome> items;  // desired registrations in key order, then removals
  size_t rpcs = 0;                         // write RPCs issued (creates, uploads, activations)
  std::optional<Error> target_down;        // the breaker opened: FlyteAdmin unreachable
  size_t failed() const {
    size_t n = 0;
    for (const auto& i : items) n += !i.ok();
    return n;
  }
  bool ok() const { return failed() == 0; }
  bool has_changes() const;
};

// One line for humans: "registration p/d/name: registered v1 (sha256:…): 39 tasks, …".
std::string describe(const RegistrationOutcome& o);
nlohmann::json to_json(const RegistrationOutcome& o);

// Observe -> plan -> execute. Each registration is independent (a failing package or registry
// fails only its registration):
//   * package -> digest; the ledger remembers the fingerprint (digest + hydration settings +
//     activate mode) that was fully registered, so an unchanged registration reads no archive
//     and issues no Create RPC at all;
//   * otherwise: read and hydrate the package (fast source uploaded through DataProxy first),
//     create tasks concurrently, then workflows and launch plans in package order;
//     ALREADY_EXISTS = success; INVALID_ARGUMENT "different structure" = conflict, not retried;
//   * activation per `activate`, checked every run against FlyteAdmin's active versions (drift
//     healed when self_heal); launch plans this registration activated before but no longer
//     wants are deactivated if still ACTIVE at the old version;
//   * registrations gone from Git: their launch plans are deactivated (nothing is deleted).

// Observes (each package's digest, read only when the ledger's fingerprint differs or FlyteAdmin
// lacks what the ledger recorded; the ACTIVE launch plans of every (project, domain) involved;
// the launch plans registered at each recorded version still wanted) and plans. Writes nothing
// (read RPCs only). A changed package is summarized (launch plans decoded, tasks and workflows
// counted) — or, with options.dry_run, read in full, so a plan that will not be executed still
// reports every package error. Errors: the ledger could not be read. Observation failures are
// failed items. Pass the same options.breaker to execute_registrations to share what it learnt.
Result<RegistrationPlan> plan_registrations(const std::vector<model::Registration>& desired,
                                            sinks::EntitySink& sink, PackageResolver& packages,
                                            ledger::Ledger& ledger,
                                            const RegistrarOptions& options);

// Carries out `plan`'s steps (ignores options.dry_run): packages are loaded again (the fetcher's
// cache serves them) and must still have the digest the plan saw; registrations run concurrently
// (parallelism / 2), removals after them; each successful item is recorded in the ledger. The
// plan is carried out as made: a registration FlyteAdmin lacks was planned as one (observation
// checks the ledger's records against the launch plans at their version). `on_item` is called
// (serialized) as each registration finishes.
RegistrationReport execute_registrations(
    const RegistrationPlan& plan, sinks::EntitySink& sink, PackageResolver& packages,
    ledger::Ledger& ledger, const RegistrarOptions& options,
    const std::function<void(const RegistrationOutcome&)>& on_item = {});

// One plan item as an outcome of what would happen (the dry-run view of one registration).
RegistrationOutcome outcome_of(const PlanItem& item);

// The plan as a report of what would happen (states "register", "activate", "removed", …): the
// dry-run view printed by `plan --live` and `get registrations`. Pure.
RegistrationReport report_of(const RegistrationPlan& plan);

// plan_registrations, then (unless options.dry_run) execute_registrations; a dry run returns
// report_of(plan) and calls `on_item` for each item. A ledger read failure is one failed item
// "registration/*".
RegistrationReport reconcile_registrations(
    const std::vector<model::Registration>& desired, sinks::EntitySink& sink,
    PackageResolver& packages, ledger::Ledger& ledger, const RegistrarOptions& options,
    const std::function<void(const RegistrationOutcome&)>& on_item = {});

// Ownership rebuilt from Git (daemon/pass/ownership.hpp): the ledger records of `declared` (the
// registrations of a revision flytecd applied) for which FlyteAdmin holds the whole package.
// Each package is read (a summary: its launch plans), and every launch plan is looked up with
// GetLaunchPlan at the registration's version: launch plans are created last, so when all exist
// the package was registered whole. A record's `entities` lists those launch plans (the tasks
// and workflows are not looked up one by one). Read RPCs only. A registration whose package
// cannot be read, or with a launch plan missing, gets no record (the next pass registers it,
// FlyteAdmin's ALREADY_EXISTS making that safe), and is listed in `skipped` with why.
struct RebuiltRegistrations {
  std::vector<ledger::RegistrationRecord> records;
  std::vector<std::string> skipped;  // "registration/p/d/name: why"
  size_t lookups = 0;                // GetLaunchPlan calls made
};
RebuiltRegistrations rebuild_registration_records(const std::vector<model::Registration>& declared,
                                                  const std::string& revision,
                                                  sinks::EntitySink& sink,
                                                  PackageResolver& packages, ledger::Ledger& ledger,
                                                  const RegistrarOptions& options);

}  // namespace flytecd::registration
