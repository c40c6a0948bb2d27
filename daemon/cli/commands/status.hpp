#pragma once

// `flytecd status`: the status of a running `flytecd run`, over its HTTP API
// (daemon/cli/remote.hpp).

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/cli/remote.hpp"

namespace flytecd::cli {

// The human summary of a status document (GET /api/v1/status): revision, last sync, drift (the
// first few lines), suspension, leader. Pure.
std::string status_summary(const nlohmann::json& status);
// 0 when the last sync succeeded (also while suspended: its plan pass succeeded), 1 when no
// sync has finished yet, the last one failed or was refused, or the source has an error. Pure.
int status_exit_code(const nlohmann::json& status);

// `flytecd status [-o text|json]`: exit as status_exit_code, 1 when unreachable.
int run_remote_status(const RemoteFlags& flags, const std::string& format, std::ostream& out,
                      std::ostream& err);

}  // namespace flytecd::cli
