#include "sources/oci/manifest.hpp"

#include <nlohmann/json.hpp>

#include "daemon/common/json_dump.hpp"
#include "sources/package_ref.hpp"

namespace flytecd::sources::oci {
namespace {

using nlohmann::json;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

Result<Descriptor> parse_descriptor(const json& j, const std::string& what) {
  if (!j.is_object()) return make_error(ErrorCode::invalid_input, what + " is not an object");
  Descriptor d;
  d.media_type = json_string(j, "mediaType");
  d.digest = json_string(j, "digest");
  d.artifact_type = json_string(j, "artifactType");
  if (!valid_sha256_digest(d.digest))
    return make_error(
        ErrorCode::invalid_input,
        what + " has digest '" + d.digest +
            "'; expected sha256:<64 lowercase hex digits> (only sha256 is supported)");
  auto size = j.find("size");
  if (size == j.end() || !size->is_number_unsigned())
    return make_error(ErrorCode::invalid_input, what + " has no non-negative integer size");
  d.size = size->get<uint64_t>();
  if (auto a = j.find("annotations"); a != j.end() && a->is_object())
    d.title = json_string(*a, "org.opencontainers.image.title");
  return d;
}

std::string describe(const Descriptor& d) {
  std::string s = d.digest + " (" + (d.media_type.empty() ? "no media type" : d.media_type);
  if (!d.title.empty()) s += ", " + d.title;
  return s + ")";
}

}  // namespace

std::string manifest_accept_header() {
  return "Accept: " + std::string(k_oci_manifest) + ", " + std::string(k_oci_index) + ", " +
         std::string(k_docker_manifest) + ", " + std::string(k_docker_list);
}

Result<Manifest> parse_manifest(std::string_view bytes, std::string_view content_type) {
  auto j = json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorCode::invalid_input, "manifest is not a JSON object");
  auto sv = j.find("schemaVersion");
  if (sv == j.end() || !sv->is_number_integer() || sv->get<int>() != 2)
    return make_error(ErrorCode::invalid_input,
                      "manifest schemaVersion is not 2 (Docker schema 1 is not supported)");
  Manifest m;
  m.media_type = json_string(j, "mediaType");
  if (m.media_type.empty()) {
    m.media_type = std::string(content_type.substr(0, content_type.find(';')));
    while (!m.media_type.empty() && m.media_type.back() == ' ') m.media_type.pop_back();
  }
  const bool is_index = m.media_type == k_oci_index || m.media_type == k_docker_list ||
                        (m.media_type.empty() && j.contains("manifests"));
  if (is_index) {
    m.kind = Manifest::Kind::index;
    auto list = j.find("manifests");
    if (list == j.end() || !list->is_array())
      return make_error(ErrorCode::invalid_input, "index has no \"manifests\" array");
    for (size_t i = 0; i < list->size(); ++i) {
      auto d = parse_descriptor((*list)[i], "manifests[" + std::to_string(i) + "]");
      if (!d) return d.error();
      m.manifests.push_back(std::move(d).value());
    }
    m.artifact_type = json_string(j, "artifactType");
    return m;
  }
  if (!m.media_type.empty() && m.media_type != k_oci_manifest && m.media_type != k_docker_manifest)
    return make_error(ErrorCode::invalid_input, "unsupported manifest media type '" + m.media_type +
                                                    "'; expected " + std::string(k_oci_manifest) +
                                                    " or " + std::string(k_docker_manifest));
  auto config = j.find("config");
  if (config == j.end()) return make_error(ErrorCode::invalid_input, "manifest has no config");
  auto c = parse_descriptor(*config, "config");
  if (!c) return c.error();
  m.config = std::move(c).value();
  auto layers = j.find("layers");
  if (layers == j.end() || !layers->is_array())
    return make_error(ErrorCode::invalid_input, "manifest has no \"layers\" array");
  for (size_t i = 0; i < layers->size(); ++i) {
    auto d = parse_descriptor((*layers)[i], "layers[" + std::to_string(i) + "]");
    if (!d) return d.error();
    m.layers.push_back(std::move(d).value());
  }
  m.artifact_type = json_string(j, "artifactType");
  if (m.artifact_type.empty()) m.artifact_type = m.config.media_type;
  return m;
}

bool is_flyte_layer_type(std::string_view mt) {
  return starts_with(mt, "application/vnd.flyte.package") &&
         (ends_with(mt, ".tar+gzip") || ends_with(mt, ".tar") || ends_with(mt, ".tgz"));
}

bool is_generic_tar_layer_type(std::string_view mt) {
  return mt == k_oci_layer_tgz || mt == "application/vnd.oci.image.layer.v1.tar" ||
         mt == "application/vnd.docker.image.rootfs.diff.tar.gzip";
}

Result<Descriptor> select_package_layer(const Manifest& m, const std::string& where) {
  if (m.kind != Manifest::Kind::image)
    return make_error(ErrorCode::invalid_input, where + " is an index, not an image manifest");
  std::vector<const Descriptor*> flyte, generic;
  for (const auto& l : m.layers) {
    if (is_flyte_layer_type(l.media_type)) flyte.push_back(&l);
    if (is_generic_tar_layer_type(l.media_type)) generic.push_back(&l);
  }
  const auto& chosen = !flyte.empty() ? flyte : generic;
  if (chosen.size() == 1) return *chosen.front();
  if (chosen.empty()) {
    std::string seen;
    for (const auto& l : m.layers) seen += (seen.empty() ? "" : ", ") + describe(l);
    return make_error(ErrorCode::invalid_input,
                      where + " has no package layer (layers: " + (seen.empty() ? "none" : seen) +
                          "); expected one layer of type " + std::string(k_flyte_layer) +
                          " or a single " + std::string(k_oci_layer_tgz));
  }
  std::string list;
  for (const auto* l : chosen) list += (list.empty() ? "" : ", ") + describe(*l);
  return make_error(ErrorCode::invalid_input,
                    where + " is ambiguous: " + std::to_string(chosen.size()) +
                        " layers could be the package (" + list +
                        "); expected exactly one; mark the package layer with media type " +
                        std::string(k_flyte_layer));
}

Result<std::vector<Descriptor>> index_candidates(const Manifest& index, const std::string& where) {
  std::vector<Descriptor> flyte, images;
  for (const auto& d : index.manifests) {
    if (d.media_type == k_oci_index || d.media_type == k_docker_list) continue;  // nested: skip
    if (starts_with(d.artifact_type, k_flyte_artifact)) flyte.push_back(d);
    images.push_back(d);
  }
  if (flyte.size() > 1) {
    std::string list;
    for (const auto& d : flyte) list += (list.empty() ? "" : ", ") + d.digest;
    return make_error(ErrorCode::invalid_input,
                      where + " is ambiguous: " + std::to_string(flyte.size()) +
                          " manifests have artifactType " + std::string(k_flyte_artifact) + " (" +
                          list + "); expected exactly one, or reference one by digest");
  }
  if (flyte.size() == 1) return flyte;
  if (images.empty())
    return make_error(ErrorCode::invalid_input,
                      where + " lists no image manifests; expected one holding the package");
  return images;
}

}  // namespace flytecd::sources::oci
