#pragma once

#include "daemon/cli/command.hpp"

namespace flytecd::cli {

// `flytecd get settings`, a subcommand of `get`.
Runner add_get_settings(CLI::App& get);

}  // namespace flytecd::cli
