#pragma once

#include <filesystem>
#include <vector>

#include "daemon/common/result.hpp"
#include "sources/snapshot.hpp"

namespace flytecd::sources::local {

// Reads every *.yaml / *.yml under `root` (recursively, skipping dot-directories such as .git),
// in sorted path order. Files larger than `max_file_bytes` are listed with their size but not
// read, so the loader can reject them without holding them in memory. A symlinked *.yaml is
// followed to its file (at most k_max_link_hops links); one that dangles, loops or leaves
// `root` fails the whole read, naming the link. Symlinked directories are not descended into.
Result<std::vector<SourceFile>> read_yaml_tree(const std::filesystem::path& root,
                                               size_t max_file_bytes);

// Reads one file under `root` by repository-relative path (e.g. a workflow package). Errors:
// invalid_input (path leaves root, larger than max_bytes), not_found, internal (read error).
Result<std::string> read_repo_file(const std::filesystem::path& root, const std::string& path,
                                   uint64_t max_bytes);

}  // namespace flytecd::sources::local
