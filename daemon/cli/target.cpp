// What the commands that read a repository or reach a target share: the configuration from the
// flags, a valid revision, the opened target, the pass options, and the checks apply and plan
// both make (ownership line, --project).
#include <set>

#include "daemon/cli/commands.hpp"
#include "daemon/cli/suggest.hpp"
#include "daemon/common/log.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/wiring/target.hpp"
#include "daemon/wiring/target_identity.hpp"
#include "daemon/wiring/wiring.hpp"
#include "sources/local/directory_reader.hpp"

namespace flytecd::cli {

Result<wiring::LoadedRevision> load_valid(wiring::Reconciler& rec, const std::string& at,
                                          std::ostream& err) {
  const config::Config& cfg = rec.config();
  // The same source the daemon reads (wiring::make_source): Git, or the `repo` directory, whose
  // revision id is a hash of its content ("dir:<16 hex>"), so a command and the daemon name
  // one directory state alike.
  if (cfg.git.url.empty() && !at.empty())
    return make_error(ErrorCode::invalid_input,
                      "revision '" + at + "' needs a Git source (git.url or --git)");
  auto rev = rec.load(at);
  if (!rev) return rev.error();
  if (!rev->ok()) {
    for (const auto& d : rev->diagnostics)
      if (d.severity == model::Severity::error) err << model::format(d) << "\n";
    const std::string where = cfg.git.url.empty()
                                  ? "the repository at " + cfg.repo
                                  : rec.describe_source() + " at " + rev->revision.substr(0, 12);
    return make_error(ErrorCode::invalid_input,
                      where + " is invalid; nothing was applied (run `flytecd validate`)");
  }
  return rev;
}

Result<Prepared> prepare(const config::Config& cfg, const std::string& at, wiring::Access access,
                         std::ostream& err) {
  auto rec = wiring::Reconciler::open(cfg);
  if (!rec) return rec.error();
  (*rec)->keep_no_parsed_files();  // a command loads its revision once
  auto rev = load_valid(**rec, at, err);
  if (!rev) return rev.error();
  if (auto s = (*rec)->open_target(access); !s) return s.error();
  return Prepared{std::move(*rec), std::move(*rev)};
}

pass::Options command_options(const config::Config& cfg, pass::Mode mode) {
  auto o = wiring::pass_options(cfg, mode);
  o.writer = wiring::host_identity() + " (flytecd CLI)";
  return o;
}

bool worth_saying(const pass::Ownership& o, const reconcile::Plan& plan) {
  if (o.state == pass::Ownership::State::ledger) return false;
  return o.state != pass::Ownership::State::none || !plan.unmanaged.empty();
}

Status check_scope_project(const TargetOptions& opt, const model::Documents& docs,
                           const ledger::Ledger& ledger) {
  if (opt.project.empty()) return ok_status();
  std::set<std::string> projects;
  for (const auto& p : docs.projects) projects.insert(p.id);
  for (const auto& o : docs.overrides) projects.insert(o.scope.project);
  for (const auto& r : docs.registrations) projects.insert(r.project);
  if (projects.count(opt.project)) return ok_status();
  // Removed from Git but still owned: --project prunes it.
  if (auto managed = ledger.managed())
    for (const auto& [key, entry] : *managed)
      if (key == "project/" + opt.project || key.rfind("override/" + opt.project + "/", 0) == 0)
        return ok_status();
  if (auto regs = ledger.registrations())
    for (const auto& [key, rec] : *regs)
      if (rec.project == opt.project) return ok_status();
  const std::vector<std::string> known(projects.begin(), projects.end());
  std::string list;
  for (size_t i = 0; i < known.size() && i < 10; ++i) list += (i ? ", " : "") + known[i];
  return make_error(ErrorCode::invalid_input,
                    "--project '" + scan::printable(opt.project) +
                        "': no document declares it and flytecd manages nothing in it" +
                        did_you_mean(opt.project, known) +
                        (known.empty() ? std::string()
                                       : "; projects: " + list + (known.size() > 10 ? ", …" : "")));
}

Result<config::Config> resolve_config(const TargetOptions& opt) {
  config::Config cfg = config::defaults();
  if (!opt.config_file.empty())
    if (auto s = config::load_file(opt.config_file, cfg); !s) return s.error();
  log::configure(cfg.log.level, cfg.log.format);
  if (auto s = config::apply_env(cfg); !s) return s.error();
  if (!opt.flytectl_config.empty()) {
    auto admin = sinks::flyteadmin::load_flytectl_config(opt.flytectl_config);
    if (!admin) return admin.error();
    cfg.admin = *admin;
  }
  if (!opt.repo.empty()) {
    cfg.repo = opt.repo;
    cfg.git.url.clear();  // an explicit directory wins over the configured Git source
  }
  if (!opt.state_dir.empty()) cfg.state_dir = opt.state_dir;
  if (!opt.admin_endpoint.empty()) cfg.admin.endpoint = opt.admin_endpoint;
  if (opt.insecure) cfg.admin.insecure = true;
  if (opt.no_self_heal) cfg.policy.self_heal = false;
  if (opt.no_prune) cfg.policy.prune = false;
  if (opt.allow_mass_prune) cfg.policy.allow_mass_prune = true;
  if (opt.allow_empty) cfg.policy.allow_empty = true;
  if (opt.max_prune_share >= 0) cfg.policy.max_prune_share = opt.max_prune_share;
  if (opt.parallelism > 0) cfg.parallelism = opt.parallelism;
  if (opt.lock_wait_seconds >= 0) cfg.lock_wait_seconds = opt.lock_wait_seconds;
  if (auto s = config::check_ranges(cfg); !s) return s.error();
  return cfg;
}

Result<model::LoadResult> load_repo(const std::string& dir, const model::Limits& limits,
                                    const model::Policy& policy) {
  auto files = sources::local::read_yaml_tree(dir, limits.max_file_bytes);
  if (!files) return files.error();
  return model::load_documents(*files, limits, policy);
}

}  // namespace flytecd::cli
