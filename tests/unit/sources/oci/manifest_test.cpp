#include "sources/oci/manifest.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace oci = flytecd::sources::oci;
using flytecd::ErrorCode;

namespace {
std::string dg(char c) { return "sha256:" + std::string(64, c); }

std::string layer(const std::string& mt, char c, int size = 10) {
  return R"({"mediaType":")" + mt + R"(","digest":")" + dg(c) + R"(","size":)" +
         std::to_string(size) + "}";
}

std::string image(const std::string& layers, const std::string& extra = "") {
  return R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)" + extra +
         R"("config":{"mediaType":"application/vnd.flyte.package.config.v1+json","digest":")" +
         dg('c') + R"(","size":67},"layers":[)" + layers + "]}";
}
}  // namespace

TEST_CASE("oci manifest: the project's artifact format selects its single tar+gzip layer",
          "[oci]") {
  auto m = oci::parse_manifest(
      image(
          R"({"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":")" + dg('1') +
              R"(","size":246,"annotations":{"org.opencontainers.image.title":"flyte-package.tgz"}})",
          R"("artifactType":"application/vnd.flyte.package.v1",)"),
      "");
  REQUIRE(m);
  CHECK(m->kind == oci::Manifest::Kind::image);
  CHECK(m->artifact_type == "application/vnd.flyte.package.v1");
  auto l = oci::select_package_layer(*m, "m");
  REQUIRE(l);
  CHECK(l->digest == dg('1'));
  CHECK(l->size == 246);
  CHECK(l->title == "flyte-package.tgz");
}

TEST_CASE(
    "oci manifest: a flyte-typed layer wins over generic layers, artifactType falls back "
    "to config.mediaType",
    "[oci]") {
  auto m = oci::parse_manifest(image(layer(std::string(oci::k_oci_layer_tgz), '1') + "," +
                                     layer(std::string(oci::k_flyte_layer), '2') + "," +
                                     layer("application/vnd.oci.image.layer.v1.tar", '3')),
                               "");
  REQUIRE(m);
  CHECK(m->artifact_type == "application/vnd.flyte.package.config.v1+json");
  auto l = oci::select_package_layer(*m, "m");
  REQUIRE(l);
  CHECK(l->digest == dg('2'));
  CHECK(l->media_type == oci::k_flyte_layer);
}

TEST_CASE("oci manifest: two candidate layers are ambiguous, none is an error, both say why",
          "[oci]") {
  auto two = oci::parse_manifest(image(layer(std::string(oci::k_oci_layer_tgz), '1') + "," +
                                       layer(std::string(oci::k_oci_layer_tgz), '2')),
                                 "");
  REQUIRE(two);
  auto l = oci::select_package_layer(*two, "manifest X");
  REQUIRE_FALSE(l);
  CHECK(l.error().code == ErrorCode::invalid_input);
  CHECK(l.error().message.find("manifest X is ambiguous: 2 layers") != std::string::npos);
  CHECK(l.error().message.find(dg('1')) != std::string::npos);
  CHECK(l.error().message.find(oci::k_flyte_layer) != std::string::npos);

  auto none = oci::parse_manifest(image(layer("application/json", '1')), "");
  REQUIRE(none);
  auto n = oci::select_package_layer(*none, "manifest Y");
  REQUIRE_FALSE(n);
  CHECK(n.error().message.find("has no package layer") != std::string::npos);
  CHECK(n.error().message.find("application/json") != std::string::npos);
}

TEST_CASE("oci manifest: Docker v2 manifests and media type from Content-Type", "[oci]") {
  std::string body = R"({"schemaVersion":2,"config":{"mediaType":"x","digest":")" + dg('c') +
                     R"(","size":1},"layers":[)" +
                     layer("application/vnd.docker.image.rootfs.diff.tar.gzip", '5') + "]}";
  auto m = oci::parse_manifest(body, "application/vnd.docker.distribution.manifest.v2+json; x=y");
  REQUIRE(m);
  CHECK(m->media_type == oci::k_docker_manifest);
  CHECK(oci::select_package_layer(*m, "m")->digest == dg('5'));
}

TEST_CASE("oci manifest: malformed documents are rejected with what was expected", "[oci]") {
  CHECK(oci::parse_manifest("nope", "").error().message == "manifest is not a JSON object");
  CHECK(oci::parse_manifest(R"({"schemaVersion":1})", "").error().message.find("schemaVersion") !=
        std::string::npos);
  auto bad_digest =
      oci::parse_manifest(image(R"({"mediaType":"a","digest":"sha512:abc","size":1})"), "");
  REQUIRE_FALSE(bad_digest);
  CHECK(bad_digest.error().message.find("layers[0] has digest 'sha512:abc'") != std::string::npos);
  auto neg = oci::parse_manifest(image(layer("a", '1', -1)), "");
  REQUIRE_FALSE(neg);
  CHECK(neg.error().message.find("size") != std::string::npos);
  auto weird = oci::parse_manifest(
      R"({"schemaVersion":2,"mediaType":"application/vnd.foo","layers":[]})", "");
  REQUIRE_FALSE(weird);
  CHECK(weird.error().message.find("unsupported manifest media type") != std::string::npos);
}

TEST_CASE("oci manifest: index entries with the flyte artifactType are chosen, others are probed",
          "[oci]") {
  auto entry = [](char c, const std::string& artifact) {
    return R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" + dg(c) +
           R"(","size":500)" + (artifact.empty() ? "" : R"(,"artifactType":")" + artifact + "\"") +
           "}";
  };
  auto idx = [](const std::string& entries) {
    return R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[)" +
           entries + "]}";
  };
  auto one = oci::parse_manifest(
      idx(entry('a', "application/vnd.example.sbom") + "," +
          entry('b', "application/vnd.flyte.package.v1") + "," + entry('c', "")),
      "");
  REQUIRE(one);
  CHECK(one->kind == oci::Manifest::Kind::index);
  auto chosen = oci::index_candidates(*one, "index I");
  REQUIRE(chosen);
  REQUIRE(chosen->size() == 1);
  CHECK(chosen->front().digest == dg('b'));

  auto probe = oci::parse_manifest(idx(entry('a', "") + "," + entry('c', "")), "");
  CHECK(oci::index_candidates(*probe, "index I")->size() == 2);

  auto twice = oci::parse_manifest(idx(entry('a', "application/vnd.flyte.package.v1") + "," +
                                       entry('b', "application/vnd.flyte.package.v1")),
                                   "");
  auto amb = oci::index_candidates(*twice, "index I");
  REQUIRE_FALSE(amb);
  CHECK(amb.error().message.find("index I is ambiguous: 2 manifests") != std::string::npos);

  auto empty = oci::parse_manifest(idx(""), "");
  CHECK_FALSE(oci::index_candidates(*empty, "index I"));
  CHECK(oci::select_package_layer(*one, "I").error().message.find("is an index") !=
        std::string::npos);
}

TEST_CASE("oci manifest: the Accept header names all four manifest types", "[oci]") {
  const std::string a = oci::manifest_accept_header();
  for (auto t : {oci::k_oci_manifest, oci::k_oci_index, oci::k_docker_manifest, oci::k_docker_list})
    CHECK(a.find(t) != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
