#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/config/config.hpp"

// Ownership belongs to one target. What flytecd remembers about a deployment — the ledger (what
// it manages, what it registered, history) and the applied-revision record — is kept per target
// under the state directory, so a state directory used with a second FlyteAdmin never lends it
// the first one's ownership:
//
//   <stateDir>/targets/<slug>/ledger.db             the target's ledger
//   <stateDir>/targets/<slug>/applied-revision.json the target's applied-revision record
//   <stateDir>/targets/<slug>/target.json           {"target": "<id>"}: whose directory it is
//   <stateDir>/last-target                          the id of the target used last (a switch is
//                                                   reported once)
//   <stateDir>/emulator.db                          the embedded emulator's own database
namespace flytecd::wiring {

struct TargetIdentity {
  // "flyteadmin 127.0.0.1:8089", "flyteadmin emulator (embedded, <stateDir>/emulator.db)";
  // ConfigMap mode appends "; configmap <ns>/<name>:<key>".
  std::string id;
  // A directory name: the id's host and port made safe, and 12 hex digits of its sha256
  // ("flyteadmin-127.0.0.1-8089-1a2b3c4d5e6f").
  std::string slug;
};

// The endpoint as one spelling: scheme and "dns:///" dropped, host lowercased, a trailing "/"
// dropped, the port made explicit (443 when none is given; gRPC's default). "dns:///Admin:81",
// "admin:81" and "grpc://admin:81/" are one target. Pure.
std::string normalize_endpoint(std::string_view endpoint);

// The identity of the target `cfg` writes to. FlyteAdmin says nothing stable about itself (its
// GetVersion changes with every upgrade), so the normalized endpoint is the identity; a
// FlyteAdmin whose database was reset behind the same endpoint is caught by observation
// (registrations are in sync only when their launch plans are there). Pure.
TargetIdentity target_identity(const config::Config& cfg);

// <stateDir>/targets/<slug> of cfg's target. Pure.
std::filesystem::path target_dir(const config::Config& cfg);

// Makes the target's directory ready (0700). With `write`: a ledger an earlier flytecd kept at
// <stateDir>/ledger.db is moved into it when its applied-revision record was written for this
// target (same ownership fingerprint), else left where it is, unused, and said so; a target
// different from <stateDir>/last-target is reported once (then last-target names it). Returns
// the notices to show (stderr or the log). Errors: invalid_input (the directory cannot be made).
struct TargetStatePrep {
  std::filesystem::path dir;
  std::filesystem::path ledger;  // the ledger to open (a reader may use an earlier one in place)
  std::vector<std::string> notices;
};
Result<TargetStatePrep> prepare_target_state(const config::Config& cfg, bool write);

// The targets a state directory holds ledgers for: (id, directory), by id.
std::vector<std::pair<std::string, std::filesystem::path>> known_targets(
    const std::string& state_dir);

}  // namespace flytecd::wiring
