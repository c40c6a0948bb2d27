#pragma once

#include <memory>
#include <string>

#include "daemon/common/result.hpp"
#include "sinks/compat_names.hpp"
#include "sinks/types.hpp"

namespace flytecd::sinks {

// Where desired state is written. Implementations: FlyteAdmin over gRPC (which is also how the
// embedded emulator is reached). Thread-safe: execute() may be called from several threads.
class Sink {
 public:
  virtual ~Sink() = default;

  // Reads the live projects and every stored override row. Errors: unavailable/timeout (retryable),
  // unauthenticated, internal.
  virtual Result<reconcile::State> observe() = 0;

  // Carries out one plan step. Idempotent: repeating a step that already took effect succeeds.
  // Errors keep their category (invalid_input and conflicts are permanent; unavailable retryable).
  virtual Status execute(const reconcile::Step& step) = 0;

  // "flyteadmin dns:///host:port" or "flyteadmin emulator (embedded) 127.0.0.1:port".
  virtual std::string describe() const = 0;
};

}  // namespace flytecd::sinks
