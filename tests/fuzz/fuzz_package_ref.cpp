// Package references: the `package:` / `workflowPackageUri:` value of a registration document.
// Oracle: whatever parses must print back (PackageRef::to_string) to an address that parses to
// the same reference.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "daemon/model/package_ref.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using flytecd::model::PackageRef;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto ref = flytecd::model::parse_package_ref(text, error);
  if (!ref) {
    if (error.empty()) std::abort();  // a rejection must say what was wrong
    return 0;
  }
  std::string again_error;
  const auto again = flytecd::model::parse_package_ref(ref->to_string(), again_error);
  if (!again || again->kind != ref->kind || again->registry != ref->registry ||
      again->repository != ref->repository || again->tag != ref->tag ||
      again->digest != ref->digest || again->url != ref->url || again->path != ref->path) {
    std::abort();
  }
  flytecd::model::url_safe_version(text);
  return 0;
}
