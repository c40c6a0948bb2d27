#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace flytecd::sources::oci {

// Streaming SHA-256 (OpenSSL EVP). Not thread-safe; one per stream.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t size);
  // "sha256:<64 lowercase hex>"; the hasher is reset afterwards.
  std::string finish();
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// "sha256:<hex>" of a whole buffer.
std::string sha256_digest(std::string_view bytes);

// The first 12 hex digits after "sha256:" for messages ("sha256:1b69944f22…").
std::string short_digest(const std::string& digest);

}  // namespace flytecd::sources::oci
