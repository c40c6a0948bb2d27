#include "sources/oci/digest.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace flytecd::sources::oci {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>()) {
  m_impl->ctx = EVP_MD_CTX_new();
  if (m_impl->ctx == nullptr) throw std::bad_alloc();
  reset();
}

Sha256::~Sha256() { EVP_MD_CTX_free(m_impl->ctx); }

void Sha256::reset() { EVP_DigestInit_ex(m_impl->ctx, EVP_sha256(), nullptr); }

void Sha256::update(const void* data, size_t size) { EVP_DigestUpdate(m_impl->ctx, data, size); }

std::string Sha256::finish() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(m_impl->ctx, md, &len);
  static const char* k_hex = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(k_hex[md[i] >> 4]);
    out.push_back(k_hex[md[i] & 0xf]);
  }
  reset();
  return out;
}

std::string sha256_digest(std::string_view bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.finish();
}

std::string short_digest(const std::string& digest) {
  constexpr size_t k_prefix = 7 + 12;  // "sha256:" + 12 hex digits
  return digest.size() > k_prefix ? digest.substr(0, k_prefix) + "…" : digest;
}

}  // namespace flytecd::sources::oci
