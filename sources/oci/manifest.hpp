#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::sources::oci {

inline constexpr std::string_view k_oci_manifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view k_oci_index = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view k_docker_manifest =
    "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view k_docker_list =
    "application/vnd.docker.distribution.manifest.list.v2+json";
// The artifact type and layer type flytecd's packages use (the recipe's §3 format).
inline constexpr std::string_view k_flyte_artifact = "application/vnd.flyte.package.v1";
inline constexpr std::string_view k_flyte_layer = "application/vnd.flyte.package.v1.tar+gzip";
inline constexpr std::string_view k_oci_layer_tgz = "application/vnd.oci.image.layer.v1.tar+gzip";

// The Accept header value for manifest requests: all four manifest kinds.
std::string manifest_accept_header();

struct Descriptor {
  std::string media_type;
  std::string digest;
  uint64_t size = 0;
  std::string artifact_type;  // index entries (OCI 1.1) may carry it
  std::string title;          // annotation org.opencontainers.image.title
};

struct Manifest {
  enum class Kind { image, index } kind = Kind::image;
  std::string media_type;     // from the document, else from Content-Type
  std::string artifact_type;  // artifactType, else config.mediaType (image-spec 1.1 fallback)
  Descriptor config;
  std::vector<Descriptor> layers;     // image manifests
  std::vector<Descriptor> manifests;  // indexes
};

// Parses an OCI/Docker v2 manifest or index (schemaVersion 2). `content_type` is used when the
// document has no mediaType. Errors: invalid_input naming what is wrong. Pure.
Result<Manifest> parse_manifest(std::string_view bytes, std::string_view content_type);

// True for layer media types that can carry a Flyte package: the flyte package types
// (application/vnd.flyte.package*.tar+gzip / .tar) and generic OCI/Docker tar(+gzip) layers.
bool is_flyte_layer_type(std::string_view media_type);
bool is_generic_tar_layer_type(std::string_view media_type);

// The package layer of an image manifest: the one flyte-typed layer; else, if there is none,
// the one generic tar(+gzip) layer. Errors: invalid_input when there is no candidate or more
// than one (the message lists them and says how to disambiguate). `where` names the manifest.
Result<Descriptor> select_package_layer(const Manifest& manifest, const std::string& where);

// From an index: the entries that may hold the package, best first. Entries whose artifactType
// is a Flyte package win (more than one is ambiguous: invalid_input); otherwise every entry
// that is an image manifest is returned for the caller to open and test with
// select_package_layer. Errors: invalid_input when the index has no manifest entries. Pure.
Result<std::vector<Descriptor>> index_candidates(const Manifest& index, const std::string& where);

}  // namespace flytecd::sources::oci
