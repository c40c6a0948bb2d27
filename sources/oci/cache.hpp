#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "daemon/common/result.hpp"

namespace flytecd::sources::oci {

// A temporary file under the cache's tmp/ directory, removed on destruction unless committed.
class TempFile {
 public:
  explicit TempFile(std::filesystem::path path) : m_path(std::move(path)) {}
  ~TempFile();
  TempFile(TempFile&& other) noexcept : m_path(std::move(other.m_path)) { other.m_path.clear(); }
  TempFile& operator=(TempFile&&) = delete;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::filesystem::path& path() const { return m_path; }
  void release() { m_path.clear(); }

 private:
  std::filesystem::path m_path;
};

// Content-addressed blob store: <root>/blobs/sha256/<hex>. A blob enters only through
// commit(), after its bytes were verified, by an atomic rename; readers therefore never see
// partial content. Least-recently-used blobs (by mtime, refreshed on every hit) are evicted
// when the total exceeds max_bytes, except blobs used in the last 60 s (a caller may still be
// reading a path it was just given). Thread-safe; several processes may share a root.
class BlobCache {
 public:
  BlobCache(std::filesystem::path root, uint64_t max_bytes);

  std::filesystem::path blob_path(const std::string& digest) const;

  // The size of a cached blob whose content still hashes to `digest` (re-hashed on every hit,
  // so a corrupted cache entry is dropped and fetched again), or nullopt. Marks it as used.
  std::optional<uint64_t> lookup(const std::string& digest);

  // The bytes of a small cached blob (manifests), verified as lookup() does.
  std::optional<std::string> read(const std::string& digest, uint64_t max_bytes);

  // A fresh temporary file on the same filesystem as the store. Errors: internal.
  Result<TempFile> temp_file();

  // Moves verified content into the store and evicts down to the bound (never `digest`
  // itself). Errors: internal.
  Result<std::filesystem::path> commit(TempFile& tmp, const std::string& digest);

  // Writes verified bytes (sha256 already checked by the caller) into the store.
  Status put(const std::string& digest, const std::string& bytes);

  // Total bytes currently stored.
  uint64_t total_bytes() const;

 private:
  void evict(const std::string& keep);

  std::filesystem::path m_root;
  uint64_t m_max_bytes;
  std::mutex m_mu;  // serialises eviction scans
};

}  // namespace flytecd::sources::oci
