#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd {

struct ProcessOutput {
  int exit_code = -1;  // the exit status, or 128+signal when killed by a signal
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] an absolute path) without a shell, with exactly `env` as its environment,
// `input` on stdin, and stdout/stderr captured (each truncated at 1 MiB). The child is killed
// when `timeout` passes. Errors: internal when the process cannot be started, timeout when it
// overran. Thread-safe; does not touch the caller's signal dispositions.
Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const std::string& input,
                                  const std::vector<std::string>& env,
                                  std::chrono::milliseconds timeout);

// The absolute path of an executable found in $PATH (or the default system PATH), if any.
std::optional<std::string> find_executable(const std::string& name);

}  // namespace flytecd
