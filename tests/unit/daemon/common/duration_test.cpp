#include "daemon/common/duration.hpp"

#include <catch2/catch.hpp>
#include <string>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using std::chrono::hours, std::chrono::milliseconds, std::chrono::seconds;

namespace {
const DurationRange k_interval{seconds(1), hours(24)};
}

TEST_CASE("duration: units ms, s, m, h and a bare number of seconds, kept in milliseconds",
          "[duration]") {
  CHECK(*parse_duration("30s", k_interval) == seconds(30));
  CHECK(*parse_duration("5m", k_interval) == std::chrono::minutes(5));
  CHECK(*parse_duration("1h", k_interval) == hours(1));
  CHECK(*parse_duration("45", k_interval) == seconds(45));
  CHECK(*parse_duration("1500ms", k_interval) == milliseconds(1500));
  CHECK(*parse_duration("1.5s", k_interval) == milliseconds(1500));  // not truncated to 1s
  CHECK(*parse_duration("0.25h", k_interval) == std::chrono::minutes(15));
  CHECK(*parse_duration("24h", k_interval) == hours(24));
  CHECK(*parse_duration("0", DurationRange{}) == milliseconds(0));
  CHECK(*parse_duration("007s", k_interval) == seconds(7));
  CHECK(*parse_duration("1h30m", k_interval) == std::chrono::minutes(90));  // as Go reads it
  CHECK(*parse_duration("1m30.5s", k_interval) == milliseconds(90500));
}

// Issue 27.8: "nan", "1e10" and "600000h" became -2147483648 s, "0.5s" became 0 s: busy loops.
TEST_CASE("duration: nan, inf, exponents, signs and junk are not durations", "[duration]") {
  for (const char* bad :
       {"nan",  "NaN", "inf", "-inf", "1e10", "1e1s",  "-5s",  "+5s",  " 5s",    "5s ", "5 s",
        "0x10", "5d",  "s",   ".",    "",     "1..2s", "5sec", "1h30", "1h 30m", "m5"}) {
    auto d = parse_duration(bad, k_interval);
    REQUIRE_FALSE(d);
    CHECK(d.error().message == "\"" + std::string(bad) +
                                   "\" is not a duration (expected e.g. 30s, 5m, 1h; between 1s "
                                   "and 24h)");
  }
}

TEST_CASE("duration: values outside the key's range, sub-second and overflowing ones, are refused",
          "[duration]") {
  for (const char* bad : {"0.5s", "0", "999ms", "600000h", "24.001h", "86400001ms",
                          "99999999999999999999999999999999999999s"}) {
    auto d = parse_duration(bad, k_interval);
    REQUIRE_FALSE(d);
    CHECK(d.error().message ==
          "\"" + std::string(bad) + "\" is out of range (expected between 1s and 24h)");
  }
  // 300 digits: no overflow, no huge allocation, the same answer.
  CHECK_FALSE(parse_duration(std::string(300, '9') + "s", k_interval));
  CHECK(parse_duration("0000000000000000000000005s", k_interval));
}

TEST_CASE("duration: format_duration spells the range bounds shortest", "[duration]") {
  CHECK(format_duration(milliseconds(0)) == "0s");
  CHECK(format_duration(seconds(1)) == "1s");
  CHECK(format_duration(hours(24)) == "24h");
  CHECK(format_duration(milliseconds(100)) == "100ms");
  CHECK(format_duration(seconds(90)) == "1m30s");
}

}  // namespace FLYTECD_UNITY_ID
