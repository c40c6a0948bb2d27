#include "daemon/run/daemon.hpp"
#include "daemon/wiring.hpp"

namespace flytecd::run {

// The factories live in daemon/wiring.cpp (the one list of built-in backends); these forward.
sources::git::GitOptions git_options(const config::Config& cfg) { return wiring::git_options(cfg); }

Result<std::unique_ptr<sources::Source>> make_source(const config::Config& cfg) {
  return wiring::make_source(cfg);
}

}  // namespace flytecd::run
