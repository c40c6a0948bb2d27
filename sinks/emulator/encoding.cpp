#include "sinks/emulator/encoding.hpp"
#include "daemon/common/base64.hpp"
#include "daemon/common/text.hpp"

#include <openssl/evp.h>

#include <array>
#include <cctype>
#include <cstdint>

namespace flytecd::sinks::emulator {
namespace {

std::string digest(const EVP_MD* md, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &len, md, nullptr);
  return std::string(reinterpret_cast<const char*>(out.data()), len);
}

constexpr std::string_view k_b32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
constexpr std::string_view k_hex = "0123456789abcdef";

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

std::string md5_raw(std::string_view data) { return digest(EVP_md5(), data); }

std::string hex(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(k_hex[c >> 4]);
    out.push_back(k_hex[c & 0xF]);
  }
  return out;
}

std::string base64_encode(std::string_view bytes) { return base64::encode(bytes); }

std::optional<std::string> base64_decode(std::string_view text) {
  return base64::decode(text, base64::Padding::required);  // as Go's base64.StdEncoding
}

std::string base32_encode(std::string_view bytes) {
  std::string out;
  uint64_t buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 5) {
      out.push_back(k_b32[(buffer >> (bits - 5)) & 0x1F]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(k_b32[(buffer << (5 - bits)) & 0x1F]);
  while (out.size() % 8 != 0) out.push_back('=');
  return out;
}

std::string percent_encode(std::string_view segment) {
  std::string out;
  for (unsigned char c : segment) {
    if (unreserved(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(static_cast<char>(std::toupper(k_hex[c >> 4])));
      out.push_back(static_cast<char>(std::toupper(k_hex[c & 0xF])));
    }
  }
  return out;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = text::hex_value(text[i + 1]);
    const int lo = text::hex_value(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace flytecd::sinks::emulator
