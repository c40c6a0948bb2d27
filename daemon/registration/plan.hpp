#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/model/documents.hpp"

// The registration plan: desired registrations + the ledger + what observation found (package
// facts, ACTIVE launch plans) -> one item per registration with typed steps, each with its
// reason. Pure: no I/O, no clock, no globals. The registrar observes, calls compute_plan()
// here, and executes the steps (registrar.hpp); a dry run is the plan without execution.

namespace flytecd::registration {

// "registration/<project>/<domain>/<name>": a registration's identity in the ledger and plans.
std::string registration_key(const model::Registration& r);

// Hash of everything that decides the registered entities (package digest, coordinates,
// hydration settings, activate mode): the ledger's RegistrationRecord::fingerprint.
std::string registration_fingerprint(const model::Registration& r, const std::string& digest);

struct LaunchPlanFact {
  std::string name;
  bool scheduled = false;  // spec.entity_metadata has a schedule
};

// What observation learnt about a registration's package (never its bytes or entities).
struct PackageFacts {
  std::string reference;        // what was loaded (FlyteRegistration: the expanded address)
  std::string digest;           // "sha256:…" of the archive
  std::string manifest_digest;  // OCI only
  // Whether the archive was decoded: observation reads it only when the ledger's fingerprint
  // differs; otherwise the counts and names below are empty and the ledger's are used.
  bool read = false;
  size_t tasks = 0, workflows = 0, launch_plans = 0;
  std::vector<LaunchPlanFact> plans;      // package order
  std::string fast_source;                // fast-registration archive name, empty if none
  std::optional<sources::Signer> signer;  // who signed it, when a signature policy applied
};

// Launch-plan name -> version of every ACTIVE launch plan of one (project, domain), or why it
// could not be read.
using LiveLaunchPlans = Result<std::map<std::string, std::string>>;
using ProjectDomain = std::pair<std::string, std::string>;

struct Observation {
  std::map<std::string, ledger::RegistrationRecord> records;  // the ledger's, by key
  std::map<std::string, Result<PackageFacts>> packages;       // per desired registration key
  std::map<ProjectDomain, LiveLaunchPlans> live;              // per (project, domain)
  // For a desired registration the ledger calls registered (same fingerprint): the launch plans
  // of its record FlyteAdmin does not hold at the version (ListLaunchPlans; empty: all there),
  // or why that could not be read. Launch plans are created last, so all present means the
  // package was registered whole. A key that is absent was not checked (nothing recorded).
  std::map<std::string, Result<std::vector<std::string>>> missing;
};

struct PlanPolicy {
  bool self_heal = true;  // re-activate launch plans changed outside Git
  bool prune = true;      // deactivate launch plans of registrations removed from Git
};

enum class ItemState {
  in_sync,    // nothing to do
  register_,  // fetch, upload and create entities (then activation)
  activate,   // registered already; only activation to fix
  remove,     // gone from Git: deactivate what it activated, forget it
  orphaned,   // gone from Git, prune off: left as it is
  failed,     // observation failed; nothing is executed
};
std::string_view to_string(ItemState s);  // "in-sync", "register", …

enum class StepKind {
  fetch_package,        // fetch and verify the package (digest as observed)
  upload_fast_source,   // DataProxy upload of the fast-registration source
  create_tasks,         // concurrently
  create_workflows,     // in package order
  create_launch_plans,  // in package order
  activate,             // launch_plan@version ACTIVE
  deactivate,           // launch_plan@version INACTIVE
};
std::string_view to_string(StepKind k);  // "fetch package", "activate", …

struct RegistrationStep {
  StepKind kind = StepKind::fetch_package;
  std::string launch_plan;  // activate / deactivate
  std::string version;      // activate / deactivate: the version whose state changes
  size_t count = 0;         // create_*: entities
  bool removal = false;     // deactivate because the registration left Git
  std::string reason;       // "new version v2 (was v1)", "removed from Git", …
};

struct PlanItem {
  std::string key;
  ItemState state = ItemState::in_sync;
  std::optional<model::Registration> registration;  // absent for removals
  std::optional<ledger::RegistrationRecord> previous;
  PackageFacts package;  // as observed (removals: from the ledger)
  std::string fingerprint;
  std::vector<RegistrationStep> steps;
  std::vector<std::string> launch_plans;  // every launch-plan name of the package
  std::vector<std::string> wanted;        // names this registration keeps ACTIVE (the record's)
  std::vector<std::string> active;        // wanted names already ACTIVE at the version
  std::vector<std::string> drift;         // activation changed outside Git
  std::string message;                    // failed: the error; orphaned: why nothing happens
  std::optional<Error> error;             // failed: the observation error
  bool rollback = false;  // the version goes back to one the ledger's history registered before

