#include "sources/git/known_hosts.hpp"

#include "daemon/common/base64.hpp"
#include "daemon/common/text.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <sstream>

namespace flytecd::sources::git {
namespace {

// OpenSSH's match_pattern: '*' any run, '?' any one character.
bool wildcard_match(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// "|1|base64(salt)|base64(HMAC-SHA1(salt, name))", as written by `ssh-keygen -H`.
bool hashed_match(std::string_view entry, const std::string& name) {
  if (entry.substr(0, 3) != "|1|") return false;
  entry.remove_prefix(3);
  auto bar = entry.find('|');
  if (bar == std::string_view::npos) return false;
  auto salt = base64_decode(entry.substr(0, bar));
  auto expected = base64_decode(entry.substr(bar + 1));
  if (!salt || !expected) return false;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha1(), salt->data(), static_cast<int>(salt->size()),
            reinterpret_cast<const unsigned char*>(name.data()), name.size(), digest, &len))
    return false;
  return expected->size() == len &&
         std::equal(expected->begin(), expected->end(), digest,
                    [](char a, unsigned char b) { return static_cast<unsigned char>(a) == b; });
}

// A comma-separated pattern list matches when some positive pattern matches and no negated one.
bool host_matches(std::string_view patterns, const std::string& name) {
  if (patterns.substr(0, 1) == "|") return hashed_match(patterns, name);
  bool matched = false;
  size_t start = 0;
  while (start <= patterns.size()) {
    auto end = patterns.find(',', start);
    if (end == std::string_view::npos) end = patterns.size();
    std::string pattern = text::ascii_lower(patterns.substr(start, end - start));
    start = end + 1;
    if (pattern.empty()) continue;
    bool negated = pattern.front() == '!';
    if (negated) pattern.erase(0, 1);
    if (wildcard_match(pattern, name)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

}  // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  return base64::decode(text, base64::Padding::optional);
}

std::string ssh_key_type(std::string_view key_blob) {
  if (key_blob.size() < 4) return {};
  uint32_t len = 0;
  for (int i = 0; i < 4; ++i) len = (len << 8) | static_cast<unsigned char>(key_blob[i]);
  if (len > key_blob.size() - 4 || len > 64) return {};
  return std::string(key_blob.substr(4, len));
}

HostKeyVerdict check_known_hosts(std::string_view known_hosts_text, std::string_view host, int port,
                                 std::string_view key_blob) {
  // OpenSSH writes non-default ports as "[host]:port".
  const std::string name = port == 22 || port == 0
                               ? text::ascii_lower(host)
                               : "[" + text::ascii_lower(host) + "]:" + std::to_string(port);
  HostKeyVerdict verdict;
  bool matched = false, listed = false, revoked = false;
  std::istringstream lines{std::string(known_hosts_text)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string first, patterns, type, key;
    if (!(fields >> first) || first.front() == '#') continue;
    std::string marker;
    if (first.front() == '@') {
      marker = first;
      if (!(fields >> patterns)) continue;
    } else {
      patterns = first;
    }
    if (!(fields >> type >> key)) continue;
    if (marker == "@cert-authority" || !host_matches(patterns, name)) continue;
    auto blob = base64_decode(key);
    bool same_key = blob && *blob == key_blob;
    if (marker == "@revoked") {
      revoked = revoked || same_key;
      continue;
    }
    if (!marker.empty()) continue;  // unknown marker: never trust it
    listed = true;
    matched = matched || same_key;
    if (std::find(verdict.listed_types.begin(), verdict.listed_types.end(), type) ==
        verdict.listed_types.end())
      verdict.listed_types.push_back(type);
  }
  using O = HostKeyVerdict::Outcome;
  verdict.outcome = revoked   ? O::revoked
                    : matched ? O::match
                    : listed  ? O::mismatch
                              : O::unknown_host;
  return verdict;
}

}  // namespace flytecd::sources::git
