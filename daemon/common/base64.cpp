#include "daemon/common/base64.hpp"

#include <cstdint>

namespace flytecd::base64 {
namespace {

constexpr std::string_view k_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  const auto pos = k_alphabet.find(c);
  return pos == std::string_view::npos ? -1 : static_cast<int>(pos);
}

}  // namespace

std::string encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                       (uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                       uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    for (int s = 18; s >= 0; s -= 6) out.push_back(k_alphabet[(v >> s) & 0x3F]);
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    if (rest == 2) v |= uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    out.push_back(k_alphabet[(v >> 18) & 0x3F]);
    out.push_back(k_alphabet[(v >> 12) & 0x3F]);
    out.push_back(rest == 2 ? k_alphabet[(v >> 6) & 0x3F] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> decode(std::string_view text, Padding padding) {
  if (padding == Padding::required) {
    if (text.size() % 4 != 0) return std::nullopt;
    size_t pad = 0;
    while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
    text.remove_suffix(pad);
    if (pad > 0 && text.size() % 4 + pad != 4) return std::nullopt;  // "====", "A==="
  } else {
    size_t pad = 0;
    while (pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
    // Padding may be left out; where it is written it must complete the last group of 4.
    if (pad > 2 || (pad > 0 && text.size() % 4 != 0)) return std::nullopt;
    text.remove_suffix(pad);
  }
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = value_of(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFFu);
    }
  }
  if (bits >= 6) return std::nullopt;  // a lone trailing character cannot encode a byte
  return out;
}

}  // namespace flytecd::base64
