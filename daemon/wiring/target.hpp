#pragma once

#include <memory>
#include <string>

#include "daemon/common/file_lock.hpp"
#include "daemon/config/config.hpp"
#include "daemon/ledger/ledger.hpp"
#include "sinks/configmap/configmap_sink.hpp"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "sinks/routing_sink.hpp"

namespace flytecd::wiring {

// Where flytecd writes: FlyteAdmin at the configured endpoint, or — with no endpoint — the
// embedded FlyteAdmin emulator started in-process on loopback, persisted in the state directory.
struct Target {
  std::unique_ptr<FileLock> lock;  // first member: released after everything else is closed
  std::unique_ptr<sinks::emulator::Emulator> emulator;  // set when embedded
  std::unique_ptr<sinks::Sink> sink;  // FlyteAdmin, or the embedded emulator (sink_backends())
  std::unique_ptr<ledger::Ledger> ledger;
  // ConfigMap mode (kubernetes.configMap.enabled): overrides and platform defaults go to the
  // ConfigMap sink, projects and registrations to `sink`, through `routed`. Null otherwise.
  std::unique_ptr<sinks::Sink> configmap;
  std::unique_ptr<sinks::RoutingSink> routed;  // after what it routes to: destroyed first
  std::string description;
  // The target's identity (target_identity) and the directory of its ledger and
  // applied-revision record (<stateDir>/targets/<slug>).
  std::string identity;
  std::string state_dir;
  bool embedded() const { return emulator != nullptr; }
  // The sink a reconcile pass observes and executes through: `routed` in ConfigMap mode, else
  // the FlyteAdmin sink. Its capabilities() say which desired parts to plan
  // (desired_state), its entities() where registrations go.
  sinks::Sink& pass_sink() { return routed ? static_cast<sinks::Sink&>(*routed) : *sink; }
};

// What a command does to the state directory. A writer (apply, run) — and any command that
// starts the embedded emulator on its database — holds the state directory's lock
// (<state>/lock) for its lifetime: one writer per directory; a second waits up to
// cfg.lock_wait_seconds, then fails naming the holder's pid. A reader of a remote target only
// reads the ledger (SQLite WAL) and takes no lock.
enum class Access { read, write };

// Opens the target's ledger (<stateDir>/targets/<slug>/ledger.db, target_identity.hpp) and connects
// the sink (starting the emulator if needed); in ConfigMap mode also the ConfigMap sink and the
// routing sink over both (no API call is made). Errors: conflict (state directory locked by another
// process), invalid_input, unavailable, the Kubernetes client's (ConfigMap mode outside a cluster
// without kubernetes.apiServer).
Result<Target> open_target(const config::Config& cfg, Access access = Access::write);

}  // namespace flytecd::wiring
