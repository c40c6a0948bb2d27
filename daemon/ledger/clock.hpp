#pragma once

// The ledger's timestamps (applied_at, started_at, …): seconds since the epoch. Shared by
// ledger.cpp and history.cpp.

#include <chrono>
#include <cstdint>

namespace flytecd::ledger::detail {

inline int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace flytecd::ledger::detail
