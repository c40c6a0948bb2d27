#include "sources/link_path.hpp"

#include <vector>

#include "daemon/common/scan.hpp"

namespace flytecd::sources {

Result<std::string> resolve_link(const std::string& link_path, const std::string& target) {
  auto refuse = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_input, "symlink '" + scan::printable(link_path) +
                                                    "' -> '" + scan::printable(target) + "' " +
                                                    why +
                                                    "; expected a link to a file inside the "
                                                    "repository path");
  };
  if (target.empty()) return refuse("is empty");
  if (target.front() == '/') return refuse("is absolute");
  std::vector<std::string> parts;
  auto push_segments = [&](const std::string& path, bool drop_last) -> bool {
    size_t start = 0;
    std::vector<std::string> segs;
    while (start <= path.size()) {
      size_t slash = path.find('/', start);
      if (slash == std::string::npos) slash = path.size();
      segs.push_back(path.substr(start, slash - start));
      start = slash + 1;
    }
    if (drop_last) segs.pop_back();
    for (const auto& s : segs) {
      if (s.empty() || s == ".") continue;
      if (s == "..") {
        if (parts.empty()) return false;
        parts.pop_back();
      } else {
        parts.push_back(s);
      }
    }
    return true;
  };
  push_segments(link_path, true);
  if (!push_segments(target, false)) return refuse("leaves the repository path");
  if (parts.empty()) return refuse("points at the repository root");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

}  // namespace flytecd::sources
