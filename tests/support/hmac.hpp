#pragma once

// A reference HMAC-SHA256 straight from OpenSSL, independent of the code under test (webhook
// signatures the tests send, notification signatures they check).

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>

namespace flytecd_test {

// Lower-case hex of HMAC-SHA256(key, data).
inline std::string hmac_hex(const std::string& key, const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len);
  static const char* k_hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += k_hex[md[i] >> 4];
    out += k_hex[md[i] & 0xf];
  }
  return out;
}

}  // namespace flytecd_test
