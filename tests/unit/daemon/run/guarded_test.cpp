#include "daemon/run/guarded.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "daemon/common/text.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::run::run_guarded;

// Issue 27.1: nothing caught what a pass threw (loop() and main had no handler): the daemon
// aborted and crash-looped on the same input.
TEST_CASE("daemon: a pass that throws is reported as its message, never escapes",
          "[daemon][text]") {
  bool ran = false;
  CHECK_FALSE(run_guarded([&] { ran = true; }));
  CHECK(ran);
  auto e = run_guarded([] { throw std::runtime_error("boom"); });
  REQUIRE(e);
  CHECK(*e == "boom");
  // What nlohmann throws on invalid UTF-8, with the offending byte in what(): reported as UTF-8.
  auto j = run_guarded([] { (void)nlohmann::json("caf\xE9").dump(); });
  REQUIRE(j);
  CHECK_THAT(*j, Catch::Contains("[json.exception.type_error.316]"));
  CHECK(flytecd::text::valid_utf8(*j));
  auto odd = run_guarded([] { throw 42; });
  REQUIRE(odd);
  CHECK(*odd == "an unknown exception");
}

}  // namespace FLYTECD_UNITY_ID
