#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "daemon/model/loader.hpp"
#include "daemon/pass/pass.hpp"
#include "daemon/wiring/reconciler.hpp"
#include "daemon/wiring/target.hpp"
#include "sources/source.hpp"

namespace flytecd::cli {

struct ValidateOptions {
  std::string dir = ".";
  std::string output = "text";
  // --packages: also fetch OCI and HTTPS packages (the `packages:` settings of --config) and
  // compile them; without it only packages kept in the repository are compiled.
  bool packages = false;
  std::string config_file;
  model::Policy policy;
  model::Limits limits;
};
// `flytecd validate`: 0 valid, 1 invalid or unreadable.
int run_validate(const ValidateOptions& opt, std::ostream& out, std::ostream& err);

struct GetOverridesOptions {
  std::string repo = ".";
  std::string project, domain, workflow;
  std::string output = "yaml";
  model::Policy policy;
  model::Limits limits;
};
// `flytecd get overrides`: prints the collated document; 1 when the repository is invalid.
int run_get_overrides(const GetOverridesOptions& opt, std::ostream& out, std::ostream& err);

// Hidden `flytecd complete-projects --repo DIR` (shell completion): the project ids the
// repository declares (Project, Overrides and registration documents), sorted, one a line.
// Quiet: 1 with no output when the directory cannot be read.
int run_complete_projects(const std::string& repo, std::ostream& out);

}  // namespace flytecd::cli

#include "daemon/config/config.hpp"

namespace flytecd::cli {

// Options shared by commands that talk to FlyteAdmin.
struct TargetOptions {
  std::string config_file;
  std::string repo;
  std::string state_dir;
  std::string admin_endpoint;
  std::string flytectl_config;
  bool insecure = false;
  bool no_self_heal = false;
  bool no_prune = false;
  bool allow_mass_prune = false;
  bool allow_empty = false;
  double max_prune_share = -1;
  int parallelism = 0;
  double lock_wait_seconds = -1;
  // --project/--domain (plan, apply, import): the pass covers only these scopes.
  std::string project, domain;
};

// File, then environment, then flags. An explicit --repo DIR wins over a configured git.url.
Result<config::Config> resolve_config(const TargetOptions& opt);

// A revision of the configured source read through `rec` and valid: `at` ("" = the source's
// head; a named revision needs a Git source). Every command that reconciles or plans against live
// state reads its documents through this. Errors: the source's (unavailable, not_found, …);
// invalid_input when the revision is invalid (each diagnostic is written to `err` first).
Result<wiring::LoadedRevision> load_valid(wiring::Reconciler& rec, const std::string& at,
                                          std::ostream& err);
// What most commands start from: cfg's reconciler, its revision `at` loaded and valid, its target
// opened with `access`. Errors: Reconciler::open's, load_valid's, open_target's.
struct Prepared {
  std::unique_ptr<wiring::Reconciler> rec;
  wiring::LoadedRevision rev;
};
Result<Prepared> prepare(const config::Config& cfg, const std::string& at, wiring::Access access,
                         std::ostream& err);
// A command's pass options: cfg's, in `mode`, written by "<host> (flytecd CLI)".
pass::Options command_options(const config::Config& cfg, pass::Mode mode);

// The ownership line of apply and plan: a rebuild, or a record that could not be used; "nothing
// owned, nothing recorded" only when it matters, i.e. live objects are left unmanaged (a first
// apply to an empty FlyteAdmin says nothing).
bool worth_saying(const pass::Ownership& o, const reconcile::Plan& plan);

// --project naming a project that neither the revision nor the ledger knows would plan nothing
// and exit 0: a typo looks like "nothing to do". Errors name the declared projects.
Status check_scope_project(const TargetOptions& opt, const model::Documents& docs,
                           const ledger::Ledger& ledger);

// The documents of the repository directory `dir`, loaded (validate, get overrides,
// complete-projects). Errors: the directory's (it cannot be read).
Result<model::LoadResult> load_repo(const std::string& dir, const model::Limits& limits,
                                    const model::Policy& policy);

struct ReviewOptions;

// `flytecd apply`: one reconcile pass; 0 converged, 1 otherwise. `format`: text (steps as they
// finish, then the summary) or json (the pass's plan and what was applied).
// `flytecd recover --from-revision REV [--force]`: records REV as the revision flytecd last
// applied (the state directory's applied-revision record) so the next pass rebuilds ownership
// from it, then prints that pass's plan. 0 recorded, 1 error (no Git source, unknown revision, a
// ledger that owns objects without --force).
int run_recover(const TargetOptions& opt, const std::string& from_revision, bool force,
                std::ostream& out, std::ostream& err);

int run_apply(const TargetOptions& opt, const std::string& format, std::ostream& out,
              std::ostream& err);

// `flytecd history`: what passes changed, were refused or failed, newest first, from the state
// directory's ledger (read only). 0, or 1 when there is no ledger.
// With `server`, asks that running daemon (GET /api/v1/history) instead.
// `domain` (with query.project) keeps only steps in that domain of the project.
int run_history(const TargetOptions& opt, const ledger::HistoryQuery& query,
                const std::string& domain, const std::string& server, const std::string& format,
                std::ostream& out, std::ostream& err);

// `flytecd plan --live`: 0 no changes, 2 changes, 1 error.
// With `head`, the documents are its --git repository at --head (plan --git … --live);
// otherwise the configured source: git.url at its ref, else the repository directory.
int run_plan_live(const TargetOptions& opt, const std::string& format, std::ostream& out,
                  std::ostream& err, const ReviewOptions* head = nullptr);

// `flytecd plan --git DIR|URL --base REV --head REV [--path P]`: what merging head into base
// would change, from the two revisions alone. 0 no changes, 2 changes, 1 error.
struct ReviewOptions {
  std::string git;  // repository URL or local path
  std::string base, head, path;
  std::string format = "text";
};
int run_plan_review(const TargetOptions& opt, const ReviewOptions& r, std::ostream& out,
                    std::ostream& err);

// `flytecd run`: the daemon; returns when stopped.
int run_daemon(const TargetOptions& opt);

// `flytecd get registrations`: each registration's package, digest, entity counts, activation
// and state (nothing is written). 0 ok, 1 when a registration cannot be read.
int run_get_registrations(const TargetOptions& opt, const std::string& format, std::ostream& out,
                          std::ostream& err);

// `flytecd import --out DIR`: writes the live projects and overrides as a repository.
int run_import(const TargetOptions& opt, const std::string& out_dir, std::ostream& out,
               std::ostream& err);

}  // namespace flytecd::cli
