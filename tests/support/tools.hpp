// A test that needs a tool this machine lacks (docker-registry, lighttpd, sshd, ...) is reported
// as skipped, never as passed. Catch2 2.13 (Debian 12) has no SKIP(), so under ctest
// (FLYTECD_UNDER_CTEST, set by tests/CMakeLists.txt) the test process exits with
// k_skip_exit_code, which ctest's SKIP_RETURN_CODE reports as "Skipped"; run directly (all tests
// in one process), the test warns and returns so the other tests still run. With
// FLYTECD_REQUIRE_TOOLS=1 (.ci/run) a missing tool fails the test instead.
#pragma once

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace flytecd_test {

inline constexpr int k_skip_exit_code = 77;

inline bool env_is_one(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == "1";
}

}  // namespace flytecd_test

// Skips (or, with FLYTECD_REQUIRE_TOOLS=1, fails) the current test unless `available`; `why`
// names the missing tool and how to get it. Returns from the test function.
#define FLYTECD_REQUIRE_TOOL(available, why)                              \
  do {                                                                    \
    if (!(available)) {                                                   \
      if (::flytecd_test::env_is_one("FLYTECD_REQUIRE_TOOLS")) {          \
        FAIL("required tool missing (FLYTECD_REQUIRE_TOOLS=1): " << why); \
      }                                                                   \
      if (::flytecd_test::env_is_one("FLYTECD_UNDER_CTEST")) {            \
        std::cout << "SKIP: " << why << std::endl;                        \
        std::fflush(nullptr);                                             \
        std::_Exit(::flytecd_test::k_skip_exit_code);                     \
      }                                                                   \
      WARN("SKIP: " << why);                                              \
      return;                                                             \
    }                                                                     \
  } while (false)
