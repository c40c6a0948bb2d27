#include "sinks/emulator/faults.hpp"
#include "daemon/common/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <utility>

namespace flytecd::sinks::emulator {
namespace {

// Index = numeric gRPC status code.
constexpr std::array<std::string_view, 17> k_code_names = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

Error bad(const std::string& spec, const std::string& why) {
  return make_error(ErrorCode::invalid_input, "emulator: fault \"" + spec + "\": " + why);
}

Result<int> parse_int(std::string_view text) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return make_error(ErrorCode::invalid_input, "not an integer: \"" + std::string(text) + "\"");
  }
  return v;
}

// "200ms", "2s", "150" (milliseconds).
Result<int> parse_latency(std::string text) {
  int scale = 1;
  if (text.size() > 2 && text.ends_with("ms")) {
    text.resize(text.size() - 2);
  } else if (text.size() > 1 && text.ends_with("s")) {
    text.resize(text.size() - 1);
    scale = 1000;
  }
  auto v = parse_int(text);
  if (!v) return v.error();
  if (*v < 0 || *v > 3'600'000 / scale) {
    return make_error(ErrorCode::invalid_input, "latency out of range");
  }
  return *v * scale;
}

Status apply_option(FaultRule& rule, const std::string& key, const std::string& value,
                    const std::string& spec) {
  if (key == "rate") {
    try {
      size_t used = 0;
      double r = std::stod(value, &used);
      if (used != value.size() || !(r >= 0.0 && r <= 1.0)) throw std::invalid_argument("range");
      rule.error_rate = r;
    } catch (const std::exception&) {
      return bad(spec, "rate must be a number in [0,1], got \"" + value + "\"");
    }
  } else if (key == "code") {
    if (!grpc_code_from_name(value) || upper(value) == "OK") {
      return bad(spec, "unknown gRPC code \"" + value + "\"");
    }
    rule.code = upper(value);
  } else if (key == "latency") {
    auto ms = parse_latency(value);
    if (!ms) return bad(spec, "latency: " + ms.error().message);
    rule.latency_ms = *ms;
  } else if (key == "after") {
    auto n = parse_int(value);
    if (!n || *n < 0) return bad(spec, "after must be an integer >= 0, got \"" + value + "\"");
    rule.fail_after_calls = *n;
  } else if (key == "drop") {
    if (value != "true" && value != "false" && value != "1" && value != "0") {
      return bad(spec, "drop must be true or false");
    }
    rule.drop_response = value == "true" || value == "1";
  } else {
    return bad(spec, "unknown key \"" + key + "\" (expected rate, code, latency, after, drop)");
  }
  return ok_status();
}

bool matches(const FaultRule& rule, std::string_view method) {
  return rule.method == "*" || rule.method == method ||
         (rule.method == "writes" && is_write_method(method));
}

}  // namespace

bool is_write_method(std::string_view m) {
  return m.starts_with("Create") || m.starts_with("Update") || m.starts_with("Delete") ||
         m.starts_with("Register");
}

std::optional<int> grpc_code_from_name(std::string_view name) {
  const std::string u = upper(std::string(name));
  for (size_t i = 0; i < k_code_names.size(); ++i) {
    if (k_code_names[i] == u) return static_cast<int>(i);
  }
  return std::nullopt;
}

Result<FaultRule> parse_fault(const std::string& spec) {
  FaultRule rule;
  const auto colon = spec.find(':');
  rule.method = text::trim(std::string_view(spec).substr(0, colon));
  if (rule.method.empty()) return bad(spec, "missing method (RPC name, \"*\" or \"writes\")");
  for (char c : rule.method) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && rule.method != "*") {
      return bad(spec, "method must be an RPC name, \"*\" or \"writes\"");
    }
  }
  if (colon != std::string::npos) {
    std::string_view rest = std::string_view(spec).substr(colon + 1);
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string item(text::trim(rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string::npos) return bad(spec, "expected key=value, got \"" + item + "\"");
      auto st = apply_option(rule, std::string(text::trim(std::string_view(item).substr(0, eq))),
                             std::string(text::trim(std::string_view(item).substr(eq + 1))), spec);
      if (!st) return st.error();
    }
  }
  if (rule.error_rate == 0 && rule.latency_ms == 0 && rule.fail_after_calls < 0) {
    return bad(spec, "rule has no effect (set rate, latency or after)");
  }
  return rule;
}

Result<std::vector<FaultRule>> parse_faults(const std::string& specs) {
  std::vector<FaultRule> rules;
  std::string_view rest = specs;
  while (!rest.empty()) {
    const auto semi = rest.find(';');
    const std::string item(text::trim(rest.substr(0, semi)));
    rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
    if (item.empty()) continue;
    auto rule = parse_fault(item);
    if (!rule) return rule.error();
    rules.push_back(std::move(*rule));
  }
  return rules;
}

FaultInjector::FaultInjector(uint64_t seed) : m_rng(seed) {}

void FaultInjector::set(std::vector<FaultRule> rules) {
  std::lock_guard<std::mutex> lock(m_mu);
  m_entries.clear();
  for (auto& r : rules) m_entries.push_back(Entry{std::move(r), 0});
}

FaultDecision FaultInjector::decide(std::string_view method) {
  std::lock_guard<std::mutex> lock(m_mu);
  FaultDecision d;
  for (auto& e : m_entries) {
    if (!matches(e.rule, method)) continue;
    ++e.matched;
    d.latency_ms += e.rule.latency_ms;
    if (d.fail_code) continue;
    bool fail =
        e.rule.fail_after_calls >= 0 && e.matched > static_cast<uint64_t>(e.rule.fail_after_calls);
    if (!fail && e.rule.error_rate > 0) {
      // Draw only for rate rules so that adding a latency rule does not shift the sequence.
      fail = std::uniform_real_distribution<double>(0.0, 1.0)(m_rng) < e.rule.error_rate;
    }
    if (fail) {
      d.fail_code = grpc_code_from_name(e.rule.code).value_or(14);
      d.drop_response = e.rule.drop_response;
      d.rule = e.rule.method;
    }
  }
  return d;
}

}  // namespace flytecd::sinks::emulator
