// Documents: one repository file, as the Git/OCI/local sources hand it to the loader.
// Contract (daemon/model/loader.hpp): load_documents is pure and never throws; every problem is
// a diagnostic.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "daemon/model/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace flytecd::model;
  SourceFile file;
  file.path = "projects/fuzz/overrides.yaml";
  file.bytes.assign(reinterpret_cast<const char*>(data), size);
  file.size = size;
  Limits limits;  // the daemon's defaults: what an attacker's repository meets
  const Policy policy;
  const LoadResult r = load_documents({file}, limits, policy);
  // A load without errors must have produced documents only from this file.
  if (r.ok() && r.documents.document_count > limits.max_documents_per_file) std::abort();
  return 0;
}
