#pragma once

#include <functional>
#include <optional>
#include <string>

namespace flytecd::run {

// Runs `step` and catches whatever it throws: nullopt when it returned, else what was thrown
// (an exception's what() as UTF-8, or "an unknown exception"). The daemon runs each pass and each
// reload through it, so no exception ends the process.
std::optional<std::string> run_guarded(const std::function<void()>& step);

}  // namespace flytecd::run
