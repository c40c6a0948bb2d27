#include "daemon/cli/cli.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

#include "daemon/cli/commands.hpp"

namespace flytecd::cli {

int run(int argc, char** argv) {
  CLI::App app{"flytecd — GitOps for Flyte: keeps a Flyte deployment equal to a Git repository.",
               "flytecd"};
  app.set_version_flag("--version", std::string("flytecd ") + FLYTECD_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  flytecd validate repo-layout-example/\n"
      "  flytecd get overrides -p flytesnacks -d development --repo repo-layout-example/\n");

  ValidateOptions vopt;
  auto* validate = app.add_subcommand(
      "validate", "Check every document of a repository directory (pre-commit / CI)");
  validate->add_option("dir", vopt.dir, "Repository directory (default: .)");
  validate->add_option("-o,--output", vopt.output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  validate->add_flag("--require-digest", vopt.policy.require_digest_pins,
                     "Policy: packages must be pinned by digest");
  validate->add_option("--domains", vopt.policy.domains, "FlyteAdmin's configured domains")
      ->delimiter(',');
  validate->footer(
      "Exit codes: 0 valid, 1 invalid (every error is listed with file:line:column).\n"
      "Examples:\n"
      "  flytecd validate repo-layout-example/\n"
      "  flytecd validate -o json . | jq '.diagnostics[] | .kind'\n");

  GetOverridesOptions gopt;
  auto* get = app.add_subcommand("get", "Show objects as flytecd resolves them");
  get->require_subcommand(1);
  auto* overrides = get->add_subcommand("overrides",
                                        "The effective (collated) overrides for a project, "
                                        "project-domain or workflow, as FlyteAdmin resolves them");
  overrides->add_option("-p,--project", gopt.project, "Project")->required();
  overrides->add_option("-d,--domain", gopt.domain, "Domain");
  overrides->add_option("--workflow", gopt.workflow, "Workflow name (needs --domain)");
  overrides->add_option("-o,--output", gopt.output, "yaml or json")
      ->check(CLI::IsMember({"yaml", "json"}));
  overrides->add_option("--repo", gopt.repo, "Repository directory (default: .)");
  overrides->footer(
      "Every attribute that applies is shown with inherited: true|false and its source scope.\n"
      "Examples:\n"
      "  flytecd get overrides -p flytesnacks --repo repo-layout-example/\n"
      "  flytecd get overrides -p flytesnacks -d production --workflow core.basics.hello -o json "
      "--repo repo-layout-example/\n");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (validate->parsed()) return run_validate(vopt, std::cout, std::cerr);
  if (overrides->parsed()) return run_get_overrides(gopt, std::cout, std::cerr);
  return 1;
}

}  // namespace flytecd::cli
