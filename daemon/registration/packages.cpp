#include "daemon/registration/packages.hpp"

#include "sources/local/directory_reader.hpp"
#include "sources/local/package_source.hpp"
#include "sources/oci/package_source.hpp"

namespace flytecd::registration {

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

DefaultPackageSource::DefaultPackageSource(ByKind by_kind, std::string registry)
    : m_by_kind(std::move(by_kind)), m_registry(std::move(registry)) {}

namespace {
DefaultPackageSource::ByKind built_in(sources::oci::FetchOptions options, RepoFileReader read) {
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

DefaultPackageSource::DefaultPackageSource(sources::oci::FetchOptions options, std::string registry,
                                           RepoFileReader read_repo_file)
    : DefaultPackageSource(built_in(std::move(options), std::move(read_repo_file)),
                           std::move(registry)) {}

Result<LoadedPackage> DefaultPackageSource::load(const model::Registration& r,
                                                 const LoadControl& control) {
  auto ref = package_ref_of(r, m_registry);
  if (!ref) return ref.error();
  auto it = m_by_kind.find(ref->kind);
  if (it == m_by_kind.end() || !it->second)
    return make_error(ErrorCode::invalid_input, "package '" + r.package +
                                                    "': no package source "
                                                    "serves " +
                                                    kind_name(ref->kind) + " references here");
  return it->second->load(*ref, control);
}

RepoFileReader directory_reader(const std::string& root, uint64_t max_bytes) {
  return [root, max_bytes](const std::string& path) {
    return sources::local::read_repo_file(root, path, max_bytes);
  };
}

}  // namespace flytecd::registration
