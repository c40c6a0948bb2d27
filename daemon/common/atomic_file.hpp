#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "daemon/common/result.hpp"

namespace flytecd {

// Replaces `file` with `data` so that a crash at any point leaves either the old or the new
// content: written to "<file>.tmp", fsynced, renamed over `file`, and the directory fsynced.
// Creates the directory if needed. Errors: unavailable, naming `what` and the file.
Status write_file_atomically(const std::filesystem::path& file, const std::string& data,
                             const std::string& what);
// Removes `file` (absent is fine) and fsyncs its directory.
Status remove_file_durably(const std::filesystem::path& file, const std::string& what);
// The content of a small file, or nullopt when it does not exist. Errors: invalid_input when
// larger than `max_bytes`, unavailable when it cannot be read.
Result<std::optional<std::string>> read_small_file(const std::filesystem::path& file,
                                                   size_t max_bytes, const std::string& what);

}  // namespace flytecd
