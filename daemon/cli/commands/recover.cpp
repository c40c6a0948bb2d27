// `flytecd recover --from-revision REV`: rebuild what flytecd owns from a revision it applied,
// for a VM whose state directory (ledger and applied-revision record) was lost. It writes the
// record (REV converged) and marks the ledger stale; the rebuild itself is the one pass's first
// step (pass/ownership.hpp), shown here as the plan the next `apply` or `run` will execute.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/cli/commands.hpp"
#include "daemon/pass/views.hpp"
#include "daemon/wiring/target.hpp"
#include "daemon/wiring/wiring.hpp"

namespace flytecd::cli {

int run_recover(const TargetOptions& opt, const std::string& from_revision, bool force,
                std::ostream& out, std::ostream& err) {
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd recover: " << cfg.error().message << "\n";
    return 1;
  }
  if (cfg->git.url.empty()) {
    err << "flytecd recover: ownership is rebuilt from a Git revision, and the repository is the "
           "directory "
        << cfg->repo << " (set git.url, or --config with a Git source)\n";
    return 1;
  }
  auto reconciler = wiring::Reconciler::open(*cfg);
  if (!reconciler) {
    err << "flytecd recover: " << reconciler.error().message << "\n";
    return 1;
  }
  auto from = load_valid(**reconciler, from_revision, err);
  if (!from) {
    err << "flytecd recover: --from-revision " << from_revision << ": " << from.error().message
        << "\n";
    return 1;
  }
  if (auto s = (*reconciler)->open_target(); !s) {
    err << "flytecd recover: " << s.error().message << "\n";
    return 1;
  }
  wiring::Target* target = &(*reconciler)->target();
  auto empty = target->ledger->owns_nothing();
  if (!empty) {
    err << "flytecd recover: ledger: " << empty.error().message << "\n";
    return 1;
  }
  if (!*empty && !force) {
    err << "flytecd recover: the ledger of " << target->identity << " in " << target->state_dir
        << " already records what flytecd owns; recovering replaces it with what "
        << from->revision.substr(0, 12)
        << " declares (pass --force to do so; `flytecd plan --live` shows the current view)\n";
    return 1;
  }
  pass::RecordStore* store = &(*reconciler)->record();
  auto stored = store->read();
  std::string token;
  if (stored && *stored) token = (*stored)->token;
  pass::AppliedRecord rec;
  rec.converged = from->revision;
  rec.config_fingerprint = wiring::ownership_fingerprint(*cfg);
  rec.version = FLYTECD_VERSION;
  rec.writer = wiring::host_identity() + " (flytecd recover)";
  rec.updated_at = static_cast<int64_t>(std::time(nullptr));
  if (auto w = store->write(rec, token); !w) {
    err << "flytecd recover: " << w.error().message << "\n";
    return 1;
  }
  // The ledger no longer names a converged revision: the next pass rebuilds it from the record.
  if (auto s = target->ledger->set_converged_revision(""); !s) {
    err << "flytecd recover: ledger: " << s.error().message << "\n";
    return 1;
  }
  out << "recorded " << from->revision.substr(0, 12)
      << (from->subject.empty() ? "" : " (" + from->subject + ")") << " as the revision flytecd "
      << "last applied, in " << store->describe() << "\n";
  // The next pass, planned now: the rebuild happens in memory, nothing is written.
  auto head = load_valid(**reconciler, "", err);
  if (!head) {
    err << "flytecd recover: " << head.error().message << "\n";
    return 1;
  }
  const auto report = (*reconciler)->pass(*head, command_options(*cfg, pass::Mode::plan));
  if (!report.observed) {
    err << "flytecd recover: " << (report.error ? report.error->message : "not observed") << "\n";
    return 1;
  }
  out << "ownership: " << report.ownership.message << "\n";
  for (const auto& why : report.ownership.skipped) out << "  not rebuilt: " << why << "\n";
  out << "the next apply or run of " << head->revision.substr(0, 12) << " will do:\n"
      << pass::plan_text(report, false);
  return 0;
}

Runner add_recover_command(CLI::App& app, CommandContext&) {
  struct State {
    TargetOptions target;
    std::string from;
    bool force = false;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand(
      "recover", "Rebuild what flytecd owns from a Git revision it applied (lost state directory)");
  add_target_options(cmd, st->target);
  cmd->add_option("--from-revision", st->from, "the commit (or branch, tag) last applied")
      ->required();
  cmd->add_flag("--force", st->force, "replace a ledger that already records ownership");
  cmd->footer(
      "\nThe next apply or run rebuilds the ledger from that revision: what it declares is owned\n"
      "(so what Git has dropped since is pruned, under the guard), and a live value that differs\n"
      "from it is drift. Example:\n"
      "  flytecd recover --config /etc/flytecd/config.yaml --from-revision 3f2c1e9\n");
  return when_parsed(cmd, [st]() -> int {
    return run_recover(st->target, st->from, st->force, std::cout, std::cerr);
  });
}

}  // namespace flytecd::cli
