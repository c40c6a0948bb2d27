#pragma once

#include <optional>
#include <string>

namespace flytecd::sources {

// Where a workflow package lives. Parsing only; fetching is the OCI/HTTPS sources' job.
struct PackageRef {
  enum class Kind { oci, https, path } kind = Kind::path;
  std::string registry;    // oci: host[:port]
  std::string repository;  // oci: "flyte/core-examples"
  std::string tag;         // oci: tag (may be empty when digest is set)
  std::string digest;      // "sha256:<64 hex>" (oci digest, or https/path pin), may be empty
  std::string url;         // https: the URL without the pin fragment
  std::string path;        // path: repository-relative file

  bool pinned() const { return !digest.empty(); }
  std::string to_string() const;
};

// Parses "oci://host[:port]/repo[:tag][@sha256:…]", "https://…[#sha256=…]" or a repository-relative
// path ending in .tgz/.tar.gz/.tar (no "..", not absolute). On failure returns nullopt and sets
// `error` to what was wrong and what was expected.
std::optional<PackageRef> parse_package_ref(const std::string& text, std::string& error);

// OCI distribution-spec grammar checks.
bool valid_oci_repository(const std::string& repo);
bool valid_oci_tag(const std::string& tag);
bool valid_sha256_digest(const std::string& digest);

// FlyteAdmin's notion of a URL-safe version: only [A-Za-z0-9-_.~] (what url.QueryEscape keeps).
bool url_safe_version(const std::string& version);

}  // namespace flytecd::sources
