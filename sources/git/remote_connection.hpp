#pragma once

// One connection to a Git remote: list its refs, name its default branch, fetch refspecs into a
// repository. The options' timeout bounds everything done through one connection.

#include <git2.h>

#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "sources/git/git_source.hpp"
#include "sources/git/libgit2.hpp"
#include "sources/git/net.hpp"
#include "sources/git/remote_callbacks.hpp"
#include "sources/git/url.hpp"

namespace flytecd::sources::git {

// A ref the remote lists and the object id it names.
struct RemoteRef {
  std::string name;
  std::string id;
};

// Connects on list(); disconnects when destroyed.
class Connection {
 public:
  Connection(git_repository* repo, const GitOptions& opts, const RemoteUrl& remote,
             const std::string& url, const std::string& redacted);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Connects and lists the remote's refs.
  Result<std::vector<RemoteRef>> list();

  // The branch the remote's HEAD names ("refs/heads/main"), or "" (after list()).
  std::string default_branch();

  // Downloads what `refspecs` name over this connection and moves the local refs.
  Status fetch(const std::vector<std::string>& refspecs);

 private:
  Error mapped(int rc) const;

  git_repository* m_repo;
  const GitOptions& m_opts;
  std::string m_url;
  std::string m_redacted;
  net::Deadline m_deadline;
  CallbackContext m_ctx;
  RemotePtr m_remote;
};

}  // namespace flytecd::sources::git
