#include "sources/package_ref.hpp"

#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"

namespace flytecd::sources {

bool valid_oci_repository(const std::string& repo) {
  return repo.size() <= 255 && scan::is_oci_repository_pattern(repo);
}

bool valid_oci_tag(const std::string& tag) { return scan::is_oci_tag(tag); }

bool valid_sha256_digest(const std::string& digest) { return scan::is_sha256_digest(digest); }

bool url_safe_version(const std::string& version) { return scan::is_url_safe(version); }

namespace {

// "sha256:<hex>" -> "sha256=<hex>".
std::string pin_fragment(const std::string& digest) {
  std::string out = digest;
  if (auto colon = out.find(':'); colon != std::string::npos) out[colon] = '=';
  return out;
}

}  // namespace

std::string PackageRef::to_string() const {
  switch (kind) {
    case Kind::oci: {
      std::string s = "oci://" + registry + "/" + repository;
      if (!tag.empty()) s += ":" + tag;
      if (!digest.empty()) s += "@" + digest;
      return s;
    }
    // A pin is written as documents write it ("#sha256=<hex>"), so what flytecd prints is
    // accepted back by validate.
    case Kind::https:
      return digest.empty() ? url : url + "#" + pin_fragment(digest);
    case Kind::path:
      return digest.empty() ? path : path + "#" + pin_fragment(digest);
  }
  return {};
}

namespace {

// Hosts are DNS names (at most 253) plus a port; URLs are bounded as browsers and registries do.
constexpr size_t k_max_host_length = 261;
constexpr size_t k_max_url_length = 8192;

// https://host[:port]/path with no whitespace in the path.
bool https_url(std::string_view text) {
  constexpr std::string_view k_scheme = "https://";
  if (text.substr(0, k_scheme.size()) != k_scheme) return false;
  std::string_view rest = text.substr(k_scheme.size());
  auto slash = rest.find('/');
  if (slash == std::string_view::npos || !scan::is_loose_host_port(rest.substr(0, slash)))
    return false;
  for (char c : rest.substr(slash))
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return false;
  return true;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<std::string> split_pin(std::string& text, std::string& error) {
  auto hash = text.find('#');
  if (hash == std::string::npos) return std::string();
  std::string frag = text.substr(hash + 1);
  text.erase(hash);
  if (frag.rfind("sha256=", 0) != 0 || !valid_sha256_digest("sha256:" + frag.substr(7))) {
    error =
        "bad pin '#" + scan::printable(frag) + "'; expected '#sha256=<64 lowercase hex digits>'";
    return std::nullopt;
  }
  return "sha256:" + frag.substr(7);
}
}  // namespace

namespace {

// oci://host[:port]/repository(:tag|@sha256:…|both)
std::optional<PackageRef> parse_oci(const std::string& input, std::string& error) {
  PackageRef ref;
  ref.kind = PackageRef::Kind::oci;
  std::string rest = input.substr(6);
  auto slash = rest.find('/');
  if (slash == std::string::npos || slash == 0) {
    error = "'" + scan::printable(input) +
            "' has no registry host; expected oci://host[:port]/repository:tag";
    return std::nullopt;
  }
  ref.registry = rest.substr(0, slash);
  if (ref.registry.size() > k_max_host_length) {
    error = "registry host of " + std::to_string(ref.registry.size()) +
            " characters; expected at most " + std::to_string(k_max_host_length);
    return std::nullopt;
  }
  if (!scan::is_host_port(ref.registry)) {
    error = "bad registry host '" + scan::printable(ref.registry) + "'; expected host or host:port";
    return std::nullopt;
  }
  std::string path = rest.substr(slash + 1);
  if (auto at = path.find('@'); at != std::string::npos) {
    ref.digest = path.substr(at + 1);
    path.erase(at);
    if (!valid_sha256_digest(ref.digest)) {
      error = "bad digest '" + scan::printable(ref.digest) +
              "'; expected sha256:<64 lowercase hex digits>";
      return std::nullopt;
    }
  }
  auto colon = path.rfind(':');
  if (colon != std::string::npos && path.find('/', colon) == std::string::npos) {
    ref.tag = path.substr(colon + 1);
    path.erase(colon);
    if (!valid_oci_tag(ref.tag)) {
      error =
          "bad tag '" + scan::printable(ref.tag) + "'; expected [A-Za-z0-9_][A-Za-z0-9._-]{0,127}";
      return std::nullopt;
    }
  }
  ref.repository = path;
  if (!valid_oci_repository(ref.repository)) {
    error = "bad repository '" + scan::printable(ref.repository) +
            "'; expected lowercase path components like flyte/core-examples";
    return std::nullopt;
  }
  if (ref.tag.empty() && ref.digest.empty()) {
    error = "'" + scan::printable(input) +
            "' names neither a tag nor a digest; expected …:tag or …@sha256:…";
    return std::nullopt;
  }
  return ref;
}

// https://host[:port]/path[#sha256=…]
std::optional<PackageRef> parse_https(const std::string& input, std::string& error) {
  PackageRef ref;
  ref.kind = PackageRef::Kind::https;
  std::string text = input;
  auto pin = split_pin(text, error);
  if (!pin) return std::nullopt;
  ref.digest = *pin;
  if (text.size() > k_max_url_length) {
    error = "https URL of " + std::to_string(text.size()) + " characters; expected at most " +
            std::to_string(k_max_url_length);
    return std::nullopt;
  }
  if (!https_url(text)) {
    error = "'" + scan::printable(input) +
            "' is not a valid https URL; expected https://host[:port]/path[#sha256=…]";
    return std::nullopt;
  }
  ref.url = text;
  return ref;
}

// A repository-relative archive path[#sha256=…].
std::optional<PackageRef> parse_path(const std::string& input, std::string& error) {
  PackageRef ref;
  ref.kind = PackageRef::Kind::path;
  std::string text = input;
  auto pin = split_pin(text, error);
  if (!pin) return std::nullopt;
  ref.digest = *pin;
  if (text.empty()) {
    error =
        "'" + scan::printable(input) + "' has a pin but no path; expected <path>.tgz#sha256=<hex>";
    return std::nullopt;
  }
  if (text.front() == '/') {
    error = "absolute path '" + scan::printable(text) +
            "'; expected a path relative to the repository root";
    return std::nullopt;
  }
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('/', start);
    if (end == std::string::npos) end = text.size();
    if (text.compare(start, end - start, "..") == 0) {
      error = "path '" + scan::printable(text) +
              "' leaves the repository ('..'); expected a path inside it";
      return std::nullopt;
    }
    start = end + 1;
  }
  if (!ends_with(text, ".tgz") && !ends_with(text, ".tar.gz") && !ends_with(text, ".tar")) {
    error = "path '" + scan::printable(text) +
            "' is not an archive; expected a .tgz, .tar.gz or .tar file from pyflyte package";
    return std::nullopt;
  }
  ref.path = text;
  return ref;
}

}  // namespace

std::optional<PackageRef> parse_package_ref(const std::string& input, std::string& error) {
  if (input.empty()) {
    error =
        "empty package address; expected oci://host/repo:tag, oci://host/repo@sha256:…, https://… "
        "or a path";
    return std::nullopt;
  }
  // Documents are UTF-8 (libyaml refuses anything else); an address from elsewhere that is not
  // would reach JSON, the ledger and OCI requests as bytes nothing can print (issue 27).
  if (!text::valid_utf8(input)) {
    error = "package address '" + scan::printable(input) + "' is not valid UTF-8";
    return std::nullopt;
  }
  if (input.rfind("oci://", 0) == 0) return parse_oci(input, error);
  if (input.rfind("https://", 0) == 0) return parse_https(input, error);
  if (input.find("://") != std::string::npos) {
    error = "unsupported scheme in '" + scan::printable(input) +
            "'; expected oci://, https:// or a repository-relative path";
    return std::nullopt;
  }
  return parse_path(input, error);
}

}  // namespace flytecd::sources
