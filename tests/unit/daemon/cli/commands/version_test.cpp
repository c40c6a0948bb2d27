// `flytecd version`: each part, known or said to be unknown.
#include "daemon/cli/commands/version.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

TEST_CASE("version: the daemon's part from its status, and an older daemon says so", "[version]") {
  auto p = cli::daemon_version(
      {{"version", "1.2.3"}, {"target", "flyteadmin a:81"}, {"targetIsEmulator", false}},
      "http://127.0.0.1:8080");
  CHECK(p.version == "1.2.3");
  CHECK(p.error.empty());
  CHECK(p.detail == "target flyteadmin a:81");
  auto old = cli::daemon_version({{"target", "x"}}, "http://h");
  CHECK_FALSE(old.error.empty());
}

TEST_CASE("version: one line per part, unknown parts with their reason, and JSON alike",
          "[version]") {
  std::vector<cli::VersionPart> parts{
      {"client", "", "1.2.3", "", "", "", ""},
      {"daemon", "http://h:1", "", "", "", "", "cannot reach flytecd at http://h:1"},
      {"flyteadmin", "dns:///a:81", "v1.13.0", "fa70a14", "2026-01-01", "", ""}};
  const auto text = cli::version_text(parts);
  CHECK(text ==
        "client:     flytecd 1.2.3\n"
        "daemon:     unknown at http://h:1: cannot reach flytecd at http://h:1\n"
        "flyteadmin: v1.13.0 (build fa70a14, built 2026-01-01) at dns:///a:81\n");
  const auto j = cli::version_json(parts);
  CHECK(j["client"]["version"] == "1.2.3");
  CHECK(j["daemon"]["reachable"] == false);
  CHECK(j["daemon"]["version"].is_null());
  CHECK(j["flyteadmin"]["build"] == "fa70a14");
  CHECK(j["flyteadmin"]["buildTime"] == "2026-01-01");
}

}  // namespace FLYTECD_UNITY_ID
