#pragma once

// `flytecd compile PACKAGE.tgz`: one package archive compiled as FlyteAdmin would compile it.

#include <functional>
#include <optional>
#include <ostream>
#include <string>

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

}  // namespace flytecd::cli
