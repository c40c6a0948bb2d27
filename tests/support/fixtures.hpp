#pragma once
// The real `pyflyte package` archives (../shared/fixtures/flyte-packages) and reading a file
// whole, for the tests that register or compile them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_paths.hpp"

namespace flytecd::testing {

inline std::filesystem::path package_fixtures() {
  std::filesystem::path p = "/work/shared/fixtures/flyte-packages";
  if (std::filesystem::exists(p)) return p;
  return std::filesystem::path(FLYTECD_SOURCE_DIR) / ".." / "shared" / "fixtures" /
         "flyte-packages";
}

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace flytecd::testing
