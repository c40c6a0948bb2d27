#pragma once

#include <string>

#include "daemon/common/result.hpp"

namespace flytecd::sources {

// A symlinked document is followed through at most this many links (a loop ends here).
inline constexpr int k_max_link_hops = 8;

// Where a symlink points, as a path relative to the repository root. `link_path` is the link's
// own repository-relative path ('/'-separated), `target` the link's text. Pure. Errors
// (invalid_input, naming the link): an absolute target, or one that leaves the repository.
Result<std::string> resolve_link(const std::string& link_path, const std::string& target);

}  // namespace flytecd::sources
