#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "sources/snapshot.hpp"
#include "sources/source.hpp"

namespace flytecd::sources::git {

// Credentials. Secrets are named by file or environment variable and read at the moment the
// remote asks for them (so rotated secrets are picked up); they are never logged or put in argv.
struct GitAuth {
  // HTTPS basic or token auth. A token is the password; the username defaults to
  // "x-access-token" (GitHub's convention, accepted by GitLab and Gitea too) when empty.
  std::string username;
  std::string password_file;  // first line of the file; surrounding whitespace is ignored
  std::string password_env;
  // SSH: a private key (the ".pub" beside it is used when present) and the known_hosts file
  // the server's host key must be listed in. The username defaults to the URL's, else "git".
  std::string ssh_private_key_file;
  std::string ssh_known_hosts_file;
  std::string ssh_passphrase_env;
};

// Which commits sync() accepts as the head.
struct SignaturePolicy {
  enum class Mode { off, ssh } mode = Mode::off;
  std::string allowed_signers_file;  // ssh-keygen ALLOWED SIGNERS format ("<email> <key>")
};

struct GitOptions {
  std::string url;  // https://, http://, ssh://, user@host:path, git://, file://, local path
  std::string ref = "main";  // branch, tag, full ref name ("refs/…"), or a 40-hex commit id
  std::string subpath;       // directory inside the repository holding the documents; "" = root
  std::string cache_dir;     // parent of the bare mirror (inside flytecd's state directory)
  GitAuth auth;
  SignaturePolicy signatures;
  // Bounds each network operation as a whole (connect, negotiation, transfer). A first clone
  // of a large repository may need more than the default.
  int timeout_seconds = 60;
  size_t max_file_bytes = 4u << 20;  // larger files are listed with their size but not read
  // Bounds of one revision's snapshot, checked before any file is read: a tree can name one
  // large blob under many paths, small in Git and huge in memory (Argo CD's repo server bounds
  // a revision's manifests the same way). Larger revisions are refused, naming the limit.
  size_t max_snapshot_files = 100000;          // YAML files selected under the subpath
  uint64_t max_snapshot_bytes = 256ull << 20;  // bytes of the files read (each <= max_file_bytes)
  size_t max_tree_entries = 1000000;           // tree entries walked to find them
};

// A Git repository (libgit2). A local path is read in place: names resolve in that repository
// as `git rev-parse` resolves them there, and no copy is made. A URL (file:// included) is
// followed through a bare mirror under cache_dir that holds the remote's branches, tags and
// remote-tracking refs. All methods serialize on an internal mutex, so one instance may be
// shared between threads; distinct instances may share a cache_dir. Errors carry ErrorCode:
// unavailable (network, remote down), timeout, unauthenticated (credentials or host key rejected),
// permission_denied (HTTP 403), not_found (ref, revision, subpath or repository missing),
// invalid_input (configuration, signatures).
class GitSource : public sources::Source {
 public:
  // Validates the options and creates or opens the bare mirror under cache_dir. No network.
  static Result<std::unique_ptr<GitSource>> open(const GitOptions& options);
  ~GitSource() override;
  GitSource(const GitSource&) = delete;
  GitSource& operator=(const GitSource&) = delete;

  // The remote's current commit for `ref` (one ls-remote; nothing is fetched or written).
  // A commit-id ref is returned as is without network.
  Result<std::string> head() override;

  // Fetches the ref when the remote head differs from the mirror's (force refspec: a rewritten
  // branch is followed) and returns the snapshot of the head. An unchanged head costs one
  // ls-remote. With SignaturePolicy::ssh, a head that is unsigned or not signed by an allowed
  // key is refused (invalid_input naming the commit) and nothing from it is returned.
  Result<Snapshot> sync() override;

  // The snapshot of any revision, named as `git rev-parse` takes it: a commit id (abbreviated
  // too), branch, tag, "origin/<branch>", "refs/...", "HEAD", "@~1", "main^2", and "A...B" for
  // the merge base of A and B ("A..B" is a range and refused). A local path resolves in the
  // repository itself (its HEAD, branches, remote-tracking refs). A URL fetches the remote's
  // branches, tags and remote-tracking refs (deleted ones pruned) before resolving any name but
  // a full commit id, so a moved branch is seen; there "origin/<b>" is the remote's branch <b>
  // (else its own refs/remotes/origin/<b>), and HEAD is the followed ref once sync() ran, else
  // the remote's HEAD. Signatures are not checked here (this serves `flytecd plan`).
  Result<Snapshot> snapshot_at(const std::string& revspec) override;

  // One file of a commit already in the mirror (path relative to the configured sub-path), e.g.
  // a workflow package kept in the repository. Errors: not_found, invalid_input (not a regular
  // file, larger than max_bytes).
  Result<std::string> read_file(const std::string& revision, const std::string& path,
                                uint64_t max_bytes) override;

  // "git <redacted url> (ref <ref>[, path <subpath>])" for logs and status; a local path is named
  // by its real path (so "." and its absolute path are one repository).
  std::string describe() const override;

 private:
  struct Impl;
  explicit GitSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace flytecd::sources::git
