// `flytecd status`: a running daemon's status (GET /api/v1/status): revision, last sync, drift,
// suspension and leader.
#include "daemon/cli/commands/status.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/reconcile/diff.hpp"

namespace flytecd::cli {
namespace {

constexpr size_t k_drift_lines = 5;

}  // namespace

std::string status_summary(const nlohmann::json& s) {
  std::string out;
  const auto line = [&](const std::string& k, const std::string& v) {
    out += k + std::string(k.size() < 12 ? 12 - k.size() : 1, ' ') + v + "\n";
  };
  if (auto sp = s.find("suspended"); sp != s.end() && sp->is_object()) {
    std::string v = "SUSPENDED since " + str(*sp, "since") + " by " + str(*sp, "by");
    if (!str(*sp, "reason").empty()) v += ": " + str(*sp, "reason");
    line("suspended:", v + " (planning only, nothing is written)");
  } else {
    line("suspended:", "no");
  }
  if (auto sp = s.find("suspendedProjects"); sp != s.end() && sp->is_array() && !sp->empty()) {
    for (const auto& p : *sp) {
      if (!p.is_object()) continue;
      std::string v = str(p, "project") + " since " + str(p, "since") + " by " + str(p, "by");
      if (!str(p, "reason").empty()) v += ": " + str(p, "reason");
      line("suspended project:", v + " (planned only, nothing of it is written)");
    }
  }
  std::string rev = str(s, "revision");
  if (!str(s, "subject").empty()) rev += " (" + str(s, "subject") + ")";
  line("revision:", rev.empty() ? "none loaded yet" : rev);
  if (!str(s, "source").empty()) line("source:", str(s, "source"));
  if (!str(s, "target").empty()) line("target:", str(s, "target"));
  if (auto ls = s.find("lastSync"); ls != s.end() && ls->is_object()) {
    std::string v = str(*ls, "outcome") + " at " + str(*ls, "time") + " (" + str(*ls, "reason");
    if (str(*ls, "mode") == "plan") v += ", planned only";
    line("last sync:", v + ")");
    if (!str(*ls, "summary").empty()) line("summary:", str(*ls, "summary"));
    if (!str(*ls, "error").empty()) line("error:", str(*ls, "error"));
  } else {
    line("last sync:", "none finished yet");
  }
  if (!str(s, "lastError").empty()) line("last error:", str(s, "lastError"));
  if (!str(s, "sourceError").empty()) line("source:", "ERROR " + str(s, "sourceError"));
  const auto drift = s.value("drift", nlohmann::json::array());
  line("drift:", drift.is_array() ? std::to_string(drift.size()) + " object(s)" : "?");
  if (drift.is_array()) {
    for (size_t i = 0; i < drift.size() && i < k_drift_lines; ++i) {
      std::string d = "  " + str(drift[i], "key") + ": " + str(drift[i], "detail");
      for (const auto& c : drift[i].value("changes", nlohmann::json::array())) {
        if (!c.is_object()) continue;
        d += "; " + reconcile::change_line(reconcile::change_from_json(c));
      }
      out += d + "\n";
    }
    if (drift.size() > k_drift_lines)
      out += "  … and " + std::to_string(drift.size() - k_drift_lines) + " more (-o json)\n";
  }
  const auto l = s.value("leader", nlohmann::json());
  if (l.is_object() && l.value("enabled", false)) {
    std::string v = l.value("isLeader", false) ? "this replica (" + str(l, "identity") + ")"
                                               : "another replica: " + str(l, "leader");
    if (!str(l, "error").empty()) v += "; error: " + str(l, "error");
    line("leader:", v);
  } else {
    line("leader:", "no leader election (this replica reconciles)");
  }
  return out;
}

int status_exit_code(const nlohmann::json& s) {
  auto ls = s.find("lastSync");
  if (ls == s.end() || !ls->is_object()) return 1;
  if (str(*ls, "outcome") != "success") return 1;
  if (!str(s, "sourceError").empty()) return 1;
  return 0;
}

int run_remote_status(const RemoteFlags& flags, const std::string& format, std::ostream& out,
                      std::ostream& err) {
  auto remote = resolve_remote(flags);
  if (!remote) {
    err << "flytecd status: " << remote.error().message << "\n";
    return 1;
  }
  auto st = daemon_request(*remote, "GET", "/api/v1/status");
  if (!st) {
    err << "flytecd status: " << st.error().message << "\n";
    return 1;
  }
  if (format == "json")
    out << dump_json(*st, 2) << "\n";
  else
    out << status_summary(*st);
  return status_exit_code(*st);
}

Runner add_status_command(CLI::App& app, CommandContext& ctx) {
  auto format = std::make_shared<std::string>("text");
  auto* cmd = app.add_subcommand("status", "Show a running daemon's status (GET /api/v1/status)");
  ctx.add_remote_options(cmd, false);
  cmd->add_option("-o,--output", *format, "text or json (the raw document)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->footer(
      "Prints the revision, the last sync (outcome, summary, error), drift, suspension and "
      "leader.\n"
      "Exit codes: 0 the last sync succeeded (also while suspended), 1 the daemon is unreachable,\n"
      "no sync has finished yet, or the last one failed or was refused.\n"
      "Examples:\n"
      "  flytecd status --config /etc/flytecd/config.yaml\n"
      "  flytecd status --server http://127.0.0.1:8080 -o json | jq .drift\n");
  const RemoteFlags* remote = &ctx.remote;
  return when_parsed(cmd, [format, remote]() -> int {
    return run_remote_status(*remote, *format, std::cout, std::cerr);
  });
}

}  // namespace flytecd::cli
