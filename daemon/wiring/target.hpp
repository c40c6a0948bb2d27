#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/common/file_lock.hpp"
#include "daemon/config/config.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/wiring/wiring.hpp"
#include "sinks/sink.hpp"

namespace flytecd::wiring {

// Where flytecd writes: the sinks of every sink-table row that selects the configuration
// (wiring::sink_backends: FlyteAdmin at the configured endpoint, or — with no endpoint — the
// embedded FlyteAdmin emulator; the overrides ConfigMap when enabled), routed by capabilities.
struct Target {
  std::unique_ptr<FileLock> lock;  // first member: released after everything else is closed
  std::vector<OpenedSink> sinks;   // the selected rows' sinks, in table order
  std::unique_ptr<ledger::Ledger> ledger;
  // A RoutingSink over `sinks` when there is more than one (each part to the last sink holding
  // it); null otherwise. After what it routes to: destroyed first.
  std::unique_ptr<sinks::Sink> routed;
  std::string description;  // the sinks' descriptions, " + " between them
  // The target's identity (target_identity) and the directory of its ledger and
  // applied-revision record (<stateDir>/targets/<slug>).
  std::string identity;
  std::string state_dir;
  // Whether the embedded emulator is one of the sinks.
  bool embedded() const;
  // The sink a reconcile pass observes and executes through. Its capabilities() say which desired
  // parts to plan (desired_state), its entities() where registrations go.
  sinks::Sink& pass_sink() { return routed ? *routed : *sinks.front().sink; }
  // The calls of every sink ("Method CODE" -> count), for flytecd_rpc_total.
  std::map<std::string, uint64_t> rpc_counts() const;
};

// What a command does to the state directory. A writer (apply, run) — and any command that
// starts the embedded emulator on its database — holds the state directory's lock
// (<state>/lock) for its lifetime: one writer per directory; a second waits up to
// cfg.lock_wait_seconds, then fails naming the holder's pid. A reader of a remote target only
// reads the ledger (SQLite WAL) and takes no lock.
enum class Access { read, write };

// Opens the target's ledger (<stateDir>/targets/<slug>/ledger.db, target_identity.hpp) and the
// selected sinks (starting the emulator if needed), routed by capabilities (no API call is made).
// Errors: conflict (state directory locked by another process), invalid_input, unavailable, the
// Kubernetes client's (ConfigMap mode outside a cluster without kubernetes.apiServer).
Result<Target> open_target(const config::Config& cfg, Access access = Access::write);

}  // namespace flytecd::wiring
