#include "daemon/common/scan.hpp"

#include <algorithm>

#include "daemon/common/text.hpp"

namespace flytecd::scan {

namespace {

bool is_name_inner(char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; }

// Optional sign; returns the index after it.
size_t skip_sign(std::string_view s) {
  return !s.empty() && (s.front() == '-' || s.front() == '+') ? 1 : 0;
}

// Reads [0-9]* from i; returns how many digits were read.
size_t digits(std::string_view s, size_t& i) {
  size_t start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  return i - start;
}

bool port_digits(std::string_view port) {
  if (port.empty() || port.size() > 5) return false;
  for (char c : port)
    if (!is_digit(c)) return false;
  return true;
}

// One OCI path component: [a-z0-9]+ groups separated by '.', '_', '__' or '-+'.
bool oci_component(std::string_view c) {
  if (c.empty() || !is_lower_alnum(c.front()) || !is_lower_alnum(c.back())) return false;
  for (size_t i = 0; i < c.size();) {
    if (is_lower_alnum(c[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < c.size() && !is_lower_alnum(c[i])) ++i;
    std::string_view sep = c.substr(start, i - start);
    bool dashes = sep.find_first_not_of('-') == std::string_view::npos;
    if (!(sep == "." || sep == "_" || sep == "__" || dashes)) return false;
  }
  return true;
}

}  // namespace

bool dns1123_label_pattern(std::string_view s) {
  if (s.empty() || !is_lower_alnum(s.front()) || !is_lower_alnum(s.back())) return false;
  for (char c : s)
    if (!is_lower_alnum(c) && c != '-') return false;
  return true;
}

bool is_dns1123_label(std::string_view s) { return s.size() <= 63 && dns1123_label_pattern(s); }

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (size_t start = 0;;) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!dns1123_label_pattern(label)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_k8s_name_part(std::string_view s) {
  if (s.empty() || s.size() > 63 || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  for (char c : s)
    if (!is_name_inner(c)) return false;
  return true;
}

bool is_k8s_qualified_name(std::string_view s) {
  auto slash = s.find('/');
  if (slash == std::string_view::npos) return is_k8s_name_part(s);
  return is_dns1123_subdomain(s.substr(0, slash)) && is_k8s_name_part(s.substr(slash + 1));
}

bool is_k8s_label_value(std::string_view s) { return s.empty() || is_k8s_name_part(s); }

bool is_url_safe(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_alnum(c) && c != '.' && c != '_' && c != '~' && c != '-') return false;
  return true;
}

bool is_sha256_digest(std::string_view s) {
  constexpr std::string_view k_prefix = "sha256:";
  if (s.size() != k_prefix.size() + 64 || s.substr(0, k_prefix.size()) != k_prefix) return false;
  for (char c : s.substr(k_prefix.size()))
    if (!is_digit(c) && !(c >= 'a' && c <= 'f')) return false;
  return true;
}

bool is_oci_tag(std::string_view s) {
  if (s.empty() || s.size() > 128 || !(is_alnum(s.front()) || s.front() == '_')) return false;
  for (char c : s)
    if (!is_alnum(c) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

bool is_oci_repository_pattern(std::string_view s) {
  for (size_t start = 0;;) {
    size_t slash = s.find('/', start);
    if (!oci_component(s.substr(start, slash == std::string_view::npos ? s.npos : slash - start)))
      return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

bool is_host_port(std::string_view s) {
  std::string_view host = s;
  std::string_view port;
  bool has_port = false;
  if (!s.empty() && s.front() == '[') {
    auto close = s.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    for (char c : s.substr(1, close - 1))
      if (!is_digit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F') && c != ':')
        return false;
    std::string_view rest = s.substr(close + 1);
    if (rest.empty()) return true;
    return rest.front() == ':' && port_digits(rest.substr(1));
  }
  if (auto colon = s.find(':'); colon != std::string_view::npos) {
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
    has_port = true;
  }
  if (has_port && !port_digits(port)) return false;
  if (host.empty() || !is_alnum(host.front()) || !is_alnum(host.back())) return false;
  for (char c : host)
    if (!is_alnum(c) && c != '.' && c != '-') return false;
  return true;
}

bool is_loose_host_port(std::string_view s) {
  std::string_view host = s;
  if (auto colon = s.find(':'); colon != std::string_view::npos) {
    host = s.substr(0, colon);
    if (!port_digits(s.substr(colon + 1))) return false;
  }
  if (host.empty()) return false;
  for (char c : host)
    if (!is_alnum(c) && c != '.' && c != '-') return false;
  return true;
}

bool is_integer_text(std::string_view s) {
  size_t i = skip_sign(s);
  return digits(s, i) > 0 && i == s.size();
}

bool is_float_text(std::string_view s) {
  size_t i = skip_sign(s);
  size_t whole = digits(s, i);
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t frac = digits(s, i);
    if (whole == 0 && frac == 0) return false;
  } else if (whole == 0) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits(s, i) == 0) return false;
  }
  return i == s.size();
}

bool looks_numeric(std::string_view s) {
  size_t i = skip_sign(s);
  size_t start = i;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '.')) ++i;
  if (i == start) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits(s, i) == 0) return false;
  }
  return i == s.size();
}

bool is_proto_duration(std::string_view s) {
  size_t i = !s.empty() && s.front() == '-' ? 1 : 0;
  if (digits(s, i) == 0) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t frac = digits(s, i);
    if (frac == 0 || frac > 9) return false;
  }
  return i + 1 == s.size() && s[i] == 's';
}

bool is_base64_text(std::string_view s) {
  size_t i = 0;
  while (i < s.size() &&
         (is_alnum(s[i]) || s[i] == '+' || s[i] == '/' || s[i] == '_' || s[i] == '-'))
    ++i;
  size_t pad = 0;
  while (i < s.size() && s[i] == '=' && pad < 2) {
    ++i;
    ++pad;
  }
  return i == s.size();
}

std::string printable(std::string_view s, size_t max_bytes) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  size_t n = std::min(s.size(), max_bytes);
  // Do not cut a UTF-8 sequence in half.
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  out.reserve(n + 16);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c >= 0x80) {
          // UTF-8 characters are kept; a byte that is not part of one is shown as \xNN, so the
          // result is always valid UTF-8 (JSON, status, the ledger).
          if (const size_t len = text::utf8_char_length(s.substr(0, n), i); len > 0) {
            out.append(s.substr(i, len));
            i += len - 1;
          } else {
            out += "\\x";
            out += k_hex[c >> 4];
            out += k_hex[c & 0xF];
          }
        } else if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += k_hex[c >> 4];
          out += k_hex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  if (n < s.size()) out += "… (" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace flytecd::scan
