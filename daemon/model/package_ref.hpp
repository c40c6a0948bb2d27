#pragma once

// A package's address is the value the PackageSource interface takes: it is declared there
// (sources/package_ref.hpp). The model names it too, for documents and their checks.
#include "sources/package_ref.hpp"

namespace flytecd::model {

using sources::PackageRef;
using sources::parse_package_ref;
using sources::url_safe_version;
using sources::valid_oci_repository;
using sources::valid_oci_tag;
using sources::valid_sha256_digest;

}  // namespace flytecd::model
