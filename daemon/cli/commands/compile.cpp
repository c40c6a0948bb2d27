// `flytecd compile PACKAGE.tgz`: compiles a package archive as FlyteAdmin would (like
// `flytectl compile`), optionally hydrated first; no FlyteAdmin needed.
#include "daemon/cli/commands/compile.hpp"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "daemon/cli/command.hpp"
#include "daemon/registration/compile.hpp"
#include "daemon/registration/packages.hpp"

namespace flytecd::cli {
namespace reg = ::flytecd::registration;

namespace {

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int run_compile(const CompileOptions& opt, std::ostream& out, std::ostream& err) {
  const int given = !opt.project.empty() + !opt.domain.empty() + !opt.version.empty();
  if (given != 0 && given != 3) {
    err << "flytecd compile: -p, -d and --version go together (they hydrate the package first)\n";
    return 1;
  }
  std::ifstream in(opt.package, std::ios::binary);
  if (!in) {
    err << "flytecd compile: cannot read " << opt.package << "\n";
    return 1;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string name = base_name(opt.package);
  auto pkg = reg::read_package(bytes.str(), name);
  if (!pkg) {
    err << "flytecd compile: " << pkg.error().message << "\n";
    return 1;
  }
  if (given == 3) {
    reg::HydrateParams p;
    p.project = opt.project;
    p.domain = opt.domain;
    p.version = opt.version;
    if (pkg->has_fast_source()) p.remote_package_path = "fast-source://" + pkg->fast_source_name;
    if (auto s = reg::hydrate(*pkg, p); !s) {
      err << "flytecd compile: " << s.error().message << "\n";
      return 1;
    }
  }
  auto report = reg::compile_package(*pkg, name);
  for (const auto& e : reg::group_messages(report.errors)) out << "error: " << e << "\n";
  for (const auto& w : reg::group_messages(report.warnings)) out << "warning: " << w << "\n";
  out << name << ": " << (report.ok() ? "compiles" : "does not compile") << " ("
      << pkg->count(reg::EntityKind::task) << " tasks, " << pkg->count(reg::EntityKind::workflow)
      << " workflows, " << pkg->count(reg::EntityKind::launch_plan) << " launch plans); "
      << report.errors.size() << " errors, " << report.warnings.size() << " warnings\n";
  return report.ok() ? 0 : 1;
}

std::function<std::optional<int>()> add_compile_command(CLI::App& app) {
  auto opt = std::make_shared<CompileOptions>();
  auto* cmd = app.add_subcommand(
      "compile", "Compile a package as FlyteAdmin would (like flytectl compile); no FlyteAdmin");
  cmd->add_option("package", opt->package, "The pyflyte package archive (.tgz, .tar.gz, .tar)")
      ->required();
  cmd->add_option("-p,--project", opt->project, "Hydrate with this project first");
  cmd->add_option("-d,--domain", opt->domain, "Hydrate with this domain first");
  cmd->add_option("--version", opt->version, "Hydrate with this version first");
  cmd->footer(
      "Checks every workflow's node bindings, outputs, branches, failure node and references, "
      "and every launch plan's inputs, with Flyte's type rules. Exit 0: compiles; 1: errors "
      "(listed).\n\nExamples:\n  flytecd compile packages/flyte-package.tgz\n"
      "  flytecd compile pkg.tgz -p flytesnacks -d development --version v1\n");
  return when_parsed(cmd, [opt]() -> int { return run_compile(*opt, std::cout, std::cerr); });
}

Runner add_compile_row(CLI::App& app, CommandContext&) { return add_compile_command(app); }

}  // namespace flytecd::cli
