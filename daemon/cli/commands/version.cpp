// `flytecd version`: this client's version, the running daemon's and FlyteAdmin's
// (GetVersion); each remote part optional.
#include "daemon/cli/commands/version.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

#include "daemon/cli/command.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/wiring/wiring.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"

namespace flytecd::cli {
namespace {

VersionPart flyteadmin_version(const config::Config& cfg) {
  VersionPart p{"flyteadmin", cfg.admin.endpoint, "", "", "", "", ""};
  if (cfg.admin.endpoint.empty()) {
    p.error = "no FlyteAdmin endpoint configured (the target is the embedded emulator, flytecd " +
              std::string(FLYTECD_VERSION) + "; --admin-endpoint or --config to ask a FlyteAdmin)";
    return p;
  }
  // One quick attempt: `version` answers for what can be reached now, it does not wait it out.
  auto admin = cfg.admin;
  admin.max_retries = 0;
  admin.per_rpc_timeout_ms = std::min(admin.per_rpc_timeout_ms, 5000);
  auto sink = wiring::make_admin_sink(admin, "version");
  if (!sink) {
    p.error = sink.error().message;
    return p;
  }
  auto v = (*sink)->server_version_info();
  if (!v) {
    p.error = v.error().message;
    return p;
  }
  p.version = v->version;
  p.build = v->build;
  p.build_time = v->build_time;
  return p;
}

}  // namespace

VersionPart daemon_version(const nlohmann::json& s, const std::string& server) {
  VersionPart p{"daemon", server, json_string(s, "version"), "", "", "", ""};
  if (p.version.empty()) p.error = "the daemon does not report its version (an older flytecd)";
  const std::string target = json_string(s, "target");
  if (!target.empty())
    p.detail = "target " + target + (s.value("targetIsEmulator", false) ? " (emulator)" : "");
  return p;
}

std::string version_text(const std::vector<VersionPart>& parts) {
  std::string out;
  for (const auto& p : parts) {
    std::string line = p.name + ":";
    line += std::string(line.size() < 12 ? 12 - line.size() : 1, ' ');
    if (!p.error.empty()) {
      line += "unknown" + (p.where.empty() ? std::string() : " at " + p.where) + ": " + p.error;
    } else {
      line += (p.name == "flyteadmin" ? "" : "flytecd ") + p.version;
      if (!p.build.empty())
        line +=
            " (build " + p.build + (p.build_time.empty() ? "" : ", built " + p.build_time) + ")";
      if (!p.where.empty()) line += " at " + p.where;
      if (!p.detail.empty()) line += "; " + p.detail;
    }
    out += line + "\n";
  }
  return out;
}

nlohmann::ordered_json version_json(const std::vector<VersionPart>& parts) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& p : parts) {
    nlohmann::ordered_json o;
    o["version"] = p.version.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(p.version);
    if (!p.where.empty()) o["at"] = p.where;
    if (!p.build.empty()) o["build"] = p.build;
    if (!p.build_time.empty()) o["buildTime"] = p.build_time;
    if (!p.detail.empty()) o["detail"] = p.detail;
    o["reachable"] = p.error.empty();
    if (!p.error.empty()) o["error"] = p.error;
    j[p.name] = std::move(o);
  }
  return j;
}

int run_version(const RemoteFlags& remote, const TargetOptions& target, bool client_only,
                const std::string& format, std::ostream& out, std::ostream& err) {
  std::vector<VersionPart> parts{{"client", "", FLYTECD_VERSION, "", "", "", ""}};
  if (!client_only) {
    auto r = resolve_remote(remote);
    if (!r) {
      err << "flytecd version: " << r.error().message << "\n";
      return 1;
    }
    r->timeout = std::chrono::milliseconds(3000);
    if (auto st = daemon_request(*r, "GET", "/api/v1/status"))
      parts.push_back(daemon_version(*st, r->server));
    else
      parts.push_back({"daemon", r->server, "", "", "", "", st.error().message});
    auto cfg = resolve_config(target);
    if (!cfg) {
      err << "flytecd version: " << cfg.error().message << "\n";
      return 1;
    }
    parts.push_back(flyteadmin_version(*cfg));
  }
  if (format == "json")
    out << dump_json(version_json(parts), 2) << "\n";
  else
    out << version_text(parts);
  return 0;
}

std::function<std::optional<int>()> add_version_command(CLI::App& app, RemoteFlags& remote,
                                                        const AddRemoteOptions& add_remote) {
  struct Parsed {
    TargetOptions target;
    bool client_only = false;
    std::string format = "text";
  };
  auto opt = std::make_shared<Parsed>();
  auto* cmd = app.add_subcommand(
      "version", "This client's version, the running daemon's and FlyteAdmin's (GetVersion)");
  add_remote(cmd, false);
  cmd->add_option("--admin-endpoint", opt->target.admin_endpoint,
                  "FlyteAdmin gRPC endpoint to ask (default: from --config)");
  cmd->add_option("--flytectl-config", opt->target.flytectl_config,
                  "Read admin: settings from flytectl's config.yaml");
  cmd->add_flag("--insecure", opt->target.insecure, "Plaintext gRPC to FlyteAdmin");
  cmd->add_flag("--client", opt->client_only, "Only this client's version");
  cmd->add_option("-o,--output", opt->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->footer(
      "Each part is optional: a daemon or FlyteAdmin that cannot be reached is said so, and the\n"
      "exit code is 0 (1 only for an unreadable configuration).\n"
      "Examples:\n  flytecd version --config /etc/flytecd/config.yaml\n"
      "  flytecd version --server http://127.0.0.1:8080 --admin-endpoint dns:///flyte:443 -o "
      "json\n");
  return when_parsed(cmd, [opt, &remote]() -> int {
    opt->target.config_file = remote.config_file;  // one --config for the daemon and FlyteAdmin
    return run_version(remote, opt->target, opt->client_only, opt->format, std::cout, std::cerr);
  });
}

Runner add_version_row(CLI::App& app, CommandContext& ctx) {
  return add_version_command(app, ctx.remote, ctx.add_remote_options);
}

}  // namespace flytecd::cli
