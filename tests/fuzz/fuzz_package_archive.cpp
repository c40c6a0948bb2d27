// Package archives: the bytes of a `pyflyte package` .tgz/.tar fetched from OCI, HTTPS or Git.
// Contract (daemon/registration/package.hpp): read_package is pure, never throws, and every
// rejection is invalid_input prefixed with the package's name. Memory (issue 27): decompression
// is bounded by the reader limits and decoding by an estimate taken from the wire format before
// anything is decoded (package_decode.hpp), and what a package holds decoded by
// max_decoded_bytes, so what a call holds at its peak is at most one raw member plus that bound:
// a constant, whatever the (compressed) input. An input that makes it hold more is a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/registration/package.hpp"
#include "tests/fuzz/memory_property.hpp"
#include "tests/fuzz/utf8_property.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  flytecd::fuzz::HeapPeak::install();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace flytecd::registration;
  using flytecd::fuzz::HeapPeak;
  ReaderLimits limits;  // small bounds keep decompression bombs within the fuzzer's memory limit
  limits.max_entries = 1000;
  limits.max_entry_bytes = 8u << 20;
  limits.max_total_bytes = 32u << 20;
  limits.max_decoded_bytes = 64u << 20;
  const std::string name = "fuzz.tgz";
  HeapPeak::start();
  {
    auto pkg =
        read_package(std::string_view(reinterpret_cast<const char*>(data), size), name, limits);
    if (!pkg) {
      if (pkg.error().code != flytecd::ErrorCode::invalid_input) std::abort();
      if (pkg.error().message.rfind(name, 0) != 0) std::abort();
      flytecd::fuzz::expect_json_message("read_package's error", pkg.error().message);
    } else {
      if (pkg->entities.empty()) std::abort();  // a package without entity files is rejected
      for (const auto& e : pkg->entities) {
        flytecd::fuzz::expect_json_message("an entity's name", e.id().name());
        flytecd::fuzz::expect_json_message("an entity's file", e.file);
        (void)to_string(e.kind);
      }
      if (pkg->has_fast_source()) (void)md5_hex(pkg->fast_source_md5);
    }
  }
  // One raw member and what the package holds decoded (accounted as protobuf's SpaceUsedLong,
  // which leaves out malloc's headers: twice it), plus libarchive's buffers.
  HeapPeak::check(size, 0, limits.max_entry_bytes + 2 * limits.max_decoded_bytes + (16u << 20),
                  "read_package");
  return 0;
}
