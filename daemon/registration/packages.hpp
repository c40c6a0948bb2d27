#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/model/package_ref.hpp"
#include "sources/oci/fetcher.hpp"
#include "sources/package_source.hpp"

namespace flytecd::registration {

// A package's values are declared with the sources::PackageSource interface that produces them
// (sources/package_source.hpp); the registration code keeps its names for them.
using sources::k_max_repo_package_bytes;
using sources::LoadControl;
using sources::LoadedPackage;
using sources::RepoFileReader;

// Gets the package of a registration (there is one package-source interface,
// sources::PackageSource; this resolves a document to a reference for it): expands the reference
// the document names (package_ref_of) and loads it from the sources::PackageSource for its kind.
// Thread-safe.
class PackageResolver {
 public:
  virtual ~PackageResolver() = default;
  // Errors: invalid_input (the reference does not parse or needs an unconfigured registry), then
  // whatever sources::PackageSource::load reports. `control.cancel` aborts a transfer in flight.
  virtual Result<LoadedPackage> load(const model::Registration& r, const LoadControl& control) = 0;
  Result<LoadedPackage> load(const model::Registration& r) { return load(r, LoadControl{}); }
  // What load(r) reads: registrations with the same non-empty identity load the same package
  // (the same address under the same signature policy), so one plan may load it once for all of
  // them. Empty (the default): each loads on its own.
  virtual std::string identity(const model::Registration& r) const {
    (void)r;
    return {};
  }
};

// OCI and HTTPS packages through the fetcher (content-addressed cache), repository paths through
// `read_repo_file`. FlyteRegistration's registry-relative package is <registry>/<uri>:<version>.
// Signature policies: a registration's own verify:, else the packages.verify entry with the
// longest prefix of the package's address. A package with a policy loads only when a signature
// verifies; its signer is in LoadedPackage::signer.
struct Verification {
  std::vector<sources::VerifySpec> defaults;  // packages.verify
  std::string trusted_root_file;              // packages.trustedRoot (keyless policies)
  RepoFileReader read_repo_file;              // verify.key: a file of the revision
};

class DefaultPackageResolver : public PackageResolver {
 public:
  using ByKind = std::map<model::PackageRef::Kind, std::shared_ptr<sources::PackageSource>>;
  // Each reference goes to the source of its kind (the daemon's table: wiring::package_backends);
  // a kind without one is an invalid_input error naming it.
  DefaultPackageResolver(ByKind by_kind, std::string registry, Verification verification = {});
  // The built-in pair: one fetcher for oci:// and https:// (one cache), and `read_repo_file`.
  DefaultPackageResolver(sources::oci::FetchOptions options, std::string registry,
                         RepoFileReader read_repo_file, Verification verification = {});
  using PackageResolver::load;
  Result<LoadedPackage> load(const model::Registration& r, const LoadControl& control) override;
  // The expanded address, when no verify: of its own applies (the default policy then follows
  // from the address); empty otherwise.
  std::string identity(const model::Registration& r) const override;

 private:
  Result<sources::VerifyPolicy> policy_of(const sources::VerifySpec& spec) const;

  ByKind m_by_kind;
  std::string m_registry;
  Verification m_verification;
};

// The policy that applies to a registration whose package is at `address`: its own, else the
// default with the longest matching prefix, else none. Pure.
const sources::VerifySpec* verify_spec_for(const model::Registration& r, const std::string& address,
                                           const std::vector<sources::VerifySpec>& defaults);

// The package reference a registration names, expanded (registry-relative -> oci://…).
Result<model::PackageRef> package_ref_of(const model::Registration& r, const std::string& registry);

// A reader for a repository checked out (or kept) as a directory: rejects paths that leave it.
RepoFileReader directory_reader(const std::string& root,
                                uint64_t max_bytes = k_max_repo_package_bytes);

}  // namespace flytecd::registration
