#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/pass/applied_record.hpp"
#include "daemon/pass/apply.hpp"
#include "daemon/pass/hold.hpp"
#include "daemon/pass/ownership.hpp"
#include "daemon/pass/scope.hpp"
#include "daemon/reconcile/guard.hpp"
#include "daemon/reconcile/plan.hpp"
#include "daemon/registration/budget.hpp"
#include "daemon/registration/packages.hpp"
#include "daemon/registration/registrar.hpp"
#include "sinks/entity_sink.hpp"
#include "sinks/sink.hpp"

namespace flytecd::pass {

// The one reconcile pass. Every command that plans or writes against live state — `apply`,
// `run`, `plan --live`, `plan --git … --live`, the check after `import` — calls run(); they
// differ only in where the revision comes from and whether its steps execute:
//
//   revision (documents) -> desired state -> observe -> plan (overrides, projects and
//   registrations) -> guard (one verdict over every destructive step) -> execute through the
//   sinks -> record (ledger) -> verify (re-observe)
//
// The result is a value (Report); status JSON, metrics, readiness, notifications and CLI output
// are pure functions of it (pass/views.hpp).

// What the pass reconciles: a revision that passed validation.
struct Revision {
  std::string id;       // commit id, or "dir:<content hash>" (a directory)
  std::string subject;  // commit subject (may be empty)
  const model::Documents* docs = nullptr;
  std::string author;        // commit author "Name <email>" (may be empty)
  int64_t committed_at = 0;  // commit time, unix seconds (0: unknown)
};

// An earlier revision, read to rebuild ownership: its documents and where its registrations'
// packages come from (repository paths are read at that revision; null: the pass's packages).
struct EarlierRevision {
  model::Documents docs;
  std::unique_ptr<registration::PackageResolver> packages;
};

// What the pass reads and writes. Owned by the caller; the pass keeps no reference after run().
struct Wiring {
  sinks::Sink* sink = nullptr;            // projects and overrides
  sinks::EntitySink* entities = nullptr;  // workflow registrations (null: none declared)
  registration::PackageResolver* packages = nullptr;  // where registrations' packages come from
  ledger::Ledger* ledger = nullptr;                   // what flytecd owns and last applied
  std::string target;                                 // description of the sink, for output
  // The applied-revision record (null: none is kept; ownership is the ledger's alone).
  RecordStore* record = nullptr;
  // Reads an earlier revision of the source (null, or an error: it has no history).
  std::function<Result<EarlierRevision>(const std::string& revision)> revision_at;
};

struct Report;

enum class Mode {
  plan,     // observe and plan; nothing is written (plan --live, import's check)
  execute,  // plan, guard, then execute what the guard lets through (apply, run)
};

struct Options {
  Mode mode = Mode::plan;
  reconcile::Policy policy;
  int parallelism = 8;
  int max_rounds = 3;
  // Stops starting new steps (SIGTERM, leadership lost); steps in flight finish and are recorded.
  const std::atomic<bool>* cancel = nullptr;
  uint64_t max_package_bytes = registration::k_default_max_package_bytes;
  registration::MemoryBudget* memory = nullptr;  // process-wide package budget (null: per pass)
  // Progress, called as steps finish (serialized; the steps that ended together): for logs and
  // streaming CLI output.
  pass::StepsCallback on_steps;
  std::function<void(const registration::RegistrationOutcome&)> on_registration;
  // Execute mode: called once projects and overrides are applied, while registrations may still
  // wait for their packages (the daemon turns ready without waiting for a slow registry).
  std::function<void(const Report&)> on_applied;
  // Execute mode: why the pass runs ("apply", "startup", "interval", "webhook github", …), kept in
  // the ledger's history with every pass that changed something, was refused or failed; a pass
  // with nothing to do is only counted. Plan mode records nothing.
  std::string trigger = "apply";
  ledger::Retention retention;
  // Ownership: the configuration's fingerprint (ownership_fingerprint) kept in the record, and
  // who writes it (pod or host name).
  std::string config_fingerprint;
  std::string writer;
  // --project/--domain: the pass plans, writes and guards only these scopes (pass/scope.hpp).
  PassScope scope;
  // Execute mode: projects whose writes are suspended (pass/hold.hpp): planned and reported, not
  // executed; the others apply as usual.
  HeldProjects held;
  // A pass after a Git change (the daemon): the projects whose documents differ between `base`
  // and this revision (changed_projects). When the ledger and the applied-revision record say
  // `base` converged (the documents outside these projects are then applied as they are), with
  // no --project scope, no project held and ownership needing no rebuild, the pass observes,
  // plans and writes only these projects, and converges the revision like a whole pass. Else
  // the pass is whole, and Report::targeted says why. The guard counts against everything
  // managed, as a whole pass does.
  struct Targeted {
    std::string base;
    std::set<std::string> projects;
  };
  std::optional<Targeted> targeted;
};

// Whether and how a pass was narrowed to the projects a Git change touched (Options::targeted).
struct TargetedReport {
  bool asked = false;  // the caller offered a targeted pass
  bool used = false;   // it ran targeted (the plan covers `projects` only)
  std::string base;
  std::set<std::string> projects;
  std::string whole_because;  // asked, not used: why the pass is whole
};

// How a pass ended.
enum class Outcome {
  success,  // plan mode: planned; execute mode: converged, every registration ok
  refused,  // the guard refused the revision; nothing of it was executed
  failed,   // observation, a step, a registration or the ledger failed
};
std::string_view to_string(Outcome o);

struct Report {
  Mode mode = Mode::plan;
  std::string revision, subject, target;
  Outcome outcome = Outcome::success;
  // The plan from the pass's first observation: projects and overrides (steps, drift,
  // unmanaged) ...
  reconcile::Plan plan;
  // ... and registrations (plan mode: what would happen; execute mode: what happened).
  registration::RegistrationReport registrations;
  bool observed = false;  // the sink answered the first observation
  reconcile::GuardInput guard_input;
  reconcile::GuardVerdict guard;
  // Execute mode: the overrides apply (every step run, rounds, per-object state).
  pass::ApplyReport applied;
  std::optional<Error> error;  // why the pass failed or was refused (coded)
  // Where ownership came from (the ledger, or rebuilt from Git at the record's revision).
  Ownership ownership;
  // Execute mode: the applied-revision record could not be written (conflict: another writer,
  // e.g. a new leader, updated it first). The pass's own outcome is unchanged.
  std::optional<Error> record_error;
  size_t documents = 0;
  double seconds = 0;
  // Execute mode: the projects whose steps were planned and not executed (Options::held), and
  // how many of their steps (projects and overrides) and registrations wait for them.
  HeldProjects held;
  size_t held_steps = 0;
  TargetedReport targeted;

