#pragma once

// `flytecd suspend` / `flytecd resume`: a running `flytecd run` stops (or starts again) writing,
// over its HTTP API (daemon/cli/remote.hpp).

#include <ostream>
#include <string>

#include "daemon/cli/remote.hpp"

namespace flytecd::cli {

// `flytecd suspend [--reason R]` / `flytecd resume`: 0 done, 1 otherwise. With `project`, only
// that project's writes are suspended (resumed); other projects still apply.
int run_remote_suspend(const RemoteFlags& flags, bool suspend, const std::string& reason,
                       std::ostream& out, std::ostream& err, const std::string& project = "");

}  // namespace flytecd::cli
