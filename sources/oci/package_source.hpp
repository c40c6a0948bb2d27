#pragma once

#include <memory>

#include "sources/oci/fetcher.hpp"
#include "sources/package_source.hpp"

namespace flytecd::sources::oci {

// OCI (oci://…) and HTTPS (https://…) packages through a PackageFetcher and its verified,
// content-addressed cache; repository paths are invalid_input. Thread-safe.
std::unique_ptr<PackageSource> make_package_source(FetchOptions options);

}  // namespace flytecd::sources::oci
