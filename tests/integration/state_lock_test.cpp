// Issue 10.6: two `flytecd apply` on one state directory both exited 0; the second redid 4,807
// writes and reported false drift. Now the state directory has one writer at a time.

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <future>
#include <string>

#include "daemon/common/file_lock.hpp"
#include "sinks/emulator/emulator.hpp"
#include "test_paths.hpp"
#include "tests/support/cli.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using Ran = flytecd_test::CliRun;
using flytecd_test::run_cli;

std::string temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "flytecd-statelock-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

}  // namespace

TEST_CASE("state lock: apply on a state directory held by another process exits 1 naming it",
          "[integration][lock]") {
  const std::string dir = temp_dir();
  const std::string repo = std::string(FLYTECD_SOURCE_DIR) + "/repo-layout-example";
  fs::create_directories(dir + "/state");
  auto held = flytecd::FileLock::acquire(dir + "/state/lock", 0ms, "test");
  REQUIRE(held);
  for (const char* cmd : {"apply", "run"}) {
    Ran r = run_cli(std::string(cmd) + " --repo " + repo + " --state-dir " + dir +
                    "/state --lock-wait 1 --log-level error");
    INFO(r.output);
    CHECK(r.rc == 1);
    CHECK_THAT(r.output, Catch::Contains("(pid " + std::to_string(::getpid()) + ")"));
    CHECK_THAT(r.output, Catch::Contains("one writer per state directory"));
  }
  // Nothing was opened, nothing written: no ledger, not even a target's directory.
  CHECK_FALSE(fs::exists(dir + "/state/ledger.db"));
  CHECK_FALSE(fs::exists(dir + "/state/targets"));
  held->reset();
  fs::remove_all(dir);
}

TEST_CASE("state lock: two applies at once run one after the other, no false drift",
          "[integration][lock]") {
  const std::string dir = temp_dir();
  const std::string repo = std::string(FLYTECD_SOURCE_DIR) + "/repo-layout-example";
  auto emu = flytecd::sinks::emulator::Emulator::start({});
  REQUIRE(emu);
  const std::string args = "apply --repo " + repo + " --state-dir " + dir +
                           "/state --lock-wait 120 --insecure --admin-endpoint " +
                           (*emu)->address() + " --log-level error";
  auto a = std::async(std::launch::async, [&] { return run_cli(args); });
  auto b = std::async(std::launch::async, [&] { return run_cli(args); });
  Ran ra = a.get();
  Ran rb = b.get();
  INFO(ra.output);
  INFO(rb.output);
  CHECK(ra.rc == 0);
  CHECK(rb.rc == 0);
  CHECK(ra.output.find("! drift") == std::string::npos);
  CHECK(rb.output.find("! drift") == std::string::npos);
  // Exactly one of them did the work; the other found nothing to do.
  const bool a_idle = ra.output.find("applied 0 steps") != std::string::npos;
  const bool b_idle = rb.output.find("applied 0 steps") != std::string::npos;
  CHECK(a_idle != b_idle);
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
