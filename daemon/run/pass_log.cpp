#include "daemon/run/pass_log.hpp"

#include "daemon/reconcile/render.hpp"
#include "daemon/registration/registrar.hpp"

namespace flytecd::run {

pass::StepsCallback log_steps(std::shared_ptr<spdlog::logger> log, std::string revision) {
  return [log = std::move(log),
          revision = std::move(revision)](std::span<const pass::StepResult> results) {
    for (const auto& r : results) {
      if (r.step.action == reconcile::Action::adopt) continue;
      const log::Fields fields{{"revision", revision},
                               {"object", r.step.key},
                               {"step", std::string(reconcile::to_string(r.step.action))}};
      std::string changes;
      for (const auto& c : reconcile::step_changes(r.step))
        changes += "; " + reconcile::change_line(c);
      if (r.status)
        log->info("{}{}", reconcile::step_line(r.step), changes);
      else
        log->warn("{} FAILED: {}{}", reconcile::step_line(r.step), r.status.error().message,
                  changes);
    }
  };
}

std::function<void(const registration::RegistrationOutcome&)> log_registration(
    std::shared_ptr<spdlog::logger> log, std::string revision) {
  return [log = std::move(log),
          revision = std::move(revision)](const registration::RegistrationOutcome& o) {
    const log::Fields fields{{"revision", revision},
                             {"object", o.key},
                             {"step", std::string(registration::to_string(o.state))}};
    if (!o.ok())
      log->warn("{}", registration::describe(o));
    else if (o.state != registration::RegistrationState::in_sync)
      log->info("{}", registration::describe(o));
  };
}

void log_ownership(spdlog::logger& log, const pass::Ownership& own, std::string& last) {
  if (own.state != pass::Ownership::State::ledger && own.message != last) {
    (own.state == pass::Ownership::State::unavailable ? log.error(own.message)
                                                      : log.warn(own.message));
    for (const auto& why : own.skipped) log.warn("ownership: not rebuilt: {}", why);
  }
  last = own.state == pass::Ownership::State::ledger ? "" : own.message;
}

void log_suspensions(spdlog::logger& log, const std::optional<Suspension>& all,
                     const ProjectSuspensions& projects) {
  for (const auto& [project, sp] : projects)
    log.warn("project {} SUSPENDED since {} by {}{}: planned, nothing of it is written", project,
             sp.since, sp.by, sp.reason.empty() ? "" : " (" + sp.reason + ")");
  if (all)
    log.warn(
        "SUSPENDED since {} by {}{}: sources are polled and drift reported, nothing is "
        "written (POST /api/v1/resume or `flytecd resume` to resume)",
        all->since, all->by, all->reason.empty() ? "" : " (" + all->reason + ")");
}

}  // namespace flytecd::run
