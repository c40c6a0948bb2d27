#pragma once

// `flytecd version`: this client's version, the running daemon's (its status document) and
// FlyteAdmin's (AdminService.GetVersion over gRPC, as `flytectl version` asks it). Each remote part
// is optional: one that cannot be reached says so, and the command still exits 0 for the client.

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/cli/commands.hpp"
#include "daemon/cli/remote.hpp"

namespace flytecd::cli {

// One part of the answer: its version, or why it is not known.
struct VersionPart {
  std::string name;                       // client | daemon | flyteadmin
  std::string where;                      // the URL or endpoint asked ("" for the client)
  std::string version;                    // "" when not known
  std::string build, build_time, detail;  // FlyteAdmin's build and build time; daemon's target
  std::string error;                      // why it is not known ("" when known)
};

// The daemon's part from its status document (`version`, `target`); an older daemon without a
// version says so. Pure.
VersionPart daemon_version(const nlohmann::json& status, const std::string& server);

// Text (one line per part) and JSON ({"client": {...}, "daemon": {...}, "flyteadmin": {...}}).
// Pure.
std::string version_text(const std::vector<VersionPart>& parts);
nlohmann::ordered_json version_json(const std::vector<VersionPart>& parts);

// `flytecd version [--server URL] [--config F] [--admin-endpoint E --insecure] [--client]
// [-o text|json]`: 0 (the client part is always known), 1 only for a bad configuration.
int run_version(const RemoteFlags& remote, const TargetOptions& target, bool client_only,
                const std::string& format, std::ostream& out, std::ostream& err);

// Registers `version` on `app`; the result runs it when it was the command given (nullopt when
// another command was). `remote` is filled by `add_remote` at parse time.
std::function<std::optional<int>()> add_version_command(CLI::App& app, RemoteFlags& remote,
                                                        const AddRemoteOptions& add_remote);

}  // namespace flytecd::cli
