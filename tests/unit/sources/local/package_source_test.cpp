#include "sources/local/package_source.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "daemon/common/digest.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using sources::PackageRef;

namespace {
sources::RepoFileReader reader(std::map<std::string, std::string> files) {
  return [files](const std::string& path) -> Result<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return make_error(ErrorCode::not_found, path + ": no such file");
    return it->second;
  };
}

PackageRef path_ref(const std::string& path, const std::string& digest = "") {
  PackageRef r;
  r.kind = PackageRef::Kind::path;
  r.path = path;
  r.digest = digest;
  return r;
}
}  // namespace

TEST_CASE("local package source: a repository file with its sha256 digest", "[package]") {
  auto src = sources::local::make_package_source(reader({{"pkgs/a.tgz", "bytes"}}));
  auto p = src->load(path_ref("pkgs/a.tgz"));
  REQUIRE(p);
  CHECK(p->bytes == "bytes");
  CHECK(p->digest == "sha256:" + digest::sha256_hex("bytes"));
  CHECK(p->reference == "pkgs/a.tgz");
  CHECK(p->manifest_digest.empty());
  CHECK_FALSE(p->from_cache);
}

TEST_CASE("local package source: a pin that does not match the content is refused", "[package]") {
  auto src = sources::local::make_package_source(reader({{"a.tgz", "bytes"}}));
  const std::string other = "sha256:" + std::string(64, '0');
  auto p = src->load(path_ref("a.tgz", other));
  REQUIRE_FALSE(p);
  CHECK(p.error().code == ErrorCode::invalid_input);
  CHECK(p.error().message.find("the document pins " + other) != std::string::npos);
  const std::string right = "sha256:" + digest::sha256_hex("bytes");
  CHECK(src->load(path_ref("a.tgz", right)));
}

TEST_CASE("local package source: missing file, other kinds and no reader are errors", "[package]") {
  auto src = sources::local::make_package_source(reader({}));
  auto missing = src->load(path_ref("gone.tgz"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::not_found);
  CHECK(missing.error().message.find("package gone.tgz") != std::string::npos);

  PackageRef oci;
  oci.kind = PackageRef::Kind::oci;
  oci.registry = "registry.example.com";
  oci.repository = "flyte/x";
  oci.tag = "v1";
  auto wrong = src->load(oci);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().code == ErrorCode::invalid_input);

  auto none = sources::local::make_package_source(nullptr)->load(path_ref("a.tgz"));
  REQUIRE_FALSE(none);
  CHECK(none.error().code == ErrorCode::invalid_input);
  CHECK(none.error().message.find("cannot read repository files") != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
