// Pulls one OCI package with flytecd's fetcher into an empty cache and prints the wall time.
// Usage: flytecd_bench_oci_pull HOST:PORT REPOSITORY TAG CACHE_DIR
// The registry is spoken to over plain http (a loopback benchmark registry). Prints
// "flytecd-pull <ms> ms <bytes> bytes <digest>"; exit 1 on failure.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "daemon/common/log.hpp"
#include "sources/oci/fetcher.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s HOST:PORT REPOSITORY TAG CACHE_DIR\n", argv[0]);
    return 2;
  }
  flytecd::log::init("warn", false);
  namespace oci = flytecd::sources::oci;
  oci::FetchOptions o;
  o.cache_dir = argv[4];
  o.plain_http_registries.push_back(argv[1]);
  std::error_code ec;
  std::filesystem::remove_all(o.cache_dir, ec);
  flytecd::sources::PackageRef ref;
  ref.kind = flytecd::sources::PackageRef::Kind::oci;
  ref.registry = argv[1];
  ref.repository = argv[2];
  ref.tag = argv[3];
  const auto start = std::chrono::steady_clock::now();
  oci::PackageFetcher fetcher(o);
  auto f = fetcher.fetch(ref);
  const auto ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
  if (!f) {
    std::fprintf(stderr, "fetch failed: %s\n", f.error().message.c_str());
    return 1;
  }
  std::printf("flytecd-pull %.1f ms %llu bytes %s\n", ms.count(),
              static_cast<unsigned long long>(f->size), f->digest.c_str());
  return 0;
}
