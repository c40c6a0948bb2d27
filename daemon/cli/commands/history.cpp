// `flytecd history`: what each reconcile changed, refused or failed, newest first, from the
// ledger or a running daemon's GET /api/v1/history.
#include <CLI/CLI.hpp>

#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/cli/remote.hpp"
#include "daemon/common/http/client.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/pass/views.hpp"
#include "daemon/wiring/target_identity.hpp"

namespace flytecd::cli {

namespace {

// GET /api/v1/history of a running daemon, back into entries (for the same text view).
std::vector<ledger::HistoryEntry> entries_of(const nlohmann::json& j) {
  std::vector<ledger::HistoryEntry> out;
  if (!j.is_array()) return out;
  auto text = [](const nlohmann::json& o, const char* k) {
    return o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : std::string();
  };
  auto seconds = [&](const nlohmann::json& o, const char* k) -> int64_t {
    const std::string t = text(o, k);
    std::tm tm{};
    if (t.empty() || !strptime(t.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
    return static_cast<int64_t>(timegm(&tm));
  };
  for (const auto& e : j) {
    ledger::HistoryEntry h;
    h.id = e.value("id", int64_t{0});
    h.started_at = seconds(e, "time");
    h.revision = text(e, "revision");
    h.subject = text(e, "subject");
    h.author = text(e, "author");
    h.committed_at = seconds(e, "committedAt");
    h.trigger = text(e, "trigger");
    h.outcome = text(e, "outcome");
    h.detail = text(e, "detail");
    h.noops = e.value("noopPassesAfter", int64_t{0});
    if (e.contains("steps") && e["steps"].is_array())
      for (const auto& st : e["steps"])
        h.step_list.push_back(ledger::HistoryStep{
            text(st, "action"), text(st, "key"), text(st, "outcome"), text(st, "message"),
            st.contains("changes") ? dump_json(st["changes"]) : std::string()});
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace

namespace {

// The ledger `history` reads: the configured target's (target_identity), else — when the state
// directory holds the ledger of exactly one target — that one.
Result<std::string> history_ledger(const config::Config& cfg) {
  std::error_code ec;
  const auto own = wiring::target_dir(cfg) / "ledger.db";
  if (std::filesystem::exists(own, ec)) return own.string();
  const auto legacy = std::filesystem::path(cfg.state_dir) / "ledger.db";
  const auto known = wiring::known_targets(cfg.state_dir);
  if (known.size() == 1) return (known.front().second / "ledger.db").string();
  if (known.empty() && std::filesystem::exists(legacy, ec)) return legacy.string();
  if (known.empty())
    return make_error(ErrorCode::not_found,
                      "no ledger at " + cfg.state_dir +
                          ": nothing was applied from this state directory (--state-dir, or "
                          "stateDir in --config)");
  std::string ids;
  for (const auto& [id, dir] : known) ids += (ids.empty() ? "" : ", ") + id;
  return make_error(ErrorCode::invalid_input,
                    "state directory " + cfg.state_dir + " holds the ledgers of " +
                        std::to_string(known.size()) + " targets (" + ids + "), none of them " +
                        wiring::target_identity(cfg).id +
                        ": say which with --config or --admin-endpoint");
}

}  // namespace

int run_history(const TargetOptions& opt, const ledger::HistoryQuery& query,
                const std::string& domain, const std::string& server, const std::string& format,
                std::ostream& out, std::ostream& err) {
  const pass::PassScope scope{domain.empty() ? "" : query.project, domain};
  if (!server.empty()) {
    RemoteOptions remote;
    remote.server = server;
    std::string path = "/api/v1/history?limit=" + std::to_string(query.limit);
    if (!query.project.empty()) path += "&project=" + http::url_encode(query.project);
    if (!query.object.empty()) path += "&object=" + http::url_encode(query.object);
    auto j = daemon_request(remote, "GET", path);
    if (!j) {
      err << "flytecd history: " << j.error().message << "\n";
      return 1;
    }
    auto entries = entries_of(*j);
    pass::narrow(scope, entries);
    if (format == "json")
      out << dump_json(
                 (scope.empty() ? *j
                                : nlohmann::json::parse(dump_json(pass::history_json(entries)))),
                 2)
          << "\n";
    else
      out << pass::history_text(entries);
    return 0;
  }
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd history: " << cfg.error().message << "\n";
    return 1;
  }
  // The configured target's ledger; with only --state-dir, the one target it holds.
  auto path = history_ledger(*cfg);
  if (!path) {
    err << "flytecd history: " << path.error().message << "\n";
    return 1;
  }
  auto ledger = ledger::Ledger::open(*path);
  if (!ledger) {
    err << "flytecd history: " << ledger.error().message << "\n";
    return 1;
  }
  auto entries = (*ledger)->history(query);
  if (!entries) {
    err << "flytecd history: " << entries.error().message << "\n";
    return 1;
  }
  pass::narrow(scope, *entries);
  if (format == "json")
    out << dump_json(pass::history_json(*entries), 2) << "\n";
  else
    out << pass::history_text(*entries);
  return 0;
}

Runner add_history_command(CLI::App& app, CommandContext&) {
  struct State {
    TargetOptions target;
    ledger::HistoryQuery query;
    std::string domain, server, format = "text";
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand(
      "history", "What each reconcile changed (field by field), refused or failed, newest first");
  cmd->add_option("--config", st->target.config_file, "flytecd config file (YAML)");
  cmd->add_option("--state-dir", st->target.state_dir, "The state directory whose ledger to read");
  cmd->add_option("--object", st->query.object,
                  "Only passes touching this object key (or a key prefix ending in /)");
  add_scope_options(cmd, st->query.project, st->domain);
  cmd->add_option("--limit", st->query.limit, "At most this many passes (default 20)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--server", st->server,
                  "Ask a running daemon instead of reading the ledger (e.g. "
                  "http://127.0.0.1:8080)");
  cmd->add_option("-o,--output", st->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->footer(
      "Examples:\n  flytecd history --config /etc/flytecd/config.yaml --project flytesnacks\n"
      "  flytecd history --state-dir state/ --object override/ml-training/ -o json\n"
      "A running daemon serves the same as GET /api/v1/history?project=P&object=K&limit=N.\n");
  return when_parsed(cmd, [st]() -> int {
    return run_history(st->target, st->query, st->domain, st->server, st->format, std::cout,
                       std::cerr);
  });
}

}  // namespace flytecd::cli
