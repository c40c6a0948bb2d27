#pragma once

// libgit2 callbacks (credentials, host key check) and failure mapping for one remote operation.
// Internal to sources/git: includes libgit2.

#include <git2.h>

#include <string>

#include "daemon/common/result.hpp"
#include "sources/git/git_source.hpp"
#include "sources/git/url.hpp"

namespace flytecd::sources::git {

// Payload of the callbacks for one connection; also what they learned, for map_remote_error.
struct CallbackContext {
  const GitAuth* auth = nullptr;
  RemoteUrl url;
  int secret_attempts = 0;  // credentials offered to the remote so far
  bool credentials_rejected = false;
  // A precise reason found by a callback (missing secret, unknown host key); wins over
  // libgit2's message.
  std::string failure;
  ErrorCode failure_code = ErrorCode::unauthenticated;
};

// Callbacks bound to `ctx`, which must outlive the operation.
git_remote_callbacks make_remote_callbacks(CallbackContext& ctx);

// Maps a failed libgit2 network call (its return code and git_error_last()) to an Error.
// `expired` says the operation's Deadline fired. Secrets never appear in the message; the
// URL in libgit2's text is replaced by `redacted_url` when it held userinfo.
Error map_remote_error(int rc, const CallbackContext& ctx, bool expired, int timeout_seconds,
                       const std::string& url, const std::string& redacted_url);

}  // namespace flytecd::sources::git
