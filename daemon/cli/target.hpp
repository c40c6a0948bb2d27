#pragma once

#include <memory>
#include <string>

#include "daemon/config/config.hpp"
#include "daemon/ledger/ledger.hpp"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"

namespace flytecd::cli {

// Where flytecd writes: FlyteAdmin at the configured endpoint, or — with no endpoint — the
// embedded FlyteAdmin emulator started in-process on loopback, persisted in the state directory.
struct Target {
  std::unique_ptr<sinks::emulator::Emulator> emulator;  // set when embedded
  std::unique_ptr<sinks::flyteadmin::AdminSink> sink;
  std::unique_ptr<ledger::Ledger> ledger;
  std::string description;
  bool embedded() const { return emulator != nullptr; }
};

// Opens the ledger in cfg.state_dir and connects the sink (starting the emulator if needed).
Result<Target> open_target(const config::Config& cfg);

}  // namespace flytecd::cli
