// `flytecd complete-projects --repo DIR` (hidden): the project ids a repository declares, one a
// line, for the shell completion scripts.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <set>

#include "daemon/cli/command.hpp"

namespace flytecd::cli {

int run_complete_projects(const std::string& repo, std::ostream& out) {
  auto loaded = load_repo(repo, model::Limits{}, model::Policy{});
  if (!loaded) return 1;
  std::set<std::string> projects;  // an invalid repository still names its projects
  for (const auto& p : loaded->documents.projects) projects.insert(p.id);
  for (const auto& o : loaded->documents.overrides) projects.insert(o.scope.project);
  for (const auto& r : loaded->documents.registrations) projects.insert(r.project);
  for (const auto& p : projects)
    if (!p.empty()) out << p << "\n";
  return 0;
}

Runner add_complete_projects_command(CLI::App& app, CommandContext&) {
  // Hidden: what the completion scripts run to offer project ids.
  auto repo = std::make_shared<std::string>(".");
  auto* cmd = app.add_subcommand("complete-projects", "Print the project ids a repository declares")
                  ->group("");
  cmd->add_option("--repo", *repo, "Repository directory (default: .)");
  return when_parsed(cmd, [repo]() -> int { return run_complete_projects(*repo, std::cout); });
}

}  // namespace flytecd::cli
