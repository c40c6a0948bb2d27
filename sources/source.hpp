#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "sources/snapshot.hpp"

namespace flytecd::sources {

// Where desired state comes from. Implementations: a Git remote (libgit2), a local directory.
// Not thread-safe: the reconcile thread owns it.
class Source {
 public:
  virtual ~Source() = default;
  // Cheap check of the current revision (a remote ref lookup for Git). Errors: unavailable,
  // unauthenticated, not_found.
  virtual Result<std::string> head() = 0;
  // The snapshot at the current head (fetching if needed). Errors as head(), plus invalid_input
  // when the revision is refused (e.g. bad commit signature).
  virtual Result<Snapshot> sync() = 0;
  // The snapshot at `revision` (a commit id, branch or tag) without moving what sync() tracks.
  // Sources without history (a directory) have only their current tree: any revision is
  // invalid_input. Errors as sync(), plus not_found for an unknown revision.
  virtual Result<Snapshot> snapshot_at(const std::string& revision) {
    return make_error(ErrorCode::invalid_input,
                      describe() + " has no revisions; cannot read '" + revision + "'");
  }
  // A file of a revision returned by sync() (repository-relative, e.g. a workflow package kept
  // in the repository). Errors: not_found, invalid_input (larger than max_bytes, leaves the
  // repository).
  virtual Result<std::string> read_file(const std::string& revision, const std::string& path,
                                        uint64_t max_bytes) = 0;
  // Redacted description for logs and status ("git https://host/org/repo@main:path").
  virtual std::string describe() const = 0;
};

// Parses source specs: a local directory path -> directory source; anything else is a Git URL
// (handled by the Git factory in daemon wiring).
std::unique_ptr<Source> make_directory_source(const std::string& dir, size_t max_file_bytes);

}  // namespace flytecd::sources
