#include "daemon/common/digest.hpp"

#include <openssl/evp.h>

#include <new>

namespace flytecd::digest {

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

void Sha256::update(const void* data, size_t size) {
  if (size > 0) EVP_DigestUpdate(m_impl->ctx, data, size);
}

Sha256Bytes Sha256::finish() {
  Sha256Bytes md{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(m_impl->ctx, md.data(), &len);
  reset();
  return md;
}

std::string Sha256::finish_hex() { return to_hex(finish()); }

std::string to_hex(std::span<const unsigned char> bytes) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += k_hex[b >> 4];
    out += k_hex[b & 0xF];
  }
  return out;
}

Sha256Bytes sha256(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.finish();
}

std::string sha256_hex(std::string_view data) { return to_hex(sha256(data)); }

}  // namespace flytecd::digest
