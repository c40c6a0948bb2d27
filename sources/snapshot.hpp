#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flytecd::sources {

// One file of a revision. `size` is the on-disk size; `bytes` may be left empty by the reader
// when the size already exceeds the limit (the loader then rejects the file unread).
struct SourceFile {
  std::string path;  // relative to the repository root, '/' separated
  std::string bytes;
  size_t size = 0;
};

// The documents of one immutable revision: what a Source hands the core.
struct Snapshot {
  std::string revision;               // Git commit id, or "dir:<content hash>"
  std::string subject;                // commit subject (may be empty)
  std::vector<SourceFile> files;      // *.yaml|*.yml, sorted by path
  std::vector<std::string> blob_ids;  // parallel to files: content ids (re-parse only changed ones)
  std::string author;                 // "Name <email>" of the commit (empty for a directory)
  int64_t commit_time = 0;            // unix seconds (0: unknown)
};

}  // namespace flytecd::sources
