#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/model/diagnostic.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/registration/packages.hpp"

namespace CLI {
class App;
}

namespace flytecd::cli {

struct CompileOptions {
  std::string package;                   // PACKAGE.tgz
  std::string project, domain, version;  // hydrate first when all three are given
};

// `flytecd compile PACKAGE.tgz`: reads the archive and compiles it as FlyteAdmin would (like
// `flytectl compile`). Prints every error and warning; 0 when it compiles, 1 otherwise.
int run_compile(const CompileOptions& opt, std::ostream& out, std::ostream& err);

// Registers `compile` on `app`; the result runs it when it was the command given (nullopt
// when another command was).
std::function<std::optional<int>()> add_compile_command(CLI::App& app);

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
