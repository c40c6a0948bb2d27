#include "sources/git/url.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"

namespace flytecd::sources::git {
namespace {

// Splits "[user[:password]@]host[:port]" (host may be a bracketed IPv6 literal).
Result<RemoteUrl> parse_authority(std::string_view authority, RemoteUrl url) {
  auto at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    auto colon = userinfo.find(':');
    url.user = std::string(userinfo.substr(0, colon));
    url.has_password = colon != std::string_view::npos;
    authority.remove_prefix(at + 1);
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return make_error(ErrorCode::invalid_input, "unterminated IPv6 address in remote URL");
    host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() == ':') port = rest.substr(1);
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return make_error(ErrorCode::invalid_input, "remote URL has no host");
  url.host = text::ascii_lower(host);
  if (!port.empty()) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || ptr != port.data() + port.size() || value <= 0 || value > 65535)
      return make_error(ErrorCode::invalid_input,
                        "remote URL has an invalid port '" + scan::printable(port) + "'");
    url.port = value;
  }
  return url;
}

}  // namespace

Result<RemoteUrl> parse_remote_url(std::string_view url) {
  if (url.empty()) return make_error(ErrorCode::invalid_input, "remote URL is empty");
  RemoteUrl out;
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    // scp-like "[user@]host:path": a ':' before any '/', and not a relative or absolute path.
    auto colon = url.find(':');
    auto slash = url.find('/');
    bool scp = colon != std::string_view::npos && colon > 0 &&
               (slash == std::string_view::npos || colon < slash) && url.front() != '.' &&
               url.front() != '/';
    if (!scp) return out;  // a local path
    out.transport = Transport::ssh;
    out.port = 22;
    // A ':' in scp-like syntax separates the path, never a port, so parse host and user only.
    std::string_view authority = url.substr(0, colon);
    auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
      out.user = std::string(authority.substr(0, at));
      authority.remove_prefix(at + 1);
    }
    if (authority.empty()) return make_error(ErrorCode::invalid_input, "remote URL has no host");
    out.host = text::ascii_lower(authority);
    return out;
  }
  const std::string scheme = text::ascii_lower(url.substr(0, scheme_end));
  std::string_view rest = url.substr(scheme_end + 3);
  if (scheme == "file") {
    out.transport = Transport::file;
    return out;
  }
  if (scheme == "https") {
    out.transport = Transport::https;
    out.port = 443;
  } else if (scheme == "http") {
    out.transport = Transport::http;
    out.port = 80;
  } else if (scheme == "git") {
    out.transport = Transport::git;
    out.port = 9418;
  } else if (scheme == "ssh" || scheme == "git+ssh" || scheme == "ssh+git") {
    out.transport = Transport::ssh;
    out.port = 22;
  } else {
    return make_error(ErrorCode::invalid_input,
                      "unsupported remote URL scheme '" + scan::printable(scheme) +
                          "' (use https://, http://, ssh://, git://, file:// or a local path)");
  }
  auto path = rest.find_first_of("/?#");
  return parse_authority(rest.substr(0, path), out);
}

bool is_network(Transport transport) {
  return transport != Transport::local && transport != Transport::file;
}

Result<std::string> normalize_subpath(std::string_view subpath) {
  if (subpath.find('\0') != std::string_view::npos || subpath.find('\\') != std::string_view::npos)
    return make_error(ErrorCode::invalid_input, "subpath must be a '/'-separated relative path");
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= subpath.size()) {
    auto end = subpath.find('/', start);
    if (end == std::string_view::npos) end = subpath.size();
    std::string_view part = subpath.substr(start, end - start);
    if (part == "..")
      return make_error(ErrorCode::invalid_input,
                        "subpath '" + scan::printable(subpath) + "' escapes the repository ('..')");
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  std::string out;
  for (auto part : parts) {
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

std::string mirror_dir_name(std::string_view redacted_url) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : redacted_url) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  // The last two path components make the directory recognisable to an operator.
  std::string_view tail = redacted_url;
  while (!tail.empty() && (tail.back() == '/')) tail.remove_suffix(1);
  auto cut = tail.find_last_of("/:");
  if (cut != std::string_view::npos && cut > 0) {
    auto prev = tail.find_last_of("/:", cut - 1);
    tail = tail.substr(prev == std::string_view::npos ? 0 : prev + 1);
  }
  std::string slug;
  for (char c : tail) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    slug += keep ? c : '-';
    if (slug.size() >= 48) break;
  }
  while (!slug.empty() && (slug.front() == '.' || slug.front() == '-')) slug.erase(0, 1);
  if (slug.size() > 4 && slug.compare(slug.size() - 4, 4, ".git") == 0)
    slug.resize(slug.size() - 4);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return (slug.empty() ? std::string("repo") : slug) + "-" + hex + ".git";
}

bool is_full_commit_id(std::string_view s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

}  // namespace flytecd::sources::git
