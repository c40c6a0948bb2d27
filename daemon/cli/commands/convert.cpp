// `flytecd convert --to flyte2 DIR --out DIR2`: a FlyteAdmin 1.x repository's Overrides and
// PlatformDefaults as Flyte 2 Settings documents (model/convert_flyte2), its projects as they are;
// every field without a Flyte 2 counterpart listed by file:line and name.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/model/convert_flyte2.hpp"
#include "daemon/model/loader.hpp"
#include "sources/local/directory_reader.hpp"

namespace flytecd::cli {
namespace {

struct ConvertOptions {
  std::string to;
  std::string dir;
  std::string out_dir;
  model::Policy policy;
};

int run_convert(const ConvertOptions& opt, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  const char* cmd = "flytecd convert";
  std::error_code ec;
  if (fs::exists(opt.out_dir, ec) && !fs::is_empty(opt.out_dir, ec)) {
    err << cmd << ": " << opt.out_dir << " exists and is not empty; refusing to overwrite\n";
    return 1;
  }
  const model::Limits limits;
  auto files = sources::local::read_yaml_tree(opt.dir, limits.max_file_bytes);
  if (!files) {
    err << cmd << ": " << files.error().message << "\n";
    return 1;
  }
  auto loaded = model::load_documents(*files, limits, opt.policy);
  if (!loaded.ok()) {
    for (const auto& d : loaded.diagnostics)
      if (d.severity == model::Severity::error) err << model::format(d) << "\n";
    err << cmd << ": " << opt.dir << " is invalid; nothing was written (run `flytecd validate "
        << opt.dir << "`)\n";
    return 1;
  }
  const auto c = model::convert_to_flyte2(loaded.documents, opt.policy.domains);
  for (const auto& f : c.files) {
    const fs::path p = fs::path(opt.out_dir) / f.path;
    fs::create_directories(p.parent_path(), ec);
    std::ofstream o(p);
    o << f.text;
    if (!o) {
      err << cmd << ": cannot write " << p.string() << "\n";
      return 1;
    }
  }
  out << "converted " << opt.dir << " into " << opt.out_dir << ": " << c.settings_documents
      << " Settings documents (" << c.leaves << " leaves), " << c.project_documents
      << " Project documents, " << c.files.size() << " files\n";
  if (!loaded.documents.registrations.empty())
    out << "not converted: " << loaded.documents.registrations.size()
        << " workflow registrations (Flyte 2 registers with its own tooling; flytecd does not "
           "register into Flyte 2 yet)\n";
  if (!c.unconverted.empty()) {
    out << "not converted: " << c.unconverted.size()
        << " fields with no Flyte 2 setting of the same meaning:\n";
    for (const auto& u : c.unconverted)
      out << "  " << model::to_string(u.where) << ": " << u.scope << ": " << u.field << ": "
          << u.reason << "\n";
  }
  if (!c.notes.empty()) {
    out << "written, with another effect in Flyte 2:\n";
    for (const auto& n : c.notes) out << "  " << n << "\n";
  }
  return 0;
}

}  // namespace

Runner add_convert_command(CLI::App& app, CommandContext&) {
  auto opt = std::make_shared<ConvertOptions>();
  auto* cmd = app.add_subcommand(
      "convert", "Rewrite a repository for another target (Overrides as Flyte 2 Settings)");
  cmd->add_option("--to", opt->to, "The target's API: flyte2")
      ->required()
      ->check(CLI::IsMember({"flyte2"}));
  cmd->add_option("dir", opt->dir, "Repository directory to read")->required();
  cmd->add_option("--out", opt->out_dir, "Directory to write (must be empty or absent)")
      ->required();
  cmd->add_option("--domains", opt->policy.domains,
                  "FlyteAdmin's configured domains (a project's settings are written per domain)")
      ->delimiter(',');
  cmd->footer(
      "Writes a Settings document where Flyte 2 has a field of the same meaning (task resource\n"
      "defaults and limits, service account, raw data path, labels, annotations, environment\n"
      "variables) and lists every other field by file:line and name; nothing is guessed. Exit\n"
      "codes: 0 written, 1 invalid input or the output directory is not empty.\n"
      "Example:\n"
      "  flytecd convert --to flyte2 repo-layout-example/ --out flyte2-repo/\n");
  return when_parsed(cmd, [opt]() -> int { return run_convert(*opt, std::cout, std::cerr); });
}

}  // namespace flytecd::cli
