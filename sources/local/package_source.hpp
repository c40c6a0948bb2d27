#pragma once

#include <memory>

#include "sources/package_source.hpp"

namespace flytecd::sources::local {

// Packages kept in the repository (PackageRef::Kind::path), read through `read`; other kinds are
// invalid_input. A null `read` (a source that cannot read repository files) fails every load
// with invalid_input. Thread-safe when `read` is.
std::unique_ptr<PackageSource> make_package_source(RepoFileReader read);

}  // namespace flytecd::sources::local
