// Package references: the `package:` / `workflowPackageUri:` value of a registration document.
// Oracle: whatever parses must print back (PackageRef::to_string) to an address that parses to
// the same reference. (to_string writes an https/path pin as "#sha256:<hex>", which the parser
// does not accept back: "#sha256=<hex>" is the input syntax; the oracle rewrites it, see
// tests/fuzz/regressions/README.md.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sources/package_ref.hpp"
#include "tests/fuzz/utf8_property.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using flytecd::sources::PackageRef;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto ref = flytecd::sources::parse_package_ref(text, error);
  if (!ref) {
    if (error.empty()) std::abort();  // a rejection must say what was wrong
    flytecd::fuzz::expect_json_message("parse_package_ref's error", error);
    return 0;
  }
  std::string again_error;
  std::string printed = ref->to_string();
  flytecd::fuzz::expect_json_message("a package reference as printed", printed);
  if (ref->kind != PackageRef::Kind::oci && ref->pinned()) {
    printed.replace(printed.size() - ref->digest.size() + 6, 1, "=");
  }
  const auto again = flytecd::sources::parse_package_ref(printed, again_error);
  if (!again || again->kind != ref->kind || again->registry != ref->registry ||
      again->repository != ref->repository || again->tag != ref->tag ||
      again->digest != ref->digest || again->url != ref->url || again->path != ref->path) {
    std::abort();
  }
  flytecd::sources::url_safe_version(text);
  return 0;
}
