#include "sinks/emulator/cron.hpp"

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "sinks/emulator/admin_common.hpp"

namespace flytecd::sinks::emulator::detail {
namespace {

struct Bounds {
  unsigned min;
  unsigned max;
  const std::map<std::string, unsigned>* names;
};

const std::map<std::string, unsigned> k_months = {
    {"jan", 1}, {"feb", 2}, {"mar", 3}, {"apr", 4},  {"may", 5},  {"jun", 6},
    {"jul", 7}, {"aug", 8}, {"sep", 9}, {"oct", 10}, {"nov", 11}, {"dec", 12}};
const std::map<std::string, unsigned> k_days = {{"sun", 0}, {"mon", 1}, {"tue", 2}, {"wed", 3},
                                                {"thu", 4}, {"fri", 5}, {"sat", 6}};

std::string atoi_quote(const std::string& s) { return "\"" + s + "\""; }

std::vector<std::string> split(const std::string& s, char sep) {  // strings.Split
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

std::vector<std::string> fields_of(const std::string& s) {  // strings.Fields
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// strconv.Atoi, then robfig's mustParseInt (non-negative).
std::optional<std::string> parse_uint(const std::string& expr, unsigned& out) {
  size_t i = 0;
  bool negative = false;
  if (i < expr.size() && (expr[i] == '+' || expr[i] == '-')) negative = expr[i++] == '-';
  if (i == expr.size()) {
    return "failed to parse int from " + expr + ": strconv.Atoi: parsing " + atoi_quote(expr) +
           ": invalid syntax";
  }
  uint64_t v = 0;
  bool overflow = false;
  for (; i < expr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(expr[i]))) {
      return "failed to parse int from " + expr + ": strconv.Atoi: parsing " + atoi_quote(expr) +
             ": invalid syntax";
    }
    v = v * 10 + static_cast<uint64_t>(expr[i] - '0');
    if (v > (uint64_t{1} << 63)) overflow = true;
  }
  if (overflow || (!negative && v > (uint64_t{1} << 63) - 1)) {
    return "failed to parse int from " + expr + ": strconv.Atoi: parsing " + atoi_quote(expr) +
           ": value out of range";
  }
  if (negative && v != 0) {
    return "negative number (-" + std::to_string(v) + ") not allowed: " + expr;
  }
  out = v > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<unsigned>(v);
  return std::nullopt;
}

std::optional<std::string> parse_int_or_name(const std::string& expr, const Bounds& b,
                                             unsigned& out) {
  if (b.names != nullptr) {
    std::string lower = expr;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (auto it = b.names->find(lower); it != b.names->end()) {
      out = it->second;
      return std::nullopt;
    }
  }
  return parse_uint(expr, out);
}

// getRange: number | number "-" number [ "/" number ], or '*' / '?'.
std::optional<std::string> check_range(const std::string& expr, const Bounds& b) {
  const auto range_and_step = split(expr, '/');
  const auto low_and_high = split(range_and_step[0], '-');
  const bool single = low_and_high.size() == 1;
  unsigned start = 0, end = 0, step = 1;
  if (low_and_high[0] == "*" || low_and_high[0] == "?") {
    start = b.min;
    end = b.max;
  } else {
    if (auto e = parse_int_or_name(low_and_high[0], b, start)) return e;
    if (low_and_high.size() == 1) {
      end = start;
    } else if (low_and_high.size() == 2) {
      if (auto e = parse_int_or_name(low_and_high[1], b, end)) return e;
    } else {
      return "too many hyphens: " + expr;
    }
  }
  if (range_and_step.size() == 2) {
    if (auto e = parse_uint(range_and_step[1], step)) return e;
    if (single) end = b.max;  // "N/step" means "N-max/step"
  } else if (range_and_step.size() > 2) {
    return "too many slashes: " + expr;
  }
  if (start < b.min) {
    return "beginning of range (" + std::to_string(start) + ") below minimum (" +
           std::to_string(b.min) + "): " + expr;
  }
  if (end > b.max) {
    return "end of range (" + std::to_string(end) + ") above maximum (" + std::to_string(b.max) +
           "): " + expr;
  }
  if (start > end) {
    return "beginning of range (" + std::to_string(start) + ") beyond end of range (" +
           std::to_string(end) + "): " + expr;
  }
  if (step == 0) return "step of range should be a positive number: " + expr;
  return std::nullopt;
}

std::optional<std::string> check_field(const std::string& field, const Bounds& b) {
  for (const auto& expr : split(field, ',')) {
    if (expr.empty()) continue;  // strings.FieldsFunc drops empty pieces
    if (auto e = check_range(expr, b)) return e;
  }
  return std::nullopt;
}

// time.ParseDuration's accept/refuse and messages.
std::optional<std::string> duration_error(const std::string& orig) {
  static const std::map<std::string, int> k_units = {{"ns", 1},        {"us", 1}, {"\xc2\xb5s", 1},
                                                     {"\xce\xbcs", 1}, {"ms", 1}, {"s", 1},
                                                     {"m", 1},         {"h", 1}};
  const std::string invalid = "time: invalid duration " + atoi_quote(orig);
  std::string s = orig;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.erase(0, 1);
  if (s == "0") return std::nullopt;
  if (s.empty()) return invalid;
  size_t i = 0;
  while (i < s.size()) {
    const size_t digits_begin = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    bool any = i > digits_begin;
    if (i < s.size() && s[i] == '.') {
      ++i;
      const size_t frac_begin = i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      any = any || i > frac_begin;
    }
    if (!any) return invalid;
    const size_t unit_begin = i;
    while (i < s.size() && s[i] != '.' && !std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == unit_begin) return "time: missing unit in duration " + atoi_quote(orig);
    const std::string unit = s.substr(unit_begin, i - unit_begin);
    if (!k_units.count(unit)) {
      return "time: unknown unit " + atoi_quote(unit) + " in duration " + atoi_quote(orig);
    }
  }
  return std::nullopt;
}

std::optional<std::string> descriptor_error(const std::string& spec) {
  for (const char* d :
       {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}) {
    if (spec == d) return std::nullopt;
  }
  const std::string every = "@every ";
  if (spec.rfind(every, 0) == 0) {
    if (auto e = duration_error(spec.substr(every.size()))) {
      return "failed to parse duration " + spec + ": " + *e;
    }
    return std::nullopt;
  }
  return "unrecognized descriptor: " + spec;
}

bool known_zone(const std::string& name) {
  if (name.empty() || name == "UTC" || name == "Local") return true;
  if (name.front() == '/' || name.find("..") != std::string::npos) return false;
  std::error_code ec;
  return std::filesystem::is_regular_file("/usr/share/zoneinfo/" + name, ec);
}

}  // namespace

std::string cron_parse_error(const std::string& input) {
  if (input.empty()) return "empty spec string";
  std::string spec = input;
  if (spec.rfind("TZ=", 0) == 0 || spec.rfind("CRON_TZ=", 0) == 0) {
    const size_t eq = spec.find('=');
    const size_t space = spec.find(' ');
    const std::string zone =
        spec.substr(eq + 1, space == std::string::npos ? std::string::npos : space - eq - 1);
    if (space == std::string::npos || !known_zone(zone)) {
      return "provided bad location " + zone + ": unknown time zone " + zone;
    }
    spec = spec.substr(space);
    const auto b = spec.find_first_not_of(" \t\r\n\v\f");
    spec =
        b == std::string::npos ? "" : spec.substr(b, spec.find_last_not_of(" \t\r\n\v\f") - b + 1);
  }
  if (!spec.empty() && spec[0] == '@') return descriptor_error(spec).value_or("");
  const auto fields = fields_of(spec);
  if (fields.size() != 5) {
    return "expected exactly 5 fields, found " + std::to_string(fields.size()) + ": " +
           go_list(fields);
  }
  const Bounds bounds[5] = {
      {0, 59, nullptr}, {0, 23, nullptr}, {1, 31, nullptr}, {1, 12, &k_months}, {0, 6, &k_days}};
  for (size_t i = 0; i < 5; ++i) {
    if (auto e = check_field(fields[i], bounds[i])) return *e;
  }
  return "";
}

}  // namespace flytecd::sinks::emulator::detail
