// `flytecd sync [--wait [--timeout D]]`: asks a running daemon to reconcile now and, with --wait,
// waits for that pass and exits as apply would for it.
#include "daemon/cli/commands/sync.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <thread>

#include "daemon/cli/command.hpp"
#include "daemon/common/duration.hpp"

namespace flytecd::cli {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0) return 0;
  return it->get<uint64_t>();
}

// Why no pass ran for a request that was served.
std::string why_no_pass(const nlohmann::json& s) {
  const auto l = s.value("leader", nlohmann::json());
  if (l.is_object() && l.value("enabled", false) && !l.value("isLeader", false))
    return "this replica is not the leader (" + str(l, "leader") + " reconciles)";
  if (!str(s, "sourceError").empty()) return str(s, "sourceError");
  return "no valid revision is loaded";
}

}  // namespace

std::optional<pass::Verdict> sync_outcome(const nlohmann::json& s, uint64_t request) {
  if (!s.is_object() || number(s, "syncServed") < request) return std::nullopt;
  const auto ls = s.value("lastSync", nlohmann::json());
  if (!ls.is_object() || number(ls, "request") < request)
    return pass::Verdict{1, "not converged: no reconcile ran: " + why_no_pass(s), "not-converged"};
  // The head could not be read or was rejected: the pass reconciled the revision in force, not
  // what was asked for; apply on that head would fail.
  if (!str(s, "sourceError").empty()) {
    std::string line = "not converged: " + str(s, "sourceError");
    const auto rej = s.value("rejectedRevision", nlohmann::json());
    if (rej.is_object() && rej.contains("errors") && rej["errors"].is_array() &&
        !rej["errors"].empty() && rej["errors"][0].is_string())
      line += "; first error: " + rej["errors"][0].get<std::string>();
    return pass::Verdict{1, line, "not-converged"};
  }
  const auto plan = ls.value("plan", nlohmann::json());
  if (!plan.is_object() || !plan.contains("exitCode") || !plan["exitCode"].is_number_integer()) {
    const std::string e = str(ls, "error");
    return pass::Verdict{1, "not converged: " + (e.empty() ? std::string("the pass failed") : e),
                         "not-converged"};
  }
  return pass::Verdict{plan["exitCode"].get<int>(), str(plan, "verdictLine"), str(plan, "verdict")};
}

std::string sync_report(const nlohmann::json& s) {
  const auto ls = s.value("lastSync", nlohmann::json());
  if (!ls.is_object()) return {};
  std::string rev = str(ls, "revision");
  std::string out = "pass of " + (rev.empty() ? std::string("(no revision)") : rev);
  if (!str(s, "subject").empty() && str(s, "revision") == rev)
    out += " (" + str(s, "subject") + ")";
  out += ": " + str(ls, "outcome") + " at " + str(ls, "time") + ", trigger " + str(ls, "reason");
  if (str(ls, "mode") == "plan") out += ", SUSPENDED: planned only";
  out += "\n";
  if (!str(ls, "summary").empty()) out += str(ls, "summary") + "\n";
  return out;
}

int run_remote_sync(const RemoteFlags& flags, const SyncOptions& sync, std::ostream& out,
                    std::ostream& err) {
  auto remote = resolve_remote(flags);
  if (!remote) {
    err << "flytecd sync: " << remote.error().message << "\n";
    return 1;
  }
  auto r = daemon_request(*remote, "POST", "/api/v1/sync");
  if (!r) {
    err << "flytecd sync: " << r.error().message << "\n";
    return 1;
  }
  if (!sync.wait) {
    out << "sync triggered at " << remote->server << " (flytecd status shows the result)\n";
    return 0;
  }
  const uint64_t request = number(*r, "request");
  if (request == 0) {
    err << "flytecd sync --wait: the daemon at " << remote->server
        << " triggered a pass but does not number sync requests (an older flytecd): cannot tell "
           "its pass from an earlier one; use `flytecd status`\n";
    return 1;
  }
  out << "sync request " << request << " accepted at " << remote->server
      << "; waiting for its pass (at most " << format_duration(sync.timeout) << ")\n";
  const auto deadline = Clock::now() + sync.timeout;
  std::string last_error;
  uint64_t served = 0;
  while (true) {
    RemoteOptions ro = *remote;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    ro.timeout = std::max(std::chrono::milliseconds(100), std::min(ro.timeout, left));
    // A daemon that restarts or is briefly slow is asked again until the deadline.
    if (auto st = daemon_request(ro, "GET", "/api/v1/status"); st) {
      last_error.clear();
      served = number(*st, "syncServed");
      if (auto v = sync_outcome(*st, request)) {
        out << sync_report(*st) << v->line << "\n";
        return v->exit_code;
      }
    } else {
      last_error = st.error().message;
    }
    if (Clock::now() + sync.poll >= deadline) break;
    std::this_thread::sleep_for(sync.poll);
  }
  err << "flytecd sync --wait: timed out after " << format_duration(sync.timeout)
      << " waiting for the pass of sync request " << request << " (the daemon has served up to "
      << served << ")" << (last_error.empty() ? "" : "; last error: " + last_error)
      << "; it may still run: `flytecd status` shows it (exit " << k_sync_timeout_exit << ")\n";
  return k_sync_timeout_exit;
}

Runner add_sync_command(CLI::App& app, CommandContext& ctx) {
  struct State {
    SyncOptions options;
    std::string timeout = "5m";
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("sync", "Ask a running daemon to reconcile now");
  ctx.add_remote_options(cmd, true);
  auto* wait =
      cmd->add_flag("--wait", st->options.wait,
                    "Wait for the pass this request starts and exit as apply would for it");
  cmd->add_option("--timeout", st->timeout, "With --wait: how long to wait (default 5m)")
      ->type_name("DURATION")
      ->needs(wait);
  cmd->footer(std::string(k_remote_token_footer) +
              "With --wait the last line is the pass's verdict and the exit code apply's: 0\n"
              "converged, 1 failed, refused, or the new revision was rejected or could not be\n"
              "read; while the daemon is suspended the pass only plans and the exit code is\n"
              "plan --live's (0 no changes, 2 changes pending or drift). 3: no pass finished\n"
              "within --timeout (it may still run).\n"
              "Examples:\n  FLYTECD_SYNC_TOKEN=... flytecd sync\n"
              "  flytecd sync --wait --timeout 2m --config /etc/flytecd/config.yaml\n");
  const RemoteFlags* remote = &ctx.remote;
  return when_parsed(cmd, [st, remote]() -> int {
    auto timeout =
        parse_duration(st->timeout, DurationRange{std::chrono::seconds(1), std::chrono::hours(24)});
    if (!timeout) {
      std::cerr << "flytecd sync: --timeout: " << timeout.error().message << "\n";
      return 1;
    }
    st->options.timeout = *timeout;
    return run_remote_sync(*remote, st->options, std::cout, std::cerr);
  });
}

}  // namespace flytecd::cli
