#include "daemon/registration/packages.hpp"

#include "daemon/common/atomic_file.hpp"
#include "sources/local/directory_reader.hpp"
#include "sources/local/package_source.hpp"
#include "sources/oci/package_source.hpp"

namespace flytecd::registration {
namespace {

// A file on this machine (a key, a trusted root), bounded. Errors name the path, never the bytes.
Result<std::string> read_local_file(const std::string& path, uint64_t max_bytes) {
  auto file = read_small_file(path, max_bytes, "file");
  if (!file) return file.error();
  if (!*file) return make_error(ErrorCode::not_found, path + ": no such file");
  return std::move(**file);
}

}  // namespace

Result<model::PackageRef> package_ref_of(const model::Registration& r,
                                         const std::string& registry) {
  std::string text = r.package;
  if (r.registry_relative) {
    if (registry.empty())
      return make_error(ErrorCode::invalid_input,
                        r.where.file + ":" + std::to_string(r.where.line) + ": " + r.source_kind +
                            " " + r.name + " names '" + r.package +
                            "' relative to the configured registry, but no registry is "
                            "configured (set packages.registry in flytecd's config)");
    text = "oci://" + registry + "/" + r.package + ":" + r.version;
  }
  std::string error;
  auto ref = model::parse_package_ref(text, error);
  if (!ref) return make_error(ErrorCode::invalid_input, "package '" + text + "': " + error);
  return *ref;
}

DefaultPackageResolver::DefaultPackageResolver(ByKind by_kind, std::string registry,
                                               Verification verification)
    : m_by_kind(std::move(by_kind)),
      m_registry(std::move(registry)),
      m_verification(std::move(verification)) {}

const sources::VerifySpec* verify_spec_for(const model::Registration& r, const std::string& address,
                                           const std::vector<sources::VerifySpec>& defaults) {
  if (r.verify) return &*r.verify;
  const sources::VerifySpec* best = nullptr;
  for (const auto& d : defaults)
    if (address.rfind(d.prefix, 0) == 0 &&
        (best == nullptr || d.prefix.size() > best->prefix.size()))
      best = &d;
  return best;
}

Result<sources::VerifyPolicy> DefaultPackageResolver::policy_of(
    const sources::VerifySpec& spec) const {
  sources::VerifyPolicy p;
  p.identities = spec.identities;
  const std::string at = " (verify at " + spec.where + ")";
  if (!spec.key.empty()) {
    if (!m_verification.read_repo_file)
      return make_error(ErrorCode::invalid_input,
                        "verify.key " + spec.key + at + ": no repository to read it from");
    auto key = m_verification.read_repo_file(spec.key);
    if (!key) return key.error().wrap("verify.key " + spec.key + at);
    p.public_key_pem = std::move(*key);
    p.key_name = spec.key;
  } else if (!spec.key_file.empty()) {
    auto key = read_local_file(spec.key_file, 1u << 20);
    if (!key) return key.error().wrap("verify.keyFile" + at);
    p.public_key_pem = std::move(*key);
    p.key_name = spec.key_file;
  } else {
    if (m_verification.trusted_root_file.empty())
      return make_error(ErrorCode::invalid_input,
                        "verify.matchOIDCIdentity" + at +
                            ": keyless verification needs a sigstore trusted root; set "
                            "packages.trustedRoot to a trusted_root.json file");
    auto root = read_local_file(m_verification.trusted_root_file, 16u << 20);
    if (!root) return root.error().wrap("packages.trustedRoot");
    p.trusted_root_json = std::move(*root);
    p.trusted_root_name = m_verification.trusted_root_file;
  }
  return p;
}

namespace {
DefaultPackageResolver::ByKind built_in(sources::oci::FetchOptions options, RepoFileReader read) {
  std::shared_ptr<sources::PackageSource> fetcher =
      sources::oci::make_package_source(std::move(options));
  return {{model::PackageRef::Kind::oci, fetcher},
          {model::PackageRef::Kind::https, fetcher},
          {model::PackageRef::Kind::path, sources::local::make_package_source(std::move(read))}};
}

const char* kind_name(model::PackageRef::Kind k) {
  switch (k) {
    case model::PackageRef::Kind::oci:
      return "oci://";
    case model::PackageRef::Kind::https:
      return "https://";
    case model::PackageRef::Kind::path:
      break;
  }
  return "repository path";
}
}  // namespace

DefaultPackageResolver::DefaultPackageResolver(sources::oci::FetchOptions options,
                                               std::string registry, RepoFileReader read_repo_file,
                                               Verification verification)
    : DefaultPackageResolver(built_in(std::move(options), std::move(read_repo_file)),
                             std::move(registry), std::move(verification)) {}

Result<LoadedPackage> DefaultPackageResolver::load(const model::Registration& r,
                                                   const LoadControl& control) {
  auto ref = package_ref_of(r, m_registry);
  if (!ref) return ref.error();
  auto it = m_by_kind.find(ref->kind);
  if (it == m_by_kind.end() || !it->second)
    return make_error(ErrorCode::invalid_input, "package '" + r.package +
                                                    "': no package source "
                                                    "serves " +
                                                    kind_name(ref->kind) + " references here");
  auto loaded = it->second->load(*ref, control);
  if (!loaded) return loaded;
  const sources::VerifySpec* spec = verify_spec_for(r, ref->to_string(), m_verification.defaults);
  if (spec == nullptr) return loaded;
  auto policy = policy_of(*spec);
  if (!policy) return policy.error();
  auto signer = it->second->verify(*ref, loaded->manifest_digest, *policy, control);
  if (!signer) {
    Error e = signer.error();
    if (!r.verify) e.message += " (policy " + spec->where + ", prefix " + spec->prefix + ")";
    return e;
  }
  loaded->signer = std::move(*signer);
  return loaded;
}

std::string DefaultPackageResolver::identity(const model::Registration& r) const {
  if (r.verify) return {};
  auto ref = package_ref_of(r, m_registry);
  return ref ? ref->to_string() : std::string();
}

RepoFileReader directory_reader(const std::string& root, uint64_t max_bytes) {
  return [root, max_bytes](const std::string& path) {
    return sources::local::read_repo_file(root, path, max_bytes);
  };
}

}  // namespace flytecd::registration
