#include "sources/local/directory_reader.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace flytecd::sources::local {
namespace fs = std::filesystem;

Result<std::vector<model::SourceFile>> read_yaml_tree(const fs::path& root, size_t max_file_bytes) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return make_error(ErrorCode::not_found,
                      "repository directory '" + root.string() + "' does not exist");
  std::vector<model::SourceFile> files;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  if (ec)
    return make_error(ErrorCode::invalid_input,
                      "cannot read '" + root.string() + "': " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec)
      return make_error(ErrorCode::invalid_input,
                        "cannot walk '" + root.string() + "': " + ec.message());
    const auto& entry = *it;
    const std::string name = entry.path().filename().string();
    if (entry.is_directory(ec) && !name.empty() && name[0] == '.') {
      it.disable_recursion_pending();
      continue;
    }
    if (entry.is_symlink(ec) || !entry.is_regular_file(ec)) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".yaml" && ext != ".yml") continue;
    model::SourceFile file;
    file.path = fs::relative(entry.path(), root, ec).generic_string();
    file.size = static_cast<size_t>(entry.file_size(ec));
    if (file.size <= max_file_bytes) {
      std::ifstream in(entry.path(), std::ios::binary);
      if (!in) return make_error(ErrorCode::invalid_input, "cannot open '" + file.path + "'");
      std::ostringstream ss;
      ss << in.rdbuf();
      file.bytes = ss.str();
    }
    files.push_back(std::move(file));
  }
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  return files;
}

}  // namespace flytecd::sources::local
