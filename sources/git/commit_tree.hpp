#pragma once

// One commit of an opened repository read as the Git source serves it: its YAML documents (under
// a subpath, symlinks resolved, every per-revision bound checked before a byte is read) or one
// file of it.

#include <git2.h>

#include <cstdint>
#include <string>

#include "daemon/common/result.hpp"
#include "sources/git/git_source.hpp"
#include "sources/snapshot.hpp"

namespace flytecd::sources::git {

// The snapshot of commit `id` (a full hex id) under `subpath` ("" = the whole tree), bounded by
// opts' max_snapshot_files, max_tree_entries, max_snapshot_bytes and max_file_bytes. Errors:
// not_found (no such commit or subpath), invalid_input (a bound, a bad symlink), internal.
Result<Snapshot> read_commit_snapshot(git_repository* repo, const std::string& id,
                                      const std::string& subpath, const GitOptions& opts);

// One file of commit `id` (path relative to `subpath`), bounded by max_bytes.
Result<std::string> read_commit_file(git_repository* repo, const std::string& id,
                                     const std::string& subpath, const std::string& path,
                                     uint64_t max_bytes);

}  // namespace flytecd::sources::git
