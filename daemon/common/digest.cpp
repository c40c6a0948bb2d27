#include "daemon/common/digest.hpp"

#include <openssl/evp.h>

#include <new>

namespace flytecd::digest {
namespace {

// SHA-256 fetched from OpenSSL's default provider once: EVP_sha256() in an init would look it up
// again on every call (OpenSSL 3's implicit fetch), a fifth of hashing a small message.
const EVP_MD* sha256_md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md ? md : EVP_sha256();
}

}  // namespace

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>()) {
  m_impl->ctx = EVP_MD_CTX_new();
  if (m_impl->ctx == nullptr) throw std::bad_alloc();
  reset();
}

Sha256::~Sha256() { EVP_MD_CTX_free(m_impl->ctx); }

void Sha256::reset() { EVP_DigestInit_ex(m_impl->ctx, sha256_md(), nullptr); }

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
  Sha256Bytes md{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &len, sha256_md(), nullptr) != 1)
    throw std::bad_alloc();  // only an allocation can fail here
  return md;
}

std::string sha256_hex(std::string_view data) { return to_hex(sha256(data)); }

}  // namespace flytecd::digest
