#include "daemon/common/digest.hpp"

#include <openssl/evp.h>

namespace flytecd::digest {

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += k_hex[md[i] >> 4];
    out += k_hex[md[i] & 0xF];
  }
  return out;
}

}  // namespace flytecd::digest
