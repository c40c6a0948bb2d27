#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "daemon/common/result.hpp"

// The one parser of configured durations (interval, lockWait, kubernetes.*). A duration is a
// non-negative decimal number and a unit — "500ms", "30s", "1.5s", "5m", "1h" — or a bare number
// of seconds ("45"). Signs, exponents, "nan", "inf", hex and spaces are refused. Sub-second
// values are kept as milliseconds (no truncation to seconds): whether one is sane is the key's
// range. Pure and thread-safe.
namespace flytecd {

struct DurationRange {
  std::chrono::milliseconds min{0};
  std::chrono::milliseconds max{std::chrono::hours(24)};
};

// The duration in milliseconds (rounded to the nearest millisecond). Errors: invalid_input,
// `"<text>" is not a duration (expected e.g. 30s, 5m, 1h; between 1s and 24h)` or `"<text>" is
// out of range (expected between 1s and 24h)` — the caller prefixes the file and key.
Result<std::chrono::milliseconds> parse_duration(std::string_view text, DurationRange range);

// 1h, 5m, 30s, 1m30s, 250ms, 0s: the shortest exact spelling.
std::string format_duration(std::chrono::milliseconds d);

}  // namespace flytecd
