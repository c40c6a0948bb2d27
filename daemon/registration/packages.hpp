#pragma once

#include <functional>
#include <memory>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/config/config.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/model/package_ref.hpp"
#include "sources/oci/fetcher.hpp"

namespace flytecd::registration {

// A registration's package bytes and their identity.
struct LoadedPackage {
  std::string reference;        // what was fetched (FlyteRegistration: the expanded OCI address)
  std::string digest;           // "sha256:…" of the archive bytes
  std::string manifest_digest;  // OCI only
  std::string bytes;
  bool from_cache = false;
};

// The largest package read from a repository (same bound as an OCI blob by default).
inline constexpr uint64_t k_max_repo_package_bytes = 512ull << 20;

// Reads a file of the revision being reconciled (repository-relative path).
using RepoFileReader = std::function<Result<std::string>(const std::string& path)>;

// Gets the package of a registration. Thread-safe.
class PackageSource {
 public:
  virtual ~PackageSource() = default;
  virtual Result<LoadedPackage> load(const model::Registration& r) = 0;
};

// OCI and HTTPS packages through the fetcher (content-addressed cache), repository paths through
// `read_repo_file`. FlyteRegistration's registry-relative package is <registry>/<uri>:<version>.
class DefaultPackageSource : public PackageSource {
 public:
  DefaultPackageSource(sources::oci::FetchOptions options, std::string registry,
                       RepoFileReader read_repo_file);
  Result<LoadedPackage> load(const model::Registration& r) override;

 private:
  sources::oci::PackageFetcher m_fetcher;
  std::string m_registry;
  RepoFileReader m_read;
};

// The package reference a registration names, expanded (registry-relative -> oci://…).
Result<model::PackageRef> package_ref_of(const model::Registration& r, const std::string& registry);

// The fetcher settings of flytecd's `packages:` config (cache under <stateDir>/packages).
sources::oci::FetchOptions fetch_options(const config::PackagesConfig& cfg,
                                         const std::string& state_dir);

// A reader for a repository checked out (or kept) as a directory: rejects paths that leave it.
RepoFileReader directory_reader(const std::string& root,
                                uint64_t max_bytes = k_max_repo_package_bytes);

}  // namespace flytecd::registration
