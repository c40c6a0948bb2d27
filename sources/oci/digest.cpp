#include "sources/oci/digest.hpp"

namespace flytecd::sources::oci {

namespace {
constexpr std::string_view k_algorithm = "sha256:";
}  // namespace

std::string Sha256::finish() { return std::string(k_algorithm) + m_hash.finish_hex(); }

std::string sha256_digest(std::string_view bytes) {
  return std::string(k_algorithm) + digest::sha256_hex(bytes);
}

std::string short_digest(const std::string& digest) {
  constexpr size_t k_prefix = k_algorithm.size() + 12;  // "sha256:" + 12 hex digits
  return digest.size() > k_prefix ? digest.substr(0, k_prefix) + "…" : digest;
}

}  // namespace flytecd::sources::oci
