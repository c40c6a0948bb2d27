#pragma once

// Talking to a running `flytecd run` over its HTTP API (status, sync, suspend, resume; the
// history command builds on the same call). One libcurl client: daemon/common/http/client.hpp.

#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/common/result.hpp"

namespace CLI {
class App;
}

namespace flytecd::cli {

// Where the daemon is and how to authenticate. The token is never logged or printed.
struct RemoteOptions {
  std::string server = "http://127.0.0.1:8080";  // base URL, no trailing path
  std::string token;                             // bearer (the daemon's sync token); "" = none
  std::chrono::milliseconds timeout{10000};
};

// What the user gave on the command line; the token comes from a file or the environment,
// never argv.
struct RemoteFlags {
  std::string server;       // --server URL
  std::string config_file;  // --config FILE: server from its http.listen, token from syncTokenFile
  std::string token_file;   // --token-file FILE
};

// Adds --server and --config (and, with `token`, --token-file) to a command, filling the
// RemoteFlags the CLI shares between the commands for a running daemon.
using AddRemoteOptions = std::function<void(CLI::App* cmd, bool token)>;

// The daemon's base URL for an `http.listen` value: "0.0.0.0:8080" and ":8080" -> the loopback
// "http://127.0.0.1:8080", "[::]:8080" -> "http://[::1]:8080", "host:port" -> "http://host:port".
std::string server_from_listen(const std::string& listen);

// Server: --server, else the config's http.listen (with --config), else the config default
// (127.0.0.1:8080). Token: --token-file, else FLYTECD_SYNC_TOKEN, else the config's
// http.syncTokenFile. Errors: invalid_input naming the unreadable file or bad config.
Result<RemoteOptions> resolve_remote(const RemoteFlags& flags);

// Sends `method path` (with `body` as JSON when not null) and returns the response as JSON (a
// non-JSON 2xx body is {"message": body}). Errors, each naming the URL:
//   unavailable  the daemon cannot be reached (hint: is `flytecd run` listening there?)
//   timeout      no answer in time
//   unauthenticated / permission_denied  401 / 403: the token is missing or wrong
//   not_found    404 (e.g. the endpoint is disabled: no sync token configured)
//   internal / unavailable  other non-2xx statuses, with the first line of the body
Result<nlohmann::json> daemon_request(const RemoteOptions& remote, const std::string& method,
                                      const std::string& path,
                                      const nlohmann::json& body = nullptr);

// The string at `key` of a JSON object from the daemon; "" when it is absent or not a string.
std::string str(const nlohmann::json& j, const char* key);

}  // namespace flytecd::cli
