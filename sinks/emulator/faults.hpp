#pragma once

// Fault injection for the emulator's RPCs (internal to sinks/emulator).

#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "sinks/emulator/emulator.hpp"

namespace flytecd::sinks::emulator {

// True for Create*/Update*/Delete*/Register* RPC names (the "writes" fault selector).
bool is_write_method(std::string_view method);

// Numeric gRPC status code for a canonical name ("UNAVAILABLE", any case); nullopt if unknown.
std::optional<int> grpc_code_from_name(std::string_view name);

// What to do with one call.
struct FaultDecision {
  int latency_ms = 0;
  std::optional<int> fail_code;  // numeric gRPC code of the injected failure
  bool drop_response = false;    // run the call, then fail with fail_code anyway
  std::string rule;              // the method selector of the rule that failed the call
};

// Decides per call from the current rules. Thread-safe; deterministic for a given seed and
// call order.
class FaultInjector {
 public:
  explicit FaultInjector(uint64_t seed);
  // Replaces the rules and resets their per-rule call counters.
  void set(std::vector<FaultRule> rules);
  FaultDecision decide(std::string_view method);

 private:
  struct Entry {
    FaultRule rule;
    uint64_t matched = 0;
  };
  std::mutex m_mu;
  std::vector<Entry> m_entries;
  std::mt19937_64 m_rng;
};

}  // namespace flytecd::sinks::emulator
