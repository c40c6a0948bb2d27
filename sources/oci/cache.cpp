#include "sources/oci/cache.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "sources/oci/digest.hpp"
#include "sources/package_ref.hpp"

namespace flytecd::sources::oci {
namespace fs = std::filesystem;

TempFile::~TempFile() {
  if (m_path.empty()) return;
  std::error_code ec;
  fs::remove(m_path, ec);
}

BlobCache::BlobCache(fs::path root, uint64_t max_bytes)
    : m_root(std::move(root)), m_max_bytes(max_bytes) {}

fs::path BlobCache::blob_path(const std::string& digest) const {
  return m_root / "blobs" / "sha256" / digest.substr(digest.find(':') + 1);
}

std::optional<uint64_t> BlobCache::lookup(const std::string& digest) {
  if (!valid_sha256_digest(digest)) return std::nullopt;
  const fs::path p = blob_path(digest);
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  Sha256 h;
  std::vector<char> buf(1 << 16);
  uint64_t size = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    h.update(buf.data(), n);
    size += n;
  }
  std::error_code ec;
  if (h.finish() != digest) {
    fs::remove(p, ec);  // corrupted on disk: drop it so it is fetched again
    return std::nullopt;
  }
  fs::last_write_time(p, fs::file_time_type::clock::now(), ec);
  return size;
}

std::optional<std::string> BlobCache::read(const std::string& digest, uint64_t max_bytes) {
  if (!valid_sha256_digest(digest)) return std::nullopt;
  const fs::path p = blob_path(digest);
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec || size > max_bytes) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) return std::nullopt;
  if (sha256_digest(bytes) != digest) {
    fs::remove(p, ec);
    return std::nullopt;
  }
  fs::last_write_time(p, fs::file_time_type::clock::now(), ec);
  return bytes;
}

Result<TempFile> BlobCache::temp_file() {
  std::error_code ec;
  fs::create_directories(m_root / "tmp", ec);
  fs::create_directories(m_root / "blobs" / "sha256", ec);
  if (ec)
    return make_error(ErrorCode::internal,
                      "cache: cannot create " + m_root.string() + ": " + ec.message());
  std::string tmpl = (m_root / "tmp" / "blob-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    return make_error(ErrorCode::internal,
                      "cache: cannot create a temporary file in " + (m_root / "tmp").string());
  ::close(fd);
  return TempFile(fs::path(tmpl));
}

Result<fs::path> BlobCache::commit(TempFile& tmp, const std::string& digest) {
  const fs::path dest = blob_path(digest);
  std::error_code ec;
  fs::rename(tmp.path(), dest, ec);
  if (ec)
    return make_error(ErrorCode::internal,
                      "cache: cannot move blob into " + dest.string() + ": " + ec.message());
  tmp.release();
  evict(digest);
  return dest;
}

Status BlobCache::put(const std::string& digest, const std::string& bytes) {
  auto tmp = temp_file();
  if (!tmp) return tmp.error();
  {
    std::ofstream out(tmp->path(), std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush())
      return make_error(ErrorCode::internal, "cache: cannot write " + tmp->path().string());
  }
  auto done = commit(*tmp, digest);
  if (!done) return done.error();
  return ok_status();
}

uint64_t BlobCache::total_bytes() const {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(m_root / "blobs" / "sha256", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code size_ec;
    const auto size = it->file_size(size_ec);
    if (!size_ec) total += size;
  }
  return total;
}

void BlobCache::evict(const std::string& keep) {
  std::lock_guard<std::mutex> g(m_mu);
  struct Entry {
    fs::path path;
    uint64_t size;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  const std::string keep_name = blob_path(keep).filename().string();
  for (fs::directory_iterator it(m_root / "blobs" / "sha256", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code e1, e2;
    const auto size = it->file_size(e1);
    const auto used = it->last_write_time(e2);
    if (e1 || e2) continue;
    total += size;
    if (it->path().filename() != keep_name) entries.push_back({it->path(), size, used});
  }
  if (total <= m_max_bytes) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  // Blobs used in the last minute stay even above the bound: a fetch may have just returned
  // one of them and its caller is still reading the file.
  const auto recent = fs::file_time_type::clock::now() - std::chrono::seconds(60);
  for (const auto& e : entries) {
    if (total <= m_max_bytes) break;
    if (e.used > recent) continue;
    std::error_code rm;
    if (fs::remove(e.path, rm)) total -= e.size;
  }
}

}  // namespace flytecd::sources::oci
