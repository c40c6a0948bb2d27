// robfig/cron/v3 ParseStandard as FlyteAdmin's launch_plan_validator.go validateSchedule uses it.
#include "sinks/emulator/cron.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::sinks::emulator::detail::cron_parse_error;

TEST_CASE("cron: standard specs and descriptors robfig/cron accepts", "[emulator][cron]") {
  for (const char* ok :
       {"* * * * *",      "0 0 * * *",         "*/5 * * * *",      "0 9-17/2 * * 1-5",
        "0 0 1,15 * ?",   "0 0 * JAN-mar sun", "5 4 * * 0",        "0 0 31 12 6",
        "@yearly",        "@annually",         "@monthly",         "@weekly",
        "@daily",         "@midnight",         "@hourly",          "@every 90s",
        "@every 1.5h",    "@every 0",          "TZ=UTC 0 0 * * *", "CRON_TZ=UTC 0 6 * * *",
        "  0  0 * * *  ", "*-5 * * * *"}) {
    INFO(ok);
    CHECK(cron_parse_error(ok) == "");
  }
}

TEST_CASE("cron: robfig/cron's error texts", "[emulator][cron]") {
  CHECK(cron_parse_error("") == "empty spec string");
  CHECK(cron_parse_error("* * * *") == "expected exactly 5 fields, found 4: [* * * *]");
  CHECK(cron_parse_error("0 0 0 * *") == "beginning of range (0) below minimum (1): 0");
  CHECK(cron_parse_error("0 0 * 13 *") == "end of range (13) above maximum (12): 13");
  CHECK(cron_parse_error("0 5-2 * * *") == "beginning of range (5) beyond end of range (2): 5-2");
  CHECK(cron_parse_error("1-2-3 * * * *") == "too many hyphens: 1-2-3");
  CHECK(cron_parse_error("*/2/3 * * * *") == "too many slashes: */2/3");
  CHECK(cron_parse_error("*/0 * * * *") == "step of range should be a positive number: */0");
  CHECK(cron_parse_error("-1 * * * *") ==
        "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax");
  CHECK(cron_parse_error("0 0 * * fun") ==
        "failed to parse int from fun: strconv.Atoi: parsing \"fun\": invalid syntax");
  CHECK(cron_parse_error("@reboot") == "unrecognized descriptor: @reboot");
  CHECK(cron_parse_error("@every 5") ==
        "failed to parse duration @every 5: time: missing unit in duration \"5\"");
  CHECK(cron_parse_error("@every x") ==
        "failed to parse duration @every x: time: invalid duration \"x\"");
  CHECK(cron_parse_error("TZ=Mars/Olympus 0 0 * * *") ==
        "provided bad location Mars/Olympus: unknown time zone Mars/Olympus");
}

}  // namespace FLYTECD_UNITY_ID
