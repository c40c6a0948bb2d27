#pragma once

// One entity file of a pyflyte package decoded and checked: its kind from the _1/_2/_3 suffix (or,
// without one, each kind tried as flytectl does), the decode bounded before it runs, the
// identifier and its resource type required. The archive reader (package.cpp) calls this per
// member.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/common/result.hpp"
#include "daemon/registration/package.hpp"

namespace flytecd::registration {

// How decoding is bounded: before any decode, the wire format is walked (estimate_decode) and
// the estimate checked against `max_bytes`, then reserved with `reserve` (the caller's budget).
struct DecodeGuard {
  uint64_t max_bytes = k_default_memory_budget_bytes;
  std::string max_key = "packages.memoryBudgetBytes";
  std::function<Status(uint64_t estimate)> reserve;  // may be empty
};

// The guard a reader's limits give: the budget's capacity and key, else max_decoded_bytes.
DecodeGuard guard_for(const ReaderLimits& limits);

// The `_N.pb` suffix pyflyte writes (flytectl's `^.*_([1-3])\.pb$`), or nullopt.
std::optional<EntityKind> kind_from_suffix(std::string_view path);

// invalid_input naming the archive, the member (made printable) and what is wrong with it.
Error invalid_member(const std::string& name, std::string_view member, std::string_view what);

// Member `path` of archive `name`, its bytes `data`, as an entity. invalid_input names the member
// and what was expected; a decode over the guard's bound is refused before it runs.
Result<Entity> decode_entity(const std::string& name, const std::string& path,
                             std::string_view data, const DecodeGuard& guard);

}  // namespace flytecd::registration
