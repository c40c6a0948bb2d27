#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "daemon/common/result.hpp"

namespace flytecd {

// Replaces `file` with `data` so that a crash at any point leaves either the old or the new
// content: written to "<file>.tmp", fsynced, renamed over `file`, and the directory fsynced.
// The file is 0600 whatever the umask (state files: records, suspension); a directory it has to
// create is made by create_private_directory. Errors: unavailable, naming `what` and the file.
Status write_file_atomically(const std::filesystem::path& file, const std::string& data,
                             const std::string& what);
// Creates `dir` (and missing parents, with default permissions) if it does not exist; `dir`
// itself is created 0700 whatever the umask: the state directory holds the ledger and records
// nobody else should read. An existing directory is left as it is. Errors: unavailable.
Status create_private_directory(const std::filesystem::path& dir, const std::string& what);
// Removes `file` (absent is fine) and fsyncs its directory.
Status remove_file_durably(const std::filesystem::path& file, const std::string& what);
// The content of a small file, or nullopt when it does not exist. Errors: invalid_input when
// larger than `max_bytes`, unavailable when it cannot be read.
Result<std::optional<std::string>> read_small_file(const std::filesystem::path& file,
                                                   size_t max_bytes, const std::string& what);

}  // namespace flytecd
