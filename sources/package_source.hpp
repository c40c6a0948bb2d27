#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/common/result.hpp"
#include "sources/package_ref.hpp"
#include "sources/verify_policy.hpp"

namespace flytecd::sources {

// A package's bytes and their identity.
struct LoadedPackage {
  std::string reference;        // what was fetched (FlyteRegistration: the expanded OCI address)
  std::string digest;           // "sha256:…" of the archive bytes
  std::string manifest_digest;  // OCI only
  std::string bytes;
  bool from_cache = false;
  std::optional<Signer> signer;  // set when a signature policy applied and verified
};

// The largest package read from a repository (same bound as an OCI blob by default).
inline constexpr uint64_t k_max_repo_package_bytes = 512ull << 20;

// Reads a file of the revision being reconciled (repository-relative path).
using RepoFileReader = std::function<Result<std::string>(const std::string& path)>;

// What a caller lets one load do: its cancel flag (the pass's: SIGTERM, leadership lost) aborts
// a transfer in flight.
struct LoadControl {
  const std::atomic<bool>* cancel = nullptr;
};

// Gets the bytes of the package at an address. Implementations: OCI registries and HTTPS URLs
// through a content-addressed cache (sources/oci/package_source.hpp), files of the revision
// (sources/local/package_source.hpp). Thread-safe: registrations load packages concurrently.
class PackageSource {
 public:
  virtual ~PackageSource() = default;
  // The bytes `ref` names, verified against its pin when it has one. Errors: invalid_input (a
  // kind this source does not serve, content that does not match the pin, too large),
  // not_found, unauthenticated, permission_denied, unavailable/timeout (retryable; a source that
  // fetches bounds each load by its own deadline), internal; unavailable "cancelled".
  virtual Result<LoadedPackage> load(const PackageRef& ref, const LoadControl& control) = 0;
  Result<LoadedPackage> load(const PackageRef& ref) { return load(ref, LoadControl{}); }

  // Who signed the manifest `manifest_digest` at `ref`, checked against `policy`. Errors:
  // permission_denied (unsigned, or no signature matches), invalid_input (the policy's key or
  // trusted root is unusable, or this source's packages carry no signatures), the registry's.
  virtual Result<Signer> verify(const PackageRef& ref, const std::string& manifest_digest,
                                const VerifyPolicy& policy, const LoadControl& control) {
    (void)manifest_digest, (void)policy, (void)control;
    return make_error(ErrorCode::invalid_input,
                      "'" + ref.to_string() +
                          "' is not an OCI package: only oci:// packages carry cosign signatures");
  }
};

}  // namespace flytecd::sources
