#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "daemon/common/digest.hpp"

namespace flytecd::sources::oci {

// Streaming OCI content digest: digest::Sha256 with the "sha256:" algorithm prefix. Not
// thread-safe; one per stream.
class Sha256 {
 public:
  void update(const void* data, size_t size) { m_hash.update(data, size); }
  // "sha256:<64 lowercase hex>"; the hasher is reset afterwards.
  std::string finish();
  void reset() { m_hash.reset(); }

 private:
  digest::Sha256 m_hash;
};

// "sha256:<hex>" of a whole buffer.
std::string sha256_digest(std::string_view bytes);

// The first 12 hex digits after "sha256:" for messages ("sha256:1b69944f22…").
std::string short_digest(const std::string& digest);

}  // namespace flytecd::sources::oci
