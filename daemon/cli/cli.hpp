#pragma once

namespace flytecd::cli {

// Parses argv and runs one flytecd command; returns the process exit code.
int run(int argc, char** argv);

}  // namespace flytecd::cli
