#pragma once

// Where a command run with --state-dir keeps a target's ledger (daemon/wiring/target_identity.hpp):
// tests that read it after running the binary find it here.
#include <filesystem>
#include <string>

#include "daemon/config/config.hpp"
#include "daemon/wiring/target_identity.hpp"

namespace flytecd::testing {

// <state>/targets/<slug>/ledger.db of the FlyteAdmin at `endpoint` ("" = the embedded emulator).
inline std::filesystem::path target_ledger(const std::filesystem::path& state_dir,
                                           const std::string& endpoint) {
  config::Config c = config::defaults();
  c.state_dir = state_dir.string();
  c.admin.endpoint = endpoint;
  return wiring::target_dir(c) / "ledger.db";
}

}  // namespace flytecd::testing
