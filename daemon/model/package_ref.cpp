#include "daemon/model/package_ref.hpp"

#include <regex>

namespace flytecd::model {

bool valid_oci_repository(const std::string& repo) {
  static const std::regex k_repo(
      R"(^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$)");
  return repo.size() <= 255 && std::regex_match(repo, k_repo);
}

bool valid_oci_tag(const std::string& tag) {
  static const std::regex k_tag(R"(^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$)");
  return std::regex_match(tag, k_tag);
}

bool valid_sha256_digest(const std::string& digest) {
  static const std::regex k_digest(R"(^sha256:[a-f0-9]{64}$)");
  return std::regex_match(digest, k_digest);
}

bool url_safe_version(const std::string& version) {
  static const std::regex k_version(R"(^[A-Za-z0-9._~-]+$)");
  return std::regex_match(version, k_version);
}

std::string PackageRef::to_string() const {
  switch (kind) {
    case Kind::oci: {
      std::string s = "oci://" + registry + "/" + repository;
      if (!tag.empty()) s += ":" + tag;
      if (!digest.empty()) s += "@" + digest;
      return s;
    }
    case Kind::https:
      return digest.empty() ? url : url + "#" + digest;
    case Kind::path:
      return digest.empty() ? path : path + "#" + digest;
  }
  return {};
}

namespace {
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
    error = "bad pin '#" + frag + "'; expected '#sha256=<64 lowercase hex digits>'";
    return std::nullopt;
  }
  return "sha256:" + frag.substr(7);
}
}  // namespace

std::optional<PackageRef> parse_package_ref(const std::string& input, std::string& error) {
  PackageRef ref;
  if (input.empty()) {
    error =
        "empty package address; expected oci://host/repo:tag, oci://host/repo@sha256:…, https://… "
        "or a path";
    return std::nullopt;
  }
  if (input.rfind("oci://", 0) == 0) {
    ref.kind = PackageRef::Kind::oci;
    std::string rest = input.substr(6);
    auto slash = rest.find('/');
    if (slash == std::string::npos || slash == 0) {
      error = "'" + input + "' has no registry host; expected oci://host[:port]/repository:tag";
      return std::nullopt;
    }
    ref.registry = rest.substr(0, slash);
    static const std::regex k_host(
        R"(^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$|^\[[0-9a-fA-F:]+\](:[0-9]{1,5})?$)");
    if (!std::regex_match(ref.registry, k_host)) {
      error = "bad registry host '" + ref.registry + "'; expected host or host:port";
      return std::nullopt;
    }
    std::string path = rest.substr(slash + 1);
    if (auto at = path.find('@'); at != std::string::npos) {
      ref.digest = path.substr(at + 1);
      path.erase(at);
      if (!valid_sha256_digest(ref.digest)) {
        error = "bad digest '" + ref.digest + "'; expected sha256:<64 lowercase hex digits>";
        return std::nullopt;
      }
    }
    auto colon = path.rfind(':');
    if (colon != std::string::npos && path.find('/', colon) == std::string::npos) {
      ref.tag = path.substr(colon + 1);
      path.erase(colon);
      if (!valid_oci_tag(ref.tag)) {
        error = "bad tag '" + ref.tag + "'; expected [A-Za-z0-9_][A-Za-z0-9._-]{0,127}";
        return std::nullopt;
      }
    }
    ref.repository = path;
    if (!valid_oci_repository(ref.repository)) {
      error = "bad repository '" + ref.repository +
              "'; expected lowercase path components like flyte/core-examples";
      return std::nullopt;
    }
    if (ref.tag.empty() && ref.digest.empty()) {
      error = "'" + input + "' names neither a tag nor a digest; expected …:tag or …@sha256:…";
      return std::nullopt;
    }
    return ref;
  }
  if (input.rfind("https://", 0) == 0) {
    ref.kind = PackageRef::Kind::https;
    std::string text = input;
    auto pin = split_pin(text, error);
    if (!pin) return std::nullopt;
    ref.digest = *pin;
    static const std::regex k_url(R"(^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?/[^\s]*$)");
    if (!std::regex_match(text, k_url)) {
      error =
          "'" + input + "' is not a valid https URL; expected https://host[:port]/path[#sha256=…]";
      return std::nullopt;
    }
    ref.url = text;
    return ref;
  }
  if (input.find("://") != std::string::npos) {
    error = "unsupported scheme in '" + input +
            "'; expected oci://, https:// or a repository-relative path";
    return std::nullopt;
  }
  ref.kind = PackageRef::Kind::path;
  std::string text = input;
  auto pin = split_pin(text, error);
  if (!pin) return std::nullopt;
  ref.digest = *pin;
  if (text.empty()) {
    error = "'" + input + "' has a pin but no path; expected <path>.tgz#sha256=<hex>";
    return std::nullopt;
  }
  if (text.front() == '/') {
    error = "absolute path '" + text + "'; expected a path relative to the repository root";
    return std::nullopt;
  }
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('/', start);
    if (end == std::string::npos) end = text.size();
    if (text.compare(start, end - start, "..") == 0) {
      error = "path '" + text + "' leaves the repository ('..'); expected a path inside it";
      return std::nullopt;
    }
    start = end + 1;
  }
  if (!ends_with(text, ".tgz") && !ends_with(text, ".tar.gz") && !ends_with(text, ".tar")) {
    error = "path '" + text +
            "' is not an archive; expected a .tgz, .tar.gz or .tar file from pyflyte package";
    return std::nullopt;
  }
  ref.path = text;
  return ref;
}

}  // namespace flytecd::model
