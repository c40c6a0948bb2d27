#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/pass/applied_record.hpp"
#include "daemon/reconcile/state.hpp"

// Ownership that survives the loss of the state directory and a failover. What flytecd owns is
// a function of Git: the objects declared at the revision it last converged (the applied-revision
// record says which). A replica whose ledger is missing, or older than the record, rebuilds it
// from that revision before it plans:
//   - every project and override declared there is owned, with the hash of its value there as
//     "last applied" (so a live value that differs is drift, and what Git dropped since is
//     pruned under the guard);
//   - for a pass that was in flight (started at another revision, not converged), an object
//     whose live value equals its value at that revision is owned with that value instead (it
//     was written; it is not drift);
//   - registrations: records for those whose launch plans all exist in FlyteAdmin
//     (registration::rebuild_registration_records), so nothing is created again.

namespace flytecd::pass {

// How the pass came by the ownership it planned with.
struct Ownership {
  enum class State {
    ledger,       // "ledger": the ledger is current (or no record is kept)
    rebuilt,      // "rebuilt": rebuilt from Git at the record's revision
    none,         // "none": no ledger and no record (adopt what equals Git, the rest unmanaged)
    unavailable,  // "unavailable": the record or that revision could not be read (the ledger as
                  // it is was used, and `message` says why)
  };
  State state = State::ledger;
  std::string from_revision;  // rebuilt: the converged revision
  std::string in_flight;      // rebuilt: the in-flight revision, when there was one
  size_t objects = 0, registrations = 0;
  std::vector<std::string> skipped;  // registrations not rebuilt, with why
  std::string message;               // one line for the log and status
};

// "ledger", "rebuilt", "none", "unavailable".
std::string_view to_string(Ownership::State s);

// For /api/v1/status: {"state", "record", "fromRevision", "inFlight", "objects",
// "registrations", "skipped", "message"}.
nlohmann::ordered_json ownership_json(const Ownership& o, const std::string& record);

// The owned objects of a revision, pure: every project and override of `converged` with its hash
// there; with `in_flight`, an object whose live value equals its value at that revision takes
// that value instead (objects new in flight are owned only when live already equals them).
std::vector<ledger::Ledger::OwnedObject> owned_objects(const reconcile::State& converged,
                                                       const std::string& converged_revision,
                                                       const reconcile::State* in_flight,
                                                       const std::string& in_flight_revision,
                                                       const reconcile::State& live);

// Whether the ledger must be rebuilt from the record: the record names a converged revision for
// this configuration and the ledger does not (it is new, wiped, or a follower's older copy).
bool needs_rebuild(const AppliedRecord& record, const std::string& ledger_converged,
                   const std::string& config_fingerprint);

// Hash of the configuration that decides what flytecd owns: the target, the repository (URL,
// branch, path) and the domains. Pure.
std::string ownership_fingerprint(const std::string& target, const std::string& repository,
                                  const std::vector<std::string>& domains);

}  // namespace flytecd::pass
