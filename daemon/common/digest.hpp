#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

// SHA-256, the one implementation of the tree (OpenSSL EVP underneath): ledger hashes, content
// revisions, ConfigMap content hashes, the emulator's entity digests, OCI blob digests
// (sources/oci/digest.hpp adds the "sha256:" prefix) and webhook token comparison.

namespace flytecd::digest {

using Sha256Bytes = std::array<unsigned char, 32>;

// Streaming SHA-256. Not thread-safe: one hasher per stream (distinct hashers are independent).
// Throws std::bad_alloc if OpenSSL cannot allocate a context.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Appends `size` bytes at `data` (null is fine when size is 0).
  void update(const void* data, size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // The digest of everything appended since construction or the last finish/reset; the hasher
  // starts over afterwards.
  Sha256Bytes finish();
  // finish() as 64 lower-case hex digits.
  std::string finish_hex();
  // Discards what was appended.
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// Lower-case hex of `bytes` (two digits a byte), the tree's one hex encoder. Pure.
std::string to_hex(std::span<const unsigned char> bytes);

// SHA-256 of `data`, raw. Pure and thread-safe.
Sha256Bytes sha256(std::string_view data);

// Lower-case hex SHA-256 of `data` (64 characters). Pure and thread-safe.
std::string sha256_hex(std::string_view data);

}  // namespace flytecd::digest
