#include "daemon/cli/suggest.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::cli::closest;
using flytecd::cli::did_you_mean;

TEST_CASE("suggest: a typo finds the closest word, far words find nothing", "[cli]") {
  const std::vector<std::string> commands{"validate", "get", "apply", "plan", "run", "import"};
  CHECK(closest("aply", commands) == "apply");
  CHECK(closest("valdiate", commands) == "validate");
  CHECK(closest("xyz", commands).empty());
  CHECK(did_you_mean("aply", commands) == "; did you mean 'apply'?");
  CHECK(did_you_mean("deploy", commands).empty());
  CHECK(closest("flytesnack", {"flytesnacks", "ml-training"}) == "flytesnacks");
  CHECK(closest(std::string(100000, 'a'), commands).empty());  // bounded work
}

}  // namespace FLYTECD_UNITY_ID
