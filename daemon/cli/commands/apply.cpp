// `flytecd apply`: one reconcile pass that makes FlyteAdmin equal to the repository, then exits.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/pass/apply.hpp"
#include "daemon/pass/views.hpp"
#include "daemon/reconcile/render.hpp"
#include "daemon/registration/registrar.hpp"
#include "daemon/wiring/target.hpp"

namespace flytecd::cli {

int run_apply(const TargetOptions& opt, const std::string& format, std::ostream& out,
              std::ostream& err) {
  const std::string at;  // the configured source at its head
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd apply: " << cfg.error().message << "\n";
    return 1;
  }
  auto prepared = prepare(*cfg, at, wiring::Access::write, err);
  if (!prepared) {
    err << "flytecd apply: " << prepared.error().message << "\n";
    return 1;
  }
  wiring::Reconciler& rec = *prepared->rec;
  const wiring::LoadedRevision& rev = prepared->rev;
  wiring::Target* target = &rec.target();
  if (auto s = check_scope_project(opt, rev.docs, *target->ledger); !s) {
    err << "flytecd apply: " << s.error().message << "\n";
    return 1;
  }
  const bool json = format == "json";
  if (!json) out << "target: " << target->description << "\n";
  auto options = command_options(*cfg, pass::Mode::execute);
  options.scope = pass::PassScope{opt.project, opt.domain};
  if (!json && !options.scope.empty()) out << "scope: " << options.scope.describe() << "\n";
  if (!json)
    // The lines of steps that ended together in one write (stdout is line-buffered: a write per
    // line was a tenth of the executor thread's time in a cold apply of 38,000 steps).
    options.on_steps = [&](std::span<const pass::StepResult> results) {
      std::string lines;
      for (const auto& r : results) {
        if (r.step.action == reconcile::Action::adopt) continue;
        lines += reconcile::step_line(r.step);
        lines += r.status ? "  ok\n" : "  FAILED: " + r.status.error().message + "\n";
        for (const auto& c : reconcile::step_changes(r.step))
          lines += "    " + reconcile::change_line(c) + "\n";
      }
      out << lines << std::flush;
    };
  const auto report = rec.pass(rev, options);
  const pass::Verdict verdict = pass::apply_verdict(report);  // the last line and the exit code
  const auto& applied = report.applied;
  size_t adopted = 0;
  for (const auto& r : applied.results)
    adopted += r.step.action == reconcile::Action::adopt && r.status.ok();
  if (worth_saying(report.ownership, report.plan) && !json)
    out << "ownership: " << report.ownership.message << "\n";
  if (json) {
    auto j = pass::plan_json(report);
    j["ownership"] = pass::ownership_json(report.ownership,
                                          "file " + pass::record_file(target->state_dir).string());
    j["applied"] = {{"steps", applied.results.size() - adopted},
                    {"failed", applied.failed},
                    {"adopted", adopted},
                    {"rounds", applied.rounds},
                    {"writeSeconds", applied.write_seconds},
                    {"converged", applied.converged},
                    {"registrationRpcs", report.registrations.rpcs}};
    out << dump_json(j, 2) << "\n";
  } else if (report.outcome == pass::Outcome::refused) {
    out << "applied 0 steps; registrations: 0 write RPCs\n" << verdict.line << "\n";
  } else if (!report.observed) {
    out << "applied 0 steps\n" << verdict.line << "\n";
  } else {
    const auto& p = report.plan;
    for (const auto& d : p.drift) {
      out << "! drift " << d.key << ": " << d.detail
          << (d.healed ? " (reverted)" : " (self-heal off: reported only)") << "\n";
      for (const auto& c : d.changes) out << "    " << reconcile::change_line(c) << "\n";
    }
    for (const auto& u : p.unmanaged) out << "? unmanaged " << u << " (left alone)\n";
    out << pass::summary(report) << "\n";  // registrations too: a version bump is a change
    for (const auto& o : report.registrations.items) out << registration::describe(o) << "\n";
    out << "registrations: " << report.registrations.items.size() << " ("
        << report.registrations.failed() << " failed), " << report.registrations.rpcs
        << " write RPCs\n";
    out << "applied " << applied.results.size() - adopted << " steps (" << applied.failed
        << " failed), adopted " << adopted << ", rounds " << applied.rounds << ", "
        << report.seconds << " s (running steps " << applied.write_seconds << " s)\n"
        << verdict.line << "\n";
  }
  if (report.target_down())
    err << "flytecd apply: FlyteAdmin at " << target->description << " is down ("
        << (report.error ? report.error->message : "") << "); what succeeded is recorded in the "
        << "ledger; run apply again when it is back\n";
  return verdict.exit_code;
}

Runner add_apply_command(CLI::App& app, CommandContext&) {
  auto opt = std::make_shared<TargetOptions>();
  auto format = std::make_shared<std::string>("text");
  auto* cmd = app.add_subcommand(
      "apply", "Reconcile once: make FlyteAdmin equal to the repository, then exit");
  add_target_options(cmd, *opt);
  add_scope_options(cmd, opt->project, opt->domain);
  cmd->add_option("-o,--output", *format, "text or json (the pass's plan and results)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->footer(
      "With no FlyteAdmin endpoint configured, the target is the embedded FlyteAdmin emulator\n"
      "(persisted in the state directory). Exit codes: 0 converged, 1 failed or refused.\n"
      "Examples:\n"
      "  flytecd apply --repo repo-layout-example/\n"
      "  flytecd apply --config /etc/flytecd/config.yaml --no-prune\n");
  return when_parsed(
      cmd, [opt, format]() -> int { return run_apply(*opt, *format, std::cout, std::cerr); });
}

}  // namespace flytecd::cli
