#include "daemon/common/file_lock.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST_CASE("file lock: one holder at a time, a waiter is told the holder's pid", "[lock]") {
  std::string tmpl = (fs::temp_directory_path() / "flytecd-lock-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const std::string path = tmpl + "/lock";
  {
    auto first = flytecd::FileLock::acquire(path, 0ms, "state directory X");
    REQUIRE(first);
    auto second = flytecd::FileLock::acquire(path, 300ms, "state directory X");
    REQUIRE_FALSE(second);
    CHECK(second.error().code == flytecd::ErrorCode::conflict);
    CHECK_THAT(second.error().message,
               Catch::Contains("state directory X is in use by another flytecd process (pid " +
                               std::to_string(::getpid()) + ")"));
  }
  // Released with its holder.
  auto again = flytecd::FileLock::acquire(path, 0ms, "state directory X");
  CHECK(again);
  fs::remove_all(tmpl);
}

}  // namespace FLYTECD_UNITY_ID
