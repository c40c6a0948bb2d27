// Documents: one repository file, as the Git/OCI/local sources hand it to the loader.
// Contract (daemon/model/loader.hpp): load_documents is pure and never throws; every problem is
// a diagnostic. Memory (issue 27): the loader converts one document at a time and its bounds are
// counted before any tree is built, so the heap it holds is at most ~1 KiB per byte of input
// (a yaml-cpp node costs a few hundred bytes, and a file has at most about one node per byte)
// plus a fixed allowance — an input that makes it hold more (an alias or a structure that
// expands) is a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "daemon/model/loader.hpp"
#include "tests/fuzz/memory_property.hpp"
#include "tests/fuzz/utf8_property.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  flytecd::fuzz::HeapPeak::install();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace flytecd::model;
  using flytecd::fuzz::HeapPeak;
  SourceFile file;
  file.path = "projects/fuzz/overrides.yaml";
  file.bytes.assign(reinterpret_cast<const char*>(data), size);
  file.size = size;
  Limits limits;  // the daemon's defaults: what an attacker's repository meets
  const Policy policy;
  HeapPeak::start();
  {
    const LoadResult r = load_documents({file}, limits, policy);
    // A load without errors must have produced documents only from this file.
    if (r.ok() && r.documents.document_count > limits.max_documents_per_file) std::abort();
  }
  HeapPeak::check(size, 1024, 16u << 20, "load_documents");
  // UTF-8 property: what validate -o json prints of every diagnostic (measured apart from the
  // memory property: the JSON is the CLI's, not the loader's).
  const LoadResult r = load_documents({file}, limits, policy);
  for (const auto& d : r.diagnostics) {
    flytecd::fuzz::expect_utf8("a diagnostic's message", d.message);
    flytecd::fuzz::expect_utf8("a diagnostic's expectation", d.expected);
    flytecd::fuzz::expect_utf8("a diagnostic's path", d.path);
    flytecd::fuzz::expect_json_roundtrip("a diagnostic", nlohmann::json{{"file", d.where.file},
                                                                        {"line", d.where.line},
                                                                        {"path", d.path},
                                                                        {"message", d.message},
                                                                        {"expected", d.expected},
                                                                        {"text", format(d)}});
  }
  return 0;
}
