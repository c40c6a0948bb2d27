#include "daemon/common/text.hpp"

#include <ctime>

#include <charconv>
#include <cstdint>
#include <cstring>

namespace flytecd::text {
namespace {

// The length of the well-formed sequence starting at s[i], or 0 when the bytes there are not
// one (Table 3-7 of the Unicode standard). `*bad` is then the length of the maximal ill-formed
// subpart, to be replaced by one U+FFFD.
std::size_t sequence_at(std::string_view s, std::size_t i, std::size_t* bad) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  *bad = 1;
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // at most U+10FFFF
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong) or F5..FF
  }
  for (std::size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) {
      *bad = k;
      return 0;
    }
    const unsigned char d = b(i + k);
    const bool ok = k == 1 ? d >= lo && d <= hi : d >= 0x80 && d <= 0xBF;
    if (!ok) {
      *bad = k;
      return 0;
    }
  }
  return n;
}

constexpr std::string_view k_replacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::size_t utf8_char_length(std::string_view s, std::size_t i) {
  std::size_t bad = 0;
  return sequence_at(s, i, &bad);
}

bool valid_utf8(std::string_view s) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < s.size();) {
    // ASCII, most of what passes here, eight bytes at a time.
    while (i + 8 <= s.size()) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if (word & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i == s.size()) break;
    const std::size_t n = sequence_at(s, i, &bad);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string to_utf8_lossy(std::string_view s) {
  if (valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (const std::size_t n = sequence_at(s, i, &bad); n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append(k_replacement);
      i += bad;
    }
  }
  return out;
}

std::string latin1_to_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out += ch;
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

std::string cut_utf8(std::string_view s, std::size_t max_bytes) {
  std::string out = to_utf8_lossy(s);
  if (out.size() <= max_bytes) return out;
  std::size_t n = max_bytes;
  // Back to the first byte of the character that would be cut (at most 3 continuation bytes).
  while (n > 0 && (static_cast<unsigned char>(out[n]) & 0xC0) == 0x80) --n;
  out.resize(n);
  return out;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string quote_escaped(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::string rfc3339_utc_if_known(int64_t unix_seconds) {
  return unix_seconds > 0 ? rfc3339_utc(unix_seconds) : std::string();
}

std::string rfc3339_utc(int64_t unix_seconds) {
  const auto tt = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    const size_t at = s.find(sep, start);
    out.emplace_back(s.substr(start, at == std::string_view::npos ? s.npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::optional<int64_t> parse_int64(std::string_view s) {
  int64_t v = 0;
  const char* begin = s.data();
  if (!s.empty() && s.front() == '+') ++begin;
  auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || begin == s.data() + s.size())
    return std::nullopt;
  return v;
}

}  // namespace flytecd::text
