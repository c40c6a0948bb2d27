#pragma once

#include <string>
#include <string_view>

#include "daemon/common/result.hpp"

namespace flytecd::sources::git {

// How a remote is reached. `local` is a plain filesystem path, `file` a file:// URL.
enum class Transport { local, file, git, http, https, ssh };

// The parts of a remote URL the Git source needs to decide on auth, host key checks and
// timeouts. Secrets are never kept: only whether the URL embedded a password.
struct RemoteUrl {
  Transport transport = Transport::local;
  std::string host;  // lower-cased; IPv6 without brackets; empty for local/file
  int port = 0;      // explicit or the transport's default (22, 80, 443, 9418); 0 for local/file
  std::string user;  // userinfo before '@' (ssh "git@host:path"), empty if none
  bool has_password = false;  // "user:secret@host" — rejected by GitSource::open
};

// Parses https://, http://, ssh://, git+ssh://, git://, file:// URLs, scp-like "user@host:path"
// and plain local paths. Pure. Errors: invalid_input for an unsupported scheme or a bad port.
Result<RemoteUrl> parse_remote_url(std::string_view url);

// True for transports that open network connections (everything but local paths and file://).
bool is_network(Transport transport);

// Normalizes a repository subdirectory: '/'-separated, no empty or "." components, no leading or
// trailing '/'. Pure. Errors: invalid_input when a component is ".." (the subpath would escape
// the repository) or the path contains a NUL or backslash.
Result<std::string> normalize_subpath(std::string_view subpath);

// A stable directory name for the bare mirror of `url` under the cache directory: a readable
// slug of the host and path plus a 64-bit FNV-1a hash of the whole (userinfo-free) URL.
std::string mirror_dir_name(std::string_view redacted_url);

// True when `s` is a full 40-hex SHA-1 commit id.
bool is_full_commit_id(std::string_view s);

}  // namespace flytecd::sources::git
