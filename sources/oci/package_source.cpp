#include "sources/oci/package_source.hpp"

#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
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

  Result<Signer> verify(const PackageRef& ref, const std::string& manifest_digest,
                        const VerifyPolicy& policy, const LoadControl& control) override {
    if (ref.kind != PackageRef::Kind::oci || manifest_digest.empty())
      return PackageSource::verify(ref, manifest_digest, policy, control);
    // A verified (digest, policy) stays verified: an unchanged registration is not checked
    // against the registry on every pass. Failures are not kept (a signature may be pushed).
    const std::string key = ref.registry + "/" + ref.repository + "@" + manifest_digest + "|" +
                            sha256_digest(policy.public_key_pem + "|" + policy.describe() + "|" +
                                          policy.trusted_root_json);
    {
      std::lock_guard<std::mutex> g(m_mu);
      if (auto it = m_verified.find(key); it != m_verified.end()) return it->second;
    }
    auto evidence = m_fetcher.signatures(ref, manifest_digest, control.cancel);
    if (!evidence) return evidence.error();
    auto signer =
        verify_signatures(*evidence, manifest_digest, ref.registry + "/" + ref.repository, policy);
    if (!signer) return signer.error();
    std::lock_guard<std::mutex> g(m_mu);
    if (m_verified.size() > 4096) m_verified.clear();
    m_verified.emplace(key, *signer);
    return signer;
  }

 private:
  PackageFetcher m_fetcher;
  std::mutex m_mu;
  std::map<std::string, Signer> m_verified;
};

}  // namespace

std::unique_ptr<PackageSource> make_package_source(FetchOptions options) {
  return std::make_unique<FetchingPackageSource>(std::move(options));
}

}  // namespace flytecd::sources::oci
