// Document kinds are rows: the loader dispatches on the table and its diagnostics name the kinds
// from it.
#include "daemon/model/kinds.hpp"

#include <catch2/catch.hpp>

#include "daemon/model/loader.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::model;

TEST_CASE("document kinds: one row per kind, each with its apiVersion", "[model][kinds]") {
  std::vector<std::string> kinds;
  for (const auto& k : document_kinds()) {
    kinds.emplace_back(k.kind);
    CHECK(k.parse != nullptr);
    CHECK(find_document_kind(k.kind) == &k);
  }
  CHECK(kinds == std::vector<std::string>{"Overrides", "WorkflowRegistration", "Project",
                                          "PlatformDefaults", "Settings", "FlyteRegistration"});
  CHECK(find_document_kind("Overrides")->api_version == "flytecd/v1");
  CHECK(find_document_kind("FlyteRegistration")->api_version == "flyte.backend/v1");
  CHECK(find_document_kind("Settings")->api_version == "flytecd/v1");
  CHECK(find_document_kind("AppSettings") == nullptr);
  CHECK(
      document_kind_names() ==
      "Overrides, WorkflowRegistration, Project, PlatformDefaults, Settings or FlyteRegistration");
}

TEST_CASE("document kinds: an unknown kind and a kind under another kind's apiVersion",
          "[model][kinds]") {
  Documents out;
  Diagnostics diags;
  parse_file({"a.yaml", "apiVersion: flytecd/v1\nkind: AppSettings\n", 37}, Limits{}, Policy{}, out,
             diags);
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].kind == DiagKind::unknown_kind);
  CHECK(diags[0].expected == document_kind_names());
  diags.clear();
  parse_file({"b.yaml", "apiVersion: flytecd/v1\nkind: FlyteRegistration\n", 44}, Limits{},
             Policy{}, out, diags);
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].kind == DiagKind::unknown_api_version);
  CHECK(diags[0].expected == "flyte.backend/v1");
  CHECK(diags[0].where.line == 1);
}

}  // namespace FLYTECD_UNITY_ID
