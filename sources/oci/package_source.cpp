#include "sources/oci/package_source.hpp"

#include <fstream>
#include <sstream>

#include "sources/oci/digest.hpp"

namespace flytecd::sources::oci {
namespace {

class FetchingPackageSource : public PackageSource {
 public:
  explicit FetchingPackageSource(FetchOptions options) : m_fetcher(std::move(options)) {}

  Result<LoadedPackage> load(const PackageRef& ref, const LoadControl& control) override {
    auto fetched = m_fetcher.fetch(ref, control.cancel);
    if (!fetched) return fetched.error();
    std::ifstream in(fetched->path, std::ios::binary);
    if (!in)
      return make_error(ErrorCode::internal,
                        "package cache: cannot read " + fetched->path.string());
    std::stringstream ss;
    ss << in.rdbuf();
    LoadedPackage out;
    out.reference = ref.to_string();
    out.bytes = ss.str();
    out.digest = fetched->digest;
    out.manifest_digest = fetched->manifest_digest;
    out.from_cache = fetched->from_cache;
    // The cache is a directory others can write: what we read must still be what was verified.
    if (sha256_digest(out.bytes) != out.digest)
      return make_error(ErrorCode::internal, "package cache: " + fetched->path.string() +
                                                 " no longer matches " + out.digest);
    return out;
  }

 private:
  PackageFetcher m_fetcher;
};

}  // namespace

std::unique_ptr<PackageSource> make_package_source(FetchOptions options) {
  return std::make_unique<FetchingPackageSource>(std::move(options));
}

}  // namespace flytecd::sources::oci
