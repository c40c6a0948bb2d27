#include <absl/synchronization/mutex.h>

#include <cstdio>
#include <exception>

#include "daemon/cli/cli.hpp"

// The last line of defence: commands return errors, and the daemon catches per pass; an
// exception that still escapes is reported as one line and exit 1, never std::terminate.
int main(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, so every absl::Mutex that gRPC locks also updates a
  // global lock-order graph (deadlock detection): 1-2 % of a cold apply's and of the emulator's
  // CPU. gRPC's own release builds run without it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  try {
    return flytecd::cli::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flytecd: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "flytecd: internal error: an unknown exception\n");
  }
  return 1;
}
