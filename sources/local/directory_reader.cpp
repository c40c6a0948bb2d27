#include "sources/local/directory_reader.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "daemon/common/scan.hpp"
#include "sources/link_path.hpp"

namespace flytecd::sources::local {
namespace fs = std::filesystem;

namespace {

// Follows a symlinked document to the regular file it names inside `root` (through at most
// k_max_link_hops links). Errors name the link: it dangles, loops, leaves the root (also
// through a symlinked directory), or names something that is not a file.
Result<fs::path> follow_link(const fs::path& root, const fs::path& canonical_root,
                             const std::string& link_rel) {
  std::string rel = link_rel;
  std::error_code ec;
  for (int hop = 0; hop < k_max_link_hops; ++hop) {
    const fs::path at = root / rel;
    auto st = fs::symlink_status(at, ec);
    if (ec || !fs::exists(st)) {
      return make_error(ErrorCode::invalid_input,
                        "symlink '" + scan::printable(link_rel) + "' dangles: '" +
                            scan::printable(rel) +
                            "' does not exist; expected a link to a file inside the repository "
                            "path");
    }
    if (!fs::is_symlink(st)) {
      const fs::path real = fs::weakly_canonical(at, ec);
      const fs::path inside = real.lexically_relative(canonical_root);
      if (ec || inside.empty() || *inside.begin() == "..")
        return make_error(ErrorCode::invalid_input,
                          "symlink '" + scan::printable(link_rel) +
                              "' leaves the repository path (through a linked directory); "
                              "expected a link to a file inside it");
      if (!fs::is_regular_file(st))
        return make_error(ErrorCode::invalid_input,
                          "symlink '" + scan::printable(link_rel) + "' -> '" +
                              scan::printable(rel) +
                              "' is not a regular file; expected a link to a YAML file");
      return at;
    }
    auto target = fs::read_symlink(at, ec);
    if (ec)
      return make_error(ErrorCode::invalid_input,
                        "cannot read symlink '" + scan::printable(rel) + "': " + ec.message());
    auto next = resolve_link(rel, target.generic_string());
    if (!next) return next.error();
    rel = *next;
  }
  return make_error(ErrorCode::invalid_input,
                    "symlink '" + scan::printable(link_rel) + "' goes through more than " +
                        std::to_string(k_max_link_hops) +
                        " links (a loop?); expected a link to a file inside the repository path");
}

}  // namespace

Result<std::vector<SourceFile>> read_yaml_tree(const fs::path& root, size_t max_file_bytes) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return make_error(ErrorCode::not_found,
                      "repository directory '" + root.string() + "' does not exist");
  std::vector<SourceFile> files;
  fs::path canonical_root;
  fs::path base = root.lexically_normal();
  if (!base.has_filename()) base = base.parent_path();
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
    const std::string ext = entry.path().extension().string();
    if (ext != ".yaml" && ext != ".yml") continue;
    // A symlinked directory is not descended into (recursive_directory_iterator does not follow
    // it); a symlinked document is followed to its file, or refused by name.
    const bool link = entry.is_symlink(ec);
    if (!link && !entry.is_regular_file(ec)) continue;
    SourceFile file;
    // Lexically: fs::relative would resolve the symlink and name its target instead.
    file.path = entry.path().lexically_normal().lexically_relative(base).generic_string();
    fs::path real = entry.path();
    if (link) {
      if (canonical_root.empty()) canonical_root = fs::weakly_canonical(root, ec);
      auto followed = follow_link(root, canonical_root, file.path);
      if (!followed) return followed.error();
      real = *followed;
    }
    file.size = static_cast<size_t>(fs::file_size(real, ec));
    if (file.size <= max_file_bytes) {
      std::ifstream in(real, std::ios::binary);
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
