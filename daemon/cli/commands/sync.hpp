#pragma once

// `flytecd sync --wait [--timeout D]`: asks a running daemon for a pass and waits for that pass —
// not one that was already running — then ends with its verdict line and the exit code `apply`
// gives for it (like `flux reconcile … --with-source` and `argocd app wait`).

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/cli/remote.hpp"
#include "daemon/pass/views.hpp"

namespace flytecd::cli {

// Exit code of `sync --wait` when the pass has not finished within --timeout.
inline constexpr int k_sync_timeout_exit = 3;

struct SyncOptions {
  bool wait = false;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds poll{500};
};

// What became of sync request `request` according to a status document (GET /api/v1/status):
// nullopt while no pass has served it (syncServed < request). Served: the verdict of the pass
// that started after the request (lastSync.plan's verdict, verdictLine and exitCode: apply's in
// execute mode, plan's while the daemon is suspended), exit 1 when that pass was abandoned, when
// no pass ran for it (a follower, no valid revision) or when the source's head was rejected or
// could not be read (the pass reconciled an older revision). Pure.
std::optional<pass::Verdict> sync_outcome(const nlohmann::json& status, uint64_t request);

// The lines before the verdict: which pass served the request (revision, trigger, mode) and its
// summary. Pure.
std::string sync_report(const nlohmann::json& status);

// `flytecd sync [--wait [--timeout D]]`: 0 accepted (without --wait); with --wait the served
// pass's exit code, k_sync_timeout_exit when it did not finish in time; 1 when the daemon cannot
// be reached or refuses.
int run_remote_sync(const RemoteFlags& flags, const SyncOptions& sync, std::ostream& out,
                    std::ostream& err);

}  // namespace flytecd::cli
