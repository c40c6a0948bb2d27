#pragma once

// Compiling the packages registrations name, as FlyteAdmin compiles them: what `validate` and
// `plan --git` check before anything is applied.

#include <functional>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/model/diagnostic.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/registration/packages.hpp"

namespace flytecd::cli {

// For `validate` and `plan --git`: compiles the package of every registration whose package is
// a repository path, read with `read` (hydrated with the registration's settings). One error
// diagnostic per registration whose package cannot be read or does not compile, one warning per
// compile warning. OCI and HTTPS packages are not fetched by validate and not compiled here (the
// plan compiles them).
model::Diagnostics compile_repository_packages(
    const std::function<Result<std::string>(const std::string& path)>& read,
    const std::vector<model::Registration>& regs);
// `validate --packages`: the package of every registration, through `packages` (OCI and HTTPS
// fetched into its cache, repository paths read), compiled the same way; a package that cannot
// be fetched is an error naming it.
model::Diagnostics compile_packages(registration::PackageResolver& packages,
                                    const std::vector<model::Registration>& regs);
// The same for a repository kept as a directory.
model::Diagnostics compile_repository_packages(const std::string& dir,
                                               const std::vector<model::Registration>& regs);

}  // namespace flytecd::cli
