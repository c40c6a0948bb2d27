#include "daemon/common/duration.hpp"

#include <cmath>

#include "daemon/common/scan.hpp"

namespace flytecd {
namespace {

std::string between(DurationRange r) {
  return "between " + format_duration(r.min) + " and " + format_duration(r.max);
}

}  // namespace

Result<std::chrono::milliseconds> parse_duration(std::string_view text, DurationRange range) {
  const auto not_a_duration = [&] {
    return make_error(ErrorCode::invalid_input,
                      "\"" + scan::printable(text, 40) +
                          "\" is not a duration (expected e.g. 30s, 5m, 1h; " + between(range) +
                          ")");
  };
  const auto out_of_range = [&] {
    return make_error(
        ErrorCode::invalid_input,
        "\"" + scan::printable(text, 40) + "\" is out of range (expected " + between(range) + ")");
  };
  // One or more of: digits [ "." digits ] unit — "1h30m" as Go's time.ParseDuration reads it —
  // or a bare number of seconds alone.
  double total = 0;  // milliseconds
  std::size_t i = 0;
  while (i < text.size() || i == 0) {
    const std::size_t start = i;
    while (i < text.size() && scan::is_digit(text[i])) ++i;
    const std::size_t whole_end = i;
    std::size_t frac_end = i;
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && scan::is_digit(text[i])) ++i;
      frac_end = i;
    }
    if (whole_end == start && frac_end <= whole_end + 1) return not_a_duration();
    std::size_t unit_end = frac_end;
    while (unit_end < text.size() && !scan::is_digit(text[unit_end]) && text[unit_end] != '.')
      ++unit_end;
    const std::string_view unit = text.substr(frac_end, unit_end - frac_end);
    double per_unit = 0;
    if (unit == "ms")
      per_unit = 1;
    else if (unit == "s" || (unit.empty() && start == 0 && unit_end == text.size()))
      per_unit = 1000;
    else if (unit == "m")
      per_unit = 60'000;
    else if (unit == "h")
      per_unit = 3'600'000;
    else
      return not_a_duration();
    // Past 15 significant whole digits every unit is beyond any range (and beyond double's
    // exact integers): out of range, never an overflow.
    std::size_t first = start;
    while (first + 1 < whole_end && text[first] == '0') ++first;
    if (whole_end - first > 15) return out_of_range();
    double value = 0;
    for (std::size_t k = first; k < whole_end; ++k) value = value * 10 + (text[k] - '0');
    double scale = 0.1;
    for (std::size_t k = whole_end + 1; k < frac_end && k < whole_end + 1 + 9; ++k) {
      value += (text[k] - '0') * scale;
      scale /= 10;
    }
    total += value * per_unit;
    i = unit_end;
  }
  const double ms = std::round(total);
  if (!(ms >= static_cast<double>(range.min.count())) ||
      !(ms <= static_cast<double>(range.max.count())))
    return out_of_range();
  return std::chrono::milliseconds(static_cast<long long>(ms));
}

std::string format_duration(std::chrono::milliseconds d) {
  long long ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  const long long h = ms / 3'600'000, m = ms / 60'000 % 60, s = ms / 1000 % 60, rest = ms % 1000;
  if (h) out += std::to_string(h) + "h";
  if (m) out += std::to_string(m) + "m";
  if (s) out += std::to_string(s) + "s";
  if (rest) out += std::to_string(rest) + "ms";
  return out;
}

}  // namespace flytecd
