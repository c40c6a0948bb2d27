#include "sources/oci/cache.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <thread>

#include "sources/oci/digest.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace oci = flytecd::sources::oci;
namespace fs = std::filesystem;

namespace {
struct TmpRoot {
  fs::path path;
  TmpRoot() {
    std::string t = (fs::temp_directory_path() / "flytecd-oci-cache-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TmpRoot() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
}  // namespace

TEST_CASE("oci digest: sha256 of known inputs", "[oci]") {
  CHECK(oci::sha256_digest("") ==
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  oci::Sha256 h;
  h.update("ab", 2);
  h.update("c", 1);
  CHECK(h.finish() == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(oci::short_digest(oci::sha256_digest("")) == "sha256:e3b0c44298fc…");
}

TEST_CASE("oci cache: blobs are content-addressed, verified on hit, evicted least recently used",
          "[oci]") {
  TmpRoot root;
  oci::BlobCache cache(root.path, 250);
  const std::string a(100, 'a'), b(100, 'b'), c(100, 'c');
  const auto da = oci::sha256_digest(a), db = oci::sha256_digest(b), dc = oci::sha256_digest(c);
  REQUIRE(cache.put(da, a));
  CHECK(cache.blob_path(da) == root.path / "blobs/sha256" / da.substr(7));
  CHECK(cache.lookup(da) == std::optional<uint64_t>(100));
  CHECK(cache.read(da, 1000) == std::optional<std::string>(a));
  CHECK_FALSE(cache.read(da, 10));  // over the caller's bound
  REQUIRE(cache.put(db, b));
  // Make `a` the most recently used, then insert c: b is evicted, not a (a was used within the
  // last minute, so it would stay anyway; b is an hour old).
  fs::last_write_time(cache.blob_path(db),
                      fs::file_time_type::clock::now() - std::chrono::hours(1));
  CHECK(cache.lookup(da));
  REQUIRE(cache.put(dc, c));
  CHECK(cache.lookup(da));
  CHECK_FALSE(cache.lookup(db));
  CHECK(cache.lookup(dc));
  CHECK(cache.total_bytes() == 200);
}

TEST_CASE("oci cache: a blob corrupted on disk is dropped on lookup", "[oci]") {
  TmpRoot root;
  oci::BlobCache cache(root.path, 1 << 20);
  const std::string c(100, 'c');
  const auto dc = oci::sha256_digest(c);
  REQUIRE(cache.put(dc, c));
  std::ofstream(cache.blob_path(dc), std::ios::binary | std::ios::trunc) << std::string(100, 'x');
  CHECK_FALSE(cache.lookup(dc));
  CHECK_FALSE(fs::exists(cache.blob_path(dc)));
  CHECK_FALSE(cache.lookup("sha256:nothex"));
}

TEST_CASE("oci cache: blobs used in the last minute survive eviction, older ones go first",
          "[oci]") {
  TmpRoot root;
  oci::BlobCache cache(root.path, 50);
  const std::string a(100, 'a'), c(100, 'c');
  const auto da = oci::sha256_digest(a), dc = oci::sha256_digest(c);
  REQUIRE(cache.put(da, a));
  REQUIRE(cache.put(dc, c));
  // Over the bound, but everything was used within the last minute: nothing is evicted yet.
  const std::string e(100, 'e');
  REQUIRE(cache.put(oci::sha256_digest(e), e));
  CHECK(cache.total_bytes() == 300);
  fs::last_write_time(cache.blob_path(da),
                      fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::last_write_time(cache.blob_path(dc),
                      fs::file_time_type::clock::now() - std::chrono::hours(1));
  const std::string g(10, 'g');
  REQUIRE(cache.put(oci::sha256_digest(g), g));
  CHECK_FALSE(fs::exists(cache.blob_path(da)));  // hours old: evicted
  CHECK_FALSE(fs::exists(cache.blob_path(dc)));
  CHECK(cache.lookup(oci::sha256_digest(e)));  // recent: kept although over the bound
  CHECK(cache.total_bytes() == 110);
}

TEST_CASE("oci cache: temp files vanish unless committed", "[oci]") {
  TmpRoot root;
  oci::BlobCache cache(root.path, 1 << 20);
  fs::path p;
  {
    auto t = cache.temp_file();
    REQUIRE(t);
    p = t->path();
    CHECK(fs::exists(p));
  }
  CHECK_FALSE(fs::exists(p));
  auto t = cache.temp_file();
  REQUIRE(t);
  std::ofstream(t->path(), std::ios::binary) << "hello";
  auto d = oci::sha256_digest("hello");
  auto committed = cache.commit(*t, d);
  REQUIRE(committed);
  CHECK(*committed == cache.blob_path(d));
  CHECK(cache.lookup(d) == std::optional<uint64_t>(5));
}

}  // namespace FLYTECD_UNITY_ID
