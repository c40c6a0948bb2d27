// Package archives: the bytes of a `pyflyte package` .tgz/.tar fetched from OCI, HTTPS or Git.
// Contract (daemon/registration/package.hpp): read_package is pure, never throws, and every
// rejection is invalid_input prefixed with the package's name.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/registration/package.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace flytecd::registration;
  ReaderLimits limits;  // small bounds keep decompression bombs within the fuzzer's memory limit
  limits.max_entries = 1000;
  limits.max_entry_bytes = 8u << 20;
  limits.max_total_bytes = 32u << 20;
  const std::string name = "fuzz.tgz";
  auto pkg =
      read_package(std::string_view(reinterpret_cast<const char*>(data), size), name, limits);
  if (!pkg) {
    if (pkg.error().code != flytecd::ErrorCode::invalid_input) std::abort();
    if (pkg.error().message.rfind(name, 0) != 0) std::abort();
    return 0;
  }
  if (pkg->entities.empty()) std::abort();  // a package without entity files is rejected
  for (const auto& e : pkg->entities) {
    (void)e.id();
    (void)to_string(e.kind);
  }
  if (pkg->has_fast_source()) (void)md5_hex(pkg->fast_source_md5);
  return 0;
}
