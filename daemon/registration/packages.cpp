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

DefaultPackageSource::DefaultPackageSource(sources::oci::FetchOptions options, std::string registry,
                                           RepoFileReader read_repo_file)
    : m_fetched(sources::oci::make_package_source(std::move(options))),
      m_repo(sources::local::make_package_source(std::move(read_repo_file))),
      m_registry(std::move(registry)) {}

Result<LoadedPackage> DefaultPackageSource::load(const model::Registration& r) {
  auto ref = package_ref_of(r, m_registry);
  if (!ref) return ref.error();
  return ref->kind == model::PackageRef::Kind::path ? m_repo->load(*ref) : m_fetched->load(*ref);
}

RepoFileReader directory_reader(const std::string& root, uint64_t max_bytes) {
  return [root, max_bytes](const std::string& path) {
    return sources::local::read_repo_file(root, path, max_bytes);
  };
}

}  // namespace flytecd::registration
