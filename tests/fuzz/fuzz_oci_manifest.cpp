// OCI manifests: a registry's manifest or index body (and its error bodies), then the layer and
// index-entry selection the fetcher runs on it. Contract (sources/oci/manifest.hpp): pure, never
// throws; every rejection is invalid_input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sources/oci/manifest.hpp"
#include "sources/oci/registry.hpp"
#include "tests/fuzz/utf8_property.hpp"

namespace {

void check(std::string_view bytes, std::string_view content_type) {
  using namespace flytecd::sources::oci;
  auto m = parse_manifest(bytes, content_type);
  if (!m) {
    if (m.error().code != flytecd::ErrorCode::invalid_input) std::abort();
    flytecd::fuzz::expect_json_message("parse_manifest's error", m.error().message);
    return;
  }
  if (m->kind == Manifest::Kind::image) {
    auto layer = select_package_layer(*m, "fuzz:manifest");
    if (layer && !is_flyte_layer_type(layer->media_type) &&
        !is_generic_tar_layer_type(layer->media_type)) {
      std::abort();  // only a package-typed layer may be chosen
    }
  } else {
    auto entries = index_candidates(*m, "fuzz:index");
    if (entries && entries->empty()) std::abort();  // success means at least one candidate
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check(bytes, "");
  check(bytes, "application/vnd.oci.image.index.v1+json; charset=utf-8");
  check(bytes, flytecd::sources::oci::k_docker_manifest);
  // The same bytes as the body of a failed request (distribution's {"errors": [...]}).
  for (long status : {401L, 404L, 429L, 503L}) {
    const auto e =
        flytecd::sources::oci::status_error(status, std::string(bytes), "fuzz: fetch manifest");
    flytecd::fuzz::expect_json_message("a registry's error answer", e.message);
  }
  return 0;
}
