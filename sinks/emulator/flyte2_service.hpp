#pragma once

// The gRPC face of the Flyte 2 emulator (internal to sinks/emulator).

#include <spdlog/logger.h>

#include <cstdint>
#include <memory>
#include <string>

#include "sinks/emulator/faults.hpp"
#include "sinks/emulator/flyte2_projects.hpp"
#include "sinks/emulator/flyte2_settings.hpp"

namespace grpc {
class ServerBuilder;
}

namespace flytecd::sinks::emulator {

// Flyte 2's gRPC services (flyteidl2.settings.SettingsService and
// flyteidl2.project.ProjectService): counts calls, applies the fault rules, maps errors as Flyte
// 2's server does (a version conflict is FAILED_PRECONDITION), and answers GetSettings with
// UNIMPLEMENTED, as the open-source server does today.
class Flyte2Frontend {
 public:
  Flyte2Frontend(Flyte2Settings& settings, Flyte2Projects& projects, FaultInjector& faults,
                 std::shared_ptr<spdlog::logger> log);
  ~Flyte2Frontend();
  Flyte2Frontend(const Flyte2Frontend&) = delete;
  Flyte2Frontend& operator=(const Flyte2Frontend&) = delete;
  void register_with(grpc::ServerBuilder& builder);
  void set_log(std::shared_ptr<spdlog::logger> log);
  uint64_t calls(const std::string& method) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> m_impl;
};

}  // namespace flytecd::sinks::emulator
