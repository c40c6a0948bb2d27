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

Result<std::string> read_repo_file(const std::filesystem::path& root, const std::string& path,
                                   uint64_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(root, ec);
  const fs::path full = fs::weakly_canonical(root / path, ec);
  const fs::path rel = full.lexically_relative(base);
  if (ec || rel.empty() || *rel.begin() == "..")
    return make_error(ErrorCode::invalid_input, "'" + path + "' is outside the repository");
  if (!fs::is_regular_file(full, ec))
    return make_error(ErrorCode::not_found, "no file '" + path + "' in the repository");
  const auto size = fs::file_size(full, ec);
  if (ec || size > max_bytes)
    return make_error(ErrorCode::invalid_input,
                      "'" + path + "' is larger than " + std::to_string(max_bytes) + " bytes");
  std::ifstream in(full, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    return make_error(ErrorCode::internal, "cannot read '" + path + "'");
  return bytes;
}

}  // namespace flytecd::sources::local
