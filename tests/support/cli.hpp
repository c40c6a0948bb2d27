#pragma once

// The flytecd binary run once as a command: `flytecd ARGS` through the shell, its standard output
// and error together, and its exit code.

#include <stdio.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <string>

#include "test_paths.hpp"

namespace flytecd_test {

struct CliRun {
  int rc = -1;  // the exit code; -1 when it did not exit (a signal)
  std::string output;
};

// `args` is a shell command line (quote what needs it).
inline CliRun run_cli(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(FLYTECD_BINARY) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace flytecd_test
