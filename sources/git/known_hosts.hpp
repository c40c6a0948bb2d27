#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flytecd::sources::git {

// What an OpenSSH known_hosts file says about a host key presented by a server.
struct HostKeyVerdict {
  enum class Outcome {
    match,         // a line for this host holds exactly this key
    mismatch,      // the host is listed, but with other keys (possible man-in-the-middle)
    unknown_host,  // no line names this host
    revoked,       // a "@revoked" line holds this key
  };
  Outcome outcome = Outcome::unknown_host;
  std::vector<std::string> listed_types;  // key types listed for the host (for error messages)
};

// Checks `key_blob` (the raw SSH wire-format public key the server presented) for `host`:`port`
// against the text of a known_hosts file. Supports plain and hashed ("|1|salt|hash") host
// patterns, "[host]:port" for non-22 ports, '*'/'?' wildcards and '!' negation, and "@revoked".
// "@cert-authority" lines are ignored (host certificates are not supported). Pure; thread-safe.
HostKeyVerdict check_known_hosts(std::string_view known_hosts_text, std::string_view host, int port,
                                 std::string_view key_blob);

// The key type encoded at the start of an SSH wire-format key blob ("ssh-ed25519", …), or "".
std::string ssh_key_type(std::string_view key_blob);

// Standard base64 (with or without padding). nullopt on any invalid character.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace flytecd::sources::git