  bool executed() const { return mode == Mode::execute && outcome != Outcome::refused; }
  bool has_changes() const { return plan.has_changes() || registrations.has_changes(); }
  // The pass failed because the target could not be reached (never for a refusal).
  bool target_down() const;
};

// The ledger's history entry for an executed pass: every step that ran (overrides, projects)
// with its outcome and field changes, and every registration that did something. Pure.
ledger::PassRecord history_record(const Report& report, const Revision& revision,
                                  const std::string& trigger);
// Whether a pass is worth a history entry (changed something, refused, failed) or only a count.
bool worth_recording(const Report& report);

// The desired state of a revision for a sink holding `held`: projects and override rows as
// reconcile::desired_state, plus platform defaults as rows with an empty project when the sink
// holds them, minus the parts it does not hold. Pure.
reconcile::State desired_state(const model::Documents& docs, const sinks::Capabilities& held);

// Runs one pass. Never throws; every failure is in the report.
Report run(const Revision& revision, Wiring& wiring, const Options& options);

// The guard's counts for a plan: projects archived, managed override rows deleted (cascades
// included), registrations removed and launch plans deactivated (on removal and on version or
// activation change), against what the ledger manages. With a registration plan its items carry
// the ledger's records and `records` is not read; without one, removals come from `records`.
// Pure.
reconcile::GuardInput guard_input(const reconcile::Plan& plan, const reconcile::State& desired,
                                  size_t documents, const reconcile::Managed& managed,
                                  const std::map<std::string, ledger::RegistrationRecord>& records,
                                  const std::vector<model::Registration>& declared,
                                  const registration::RegistrationPlan* registrations, bool prune);

// An upper bound of guard_input before any package is read: the ledger's removals, and for every
// declared registration every launch plan its record activated (what a new version or new
// content could deactivate at most). The guard passing it implies passing the real counts. Pure.
reconcile::GuardInput guard_bound(const reconcile::Plan& plan, const reconcile::State& desired,
                                  size_t documents, const reconcile::Managed& managed,
                                  const std::map<std::string, ledger::RegistrationRecord>& records,
                                  const std::vector<model::Registration>& declared, bool prune);

}  // namespace flytecd::pass
