#include <catch2/catch.hpp>

#include "sources/package_ref.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::sources;

TEST_CASE("package ref: oci with tag, digest, port", "[package]") {
  std::string err;
  auto a = parse_package_ref("oci://registry.example.com/flyte/core-examples:v1.4.2", err);
  REQUIRE(a);
  CHECK(a->kind == PackageRef::Kind::oci);
  CHECK(a->registry == "registry.example.com");
  CHECK(a->repository == "flyte/core-examples");
  CHECK(a->tag == "v1.4.2");
  CHECK_FALSE(a->pinned());
  std::string d(64, 'a');
  auto b = parse_package_ref("oci://localhost:5000/x/y@sha256:" + d, err);
  REQUIRE(b);
  CHECK(b->registry == "localhost:5000");
  CHECK(b->digest == "sha256:" + d);
  CHECK(b->tag.empty());
  auto c = parse_package_ref("oci://localhost:5000/x/y:t1@sha256:" + d, err);
  REQUIRE(c);
  CHECK(c->tag == "t1");
  CHECK(c->to_string() == "oci://localhost:5000/x/y:t1@sha256:" + d);
}

TEST_CASE("package ref: https and repository paths", "[package]") {
  std::string err;
  auto h =
      parse_package_ref("https://files.example.com/p/pkg.tgz#sha256=" + std::string(64, 'b'), err);
  REQUIRE(h);
  CHECK(h->url == "https://files.example.com/p/pkg.tgz");
  CHECK(h->pinned());
  auto p = parse_package_ref("packages/hello.tgz", err);
  REQUIRE(p);
  CHECK(p->kind == PackageRef::Kind::path);
}

TEST_CASE("package ref: a pin is printed as documents write it, and parses back", "[package]") {
  // `get registrations` printed "#sha256:<hex>", which validate refuses.
  std::string err;
  const std::string hex(64, 'c');
  for (const std::string& text :
       {"https://files.example.com/p/pkg.tgz#sha256=" + hex, "packages/hello.tgz#sha256=" + hex}) {
    auto ref = parse_package_ref(text, err);
    REQUIRE(ref);
    CHECK(ref->digest == "sha256:" + hex);
    CHECK(ref->to_string() == text);
    auto again = parse_package_ref(ref->to_string(), err);
    INFO(err);
    REQUIRE(again);
    CHECK(again->digest == ref->digest);
  }
}

TEST_CASE("package ref: malformed addresses say what was expected", "[package]") {
  for (const char* bad :
       {"", "oci://", "oci://host", "oci://host/repo", "oci://host/Repo:tag",
        "oci://host/r@sha256:abc", "http://x/y.tgz", "ftp://x/y.tgz", "/abs/p.tgz", "../up.tgz",
        "a/../../b.tgz", "pkg.zip", "https://x/y.tgz#md5=abc", "oci://host/repo:bad tag"}) {
    std::string err;
    CHECK_FALSE(parse_package_ref(bad, err).has_value());
    CHECK_FALSE(err.empty());
  }
}

TEST_CASE("package ref: versions must be URL-safe", "[package]") {
  CHECK(url_safe_version("v1.4.2"));
  CHECK(url_safe_version("2024-01-01_abc~1"));
  CHECK_FALSE(url_safe_version(""));
  CHECK_FALSE(url_safe_version("v1 2"));
  CHECK_FALSE(url_safe_version("v1/2"));
  CHECK_FALSE(url_safe_version("v1?x"));
}

// Issue 27 (found by the fuzz target's UTF-8 property): an address with bytes that are not
// UTF-8 was accepted and printed as it was, so it reached JSON and the ledger as raw bytes.
TEST_CASE("package ref: an address that is not valid UTF-8 is refused, printably",
          "[package_ref]") {
  std::string error;
  CHECK_FALSE(flytecd::sources::parse_package_ref("packages/flyte\xd3pkg.tgz", error));
  CHECK(error == "package address 'packages/flyte\\xd3pkg.tgz' is not valid UTF-8");
  CHECK(flytecd::sources::parse_package_ref("packages/caf\xc3\xa9.tgz", error));  // é is fine
}

}  // namespace FLYTECD_UNITY_ID
