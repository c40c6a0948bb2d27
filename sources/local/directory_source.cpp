#include <openssl/evp.h>

#include "sources/local/directory_reader.hpp"
#include "sources/source.hpp"

namespace flytecd::sources {
namespace {

std::string sha256_hex(const std::string& a, const std::string& b = {}) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  EVP_DigestUpdate(ctx, a.data(), a.size());
  EVP_DigestUpdate(ctx, b.data(), b.size());
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  static const char* k_hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += k_hex[md[i] >> 4];
    out += k_hex[md[i] & 0xF];
  }
  return out;
}

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
      std::string id = sha256_hex(f.bytes, std::to_string(f.size));
      all += f.path + '\0' + id + '\0';
      s.blob_ids.push_back(std::move(id));
    }
    s.files = std::move(*files);
    s.revision = "dir:" + sha256_hex(all).substr(0, 16);
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