  bool registers() const { return state == ItemState::register_; }
  size_t deactivations() const;  // deactivate steps (removal and no longer wanted)
  size_t count(StepKind k) const;
  std::vector<std::string> names(StepKind k) const;  // launch plans of activate/deactivate steps
};

struct RegistrationPlan {
  std::vector<PlanItem> items;  // desired registrations in key order, then removals (key order)
  std::map<ProjectDomain, LiveLaunchPlans> live;  // what the plan was based on
  std::optional<Error> target_down;  // set by the registrar: FlyteAdmin unreachable during observe

  // Launch-plan deactivations the plan would make: what the pass guard counts.
  size_t deactivations() const;
  size_t deactivations_on_removal() const;  // registrations gone from Git
  size_t deactivations_on_change() const;   // version or activate-mode change dropped them
  size_t failed() const;
  bool has_changes() const;  // any item not in sync
};

// The plan for one desired registration. `missing` (launch plans of the ledger's record that
// FlyteAdmin does not hold at the version) non-empty: the ledger's "already registered" is not
// true of this target, so the package is registered again ("missing in FlyteAdmin");
// `package.read` must then be true.
PlanItem plan_registration(const model::Registration& r, const ledger::RegistrationRecord* prev,
                           const Result<PackageFacts>& package, const LiveLaunchPlans* live,
                           const PlanPolicy& policy, const std::vector<std::string>& missing = {});

// "missing in FlyteAdmin: launch plan a (and 2 more) not registered at v1". Pure.
std::string missing_reason(const std::vector<std::string>& missing, const std::string& version);

// The plan for a registration the ledger holds but Git no longer declares. Launch plans in
// `claimed` ("<project>/<domain>/<name>", wanted by a desired registration) are left to it.
PlanItem plan_removal(const ledger::RegistrationRecord& rec, const LiveLaunchPlans* live,
                      const PlanPolicy& policy, const std::set<std::string>& claimed = {});

// Launch plans two registrations of one (project, domain) both keep ACTIVE (their activate mode
// wants them): FlyteAdmin keeps one version of a name ACTIVE, so each pass would activate one
// and deactivate the other's.
struct LaunchPlanClash {
  std::string project, domain;
  std::vector<std::string> launch_plans;       // every name the two share, in package order
  const model::Registration* first = nullptr;  // in input order
  const model::Registration* second = nullptr;
};
// One clash per pair of registrations among `regs` (each with the launch-plan names it keeps
// ACTIVE) that share a name. Pure.
std::vector<LaunchPlanClash> launch_plan_clashes(
    const std::vector<std::pair<const model::Registration*, std::vector<std::string>>>& regs);
// "launch plan x is kept ACTIVE by two registrations of p/d: a (file:line) and b (file:line);
// …" ("24 launch plans (a, b, c, …) are …").
std::string describe(const LaunchPlanClash& clash);

// Every item, in key order, then the removals of ledger records Git no longer declares. Takes
// the observation by value: its records and live state move into the plan.
// Two desired registrations that keep one launch plan ACTIVE (launch_plan_clashes) both fail.
RegistrationPlan compute_plan(const std::vector<model::Registration>& desired, Observation observed,
                              const PlanPolicy& policy);

}  // namespace flytecd::registration
