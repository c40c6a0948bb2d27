#include "daemon/registration/packages.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sources/local/directory_reader.hpp"
#include "sources/oci/digest.hpp"

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
    : m_fetcher(std::move(options)),
      m_registry(std::move(registry)),
      m_read(std::move(read_repo_file)) {}

Result<LoadedPackage> DefaultPackageSource::load(const model::Registration& r) {
  auto ref = package_ref_of(r, m_registry);
  if (!ref) return ref.error();
  LoadedPackage out;
  out.reference = ref->to_string();
  if (ref->kind == model::PackageRef::Kind::path) {
    if (!m_read)
      return make_error(ErrorCode::invalid_input,
                        "package " + ref->path + ": this source cannot read repository files");
    auto bytes = m_read(ref->path);
    if (!bytes) return bytes.error().wrap("package " + ref->path);
    out.bytes = std::move(*bytes);
    out.digest = sources::oci::sha256_digest(out.bytes);
    if (ref->pinned() && ref->digest != out.digest)
      return make_error(ErrorCode::invalid_input, "package " + ref->path + ": content is " +
                                                      out.digest + ", but the document pins " +
                                                      ref->digest);
    return out;
  }
  auto fetched = m_fetcher.fetch(*ref);
  if (!fetched) return fetched.error();
  std::ifstream in(fetched->path, std::ios::binary);
  if (!in)
    return make_error(ErrorCode::internal, "package cache: cannot read " + fetched->path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  out.bytes = ss.str();
  out.digest = fetched->digest;
  out.manifest_digest = fetched->manifest_digest;
  out.from_cache = fetched->from_cache;
  if (sources::oci::sha256_digest(out.bytes) != out.digest)
    return make_error(ErrorCode::internal, "package cache: " + fetched->path.string() +
                                               " no longer matches " + out.digest);
  return out;
}

sources::oci::FetchOptions fetch_options(const config::PackagesConfig& cfg,
                                         const std::string& state_dir) {
  sources::oci::FetchOptions o;
  o.cache_dir = cfg.cache_dir.empty() ? std::filesystem::path(state_dir) / "packages"
                                      : std::filesystem::path(cfg.cache_dir);
  o.cache_max_bytes = cfg.cache_max_bytes;
  o.ca_file = cfg.ca_file;
  o.docker_config = cfg.docker_config;
  o.plain_http_registries = cfg.plain_http_registries;
  return o;
}

RepoFileReader directory_reader(const std::string& root, uint64_t max_bytes) {
  return [root, max_bytes](const std::string& path) {
    return sources::local::read_repo_file(root, path, max_bytes);
  };
}

}  // namespace flytecd::registration
