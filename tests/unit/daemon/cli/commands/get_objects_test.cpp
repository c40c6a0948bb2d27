// `flytecd get objects`: rows from a daemon's status document, filtered, as a table and JSON.
#include "daemon/cli/commands/get_objects.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {

nlohmann::json status() {
  return nlohmann::json::parse(R"({
    "revision": "abc", "target": "flyteadmin x", "suspended": null,
    "suspendedProjects": [{"project": "b", "since": "t", "reason": "", "by": "x"}],
    "objects": [
      {"key": "project/a", "state": "synced", "revision": "abc1234567890", "lastChange": "2026-12-01T13:00:00Z"},
      {"key": "override/a/development//TASK_RESOURCE", "state": "drifted", "revision": "abc"},
      {"key": "override/b/development/wf.x/EXECUTION_QUEUE", "state": "pending",
       "error": "project b suspended: update planned, not written"},
      {"key": "override/c///TASK_RESOURCE", "state": "unmanaged"}
    ],
    "drift": [{"key": "override/a/development//TASK_RESOURCE", "detail": "changed outside Git",
               "reverted": false,
               "changes": [{"path": "taskResourceAttributes.limits.cpu", "live": "8", "git": "4",
                            "source": "p.yaml:3"}]}],
    "registrations": [{"key": "registration/a/development/etl", "state": "failed",
                       "version": "v1", "message": "registry down", "drift": [], "activated": []}]
  })");
}

}  // namespace

TEST_CASE("get objects: one row per object and registration, in key order, with its state",
          "[get-objects]") {
  const auto rows = cli::object_rows(status());
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].key == "override/a/development//TASK_RESOURCE");
  CHECK(rows[0].state == "drifted");
  CHECK(rows[0].detail ==
        "changed outside Git; ~ taskResourceAttributes.limits.cpu: live \"8\", Git \"4\" "
        "(p.yaml:3)");
  CHECK(rows[1].kind == "override");
  CHECK(rows[1].workflow == "wf.x");
  CHECK(rows[1].name == "EXECUTION_QUEUE @ wf.x");
  CHECK(rows[1].state == "pending");
  CHECK(rows[2].state == "unmanaged");
  CHECK(rows[3].key == "project/a");
  CHECK(rows[3].state == "in-sync");
  CHECK(rows[3].last_change == "2026-12-01T13:00:00Z");
  CHECK(rows[4].kind == "registration");
  CHECK(rows[4].state == "failed");
  CHECK(rows[4].detail == "version v1; registry down");
}

TEST_CASE("get objects: filters by project, domain, kind and state", "[get-objects]") {
  const auto rows = cli::object_rows(status());
  auto count = [&](const cli::ObjectFilter& f) {
    size_t n = 0;
    for (const auto& r : rows) n += cli::matches(r, f) ? 1 : 0;
    return n;
  };
  CHECK(count({}) == 5);
  CHECK(count({"a", "", "", ""}) == 3);
  CHECK(count({"a", "development", "", ""}) == 2);
  CHECK(count({"", "", "registration", ""}) == 1);
  CHECK(count({"", "", "", "drifted"}) == 1);
  CHECK(count({"b", "", "", "in-sync"}) == 0);
}

TEST_CASE("get objects: a table with the details of what is not in sync, and JSON",
          "[get-objects]") {
  const auto rows = cli::object_rows(status());
  const auto table = cli::objects_table(rows);
  CHECK(table.rfind("KIND", 0) == 0);
  CHECK(table.find("abc123456789 ") != std::string::npos);  // the revision cut to 12
  CHECK(table.find("  override/a/development//TASK_RESOURCE: changed outside Git") !=
        std::string::npos);
  CHECK(table.find("5 object(s): 1 drifted, 1 failed, 1 in-sync, 1 pending, 1 unmanaged\n") !=
        std::string::npos);
  const auto j = cli::objects_document(rows, status());
  CHECK(j["suspendedProjects"] == nlohmann::ordered_json::array({"b"}));
  CHECK(j["objects"].size() == 5);
  CHECK(j["objects"][2]["revision"].is_null());
  CHECK(j["objects"][3]["revision"] == "abc1234567890");
}

}  // namespace FLYTECD_UNITY_ID
