#include "daemon/common/digest.hpp"
#include "sources/local/directory_reader.hpp"
#include "sources/source.hpp"

namespace flytecd::sources {
namespace {

// A directory on disk. The revision is a hash over every file's path and content, so an
// unchanged tree keeps its revision and a changed file changes it.
class DirectorySource : public Source {
 public:
  DirectorySource(std::string dir, size_t max_file_bytes)
      : m_dir(std::move(dir)), m_max(max_file_bytes) {}

  Result<std::string> head() override {
    auto snap = sync();
    if (!snap) return snap.error();
    return snap->revision;
  }

  Result<Snapshot> sync() override {
    auto files = local::read_yaml_tree(m_dir, m_max);
    if (!files) return files.error();
    Snapshot s;
    std::string all;
    for (const auto& f : *files) {
      std::string id = digest::sha256_hex(f.bytes + std::to_string(f.size));
      all += f.path + '\0' + id + '\0';
      s.blob_ids.push_back(std::move(id));
    }
    s.files = std::move(*files);
    s.revision = "dir:" + digest::sha256_hex(all).substr(0, 16);
    return s;
  }

  Result<std::string> read_file(const std::string&, const std::string& path,
                                uint64_t max_bytes) override {
    return local::read_repo_file(m_dir, path, max_bytes);
  }
  std::string describe() const override { return "directory " + m_dir; }

 private:
  std::string m_dir;
  size_t m_max;
};

}  // namespace

std::unique_ptr<Source> make_directory_source(const std::string& dir, size_t max_file_bytes) {
  return std::make_unique<DirectorySource>(dir, max_file_bytes);
}

}  // namespace flytecd::sources
