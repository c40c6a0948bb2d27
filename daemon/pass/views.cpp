#include "daemon/pass/views.hpp"

#include "daemon/reconcile/render.hpp"

namespace flytecd::pass {
namespace {

struct RegistrationTally {
  size_t add = 0, change = 0, remove = 0, failed = 0;
};

RegistrationTally tally(const registration::RegistrationReport& regs) {
  RegistrationTally t;
  for (const auto& o : regs.items) {
    if (o.state == "register" || o.state == "registered")
      ++t.add;
    else if (o.state == "activate" || o.state == "activated")
      ++t.change;
    else if (o.state == "removed")
      ++t.remove;
    else if (!o.ok())
      ++t.failed;
  }
  return t;
}

}  // namespace

std::string summary(const Report& report) {
  std::string s = reconcile::summary_line(report.plan);
  const auto t = tally(report.registrations);
  if (!report.registrations.items.empty())
    s += " · registrations: +" + std::to_string(t.add) + " ~" + std::to_string(t.change) + " -" +
         std::to_string(t.remove) + (t.failed ? " (" + std::to_string(t.failed) + " failed)" : "");
  return s;
}

nlohmann::ordered_json plan_json(const Report& report, size_t max_steps) {
  auto j = reconcile::render_json(report.plan, report.target);
  j["revision"] = report.revision;
  j["outcome"] = std::string(to_string(report.outcome));
  if (report.error) j["error"] = report.error->message;
  j["summary"] = summary(report);
  if (max_steps && j["steps"].size() > max_steps) {
    const size_t omitted = j["steps"].size() - max_steps;
    j["steps"].erase(j["steps"].begin() + static_cast<std::ptrdiff_t>(max_steps), j["steps"].end());
    j["stepsOmitted"] = omitted;
  }
  j["registrationChanges"] = report.registrations.has_changes();
  j["registrations"] = nlohmann::ordered_json::array();
  for (const auto& o : report.registrations.items)
    j["registrations"].push_back(nlohmann::ordered_json::parse(registration::to_json(o).dump()));
  return j;
}

std::string plan_text(const Report& report, bool markdown) {
  std::string out = markdown ? reconcile::render_markdown(report.plan, report.target)
                             : reconcile::render_text(report.plan, report.target);
  if (!report.registrations.items.empty()) {
    out += markdown ? "\n### Registrations\n\n" : "\nregistrations:\n";
    for (const auto& o : report.registrations.items)
      out += (markdown ? "- " : "  ") + registration::describe(o) + "\n";
  }
  if (report.outcome == Outcome::failed && report.error)
    out += (markdown ? "\n**failed:** " : "\nFAILED: ") + report.error->message + "\n";
  return out;
}

int plan_exit_code(const Report& report) {
  if (report.outcome != Outcome::success) return 1;
  return report.has_changes() ? 2 : 0;
}

int apply_exit_code(const Report& report) { return report.outcome == Outcome::success ? 0 : 1; }

Readiness readiness(const Report& report) {
  Readiness r;
  r.target_up = !report.target_down() && (report.observed || report.outcome == Outcome::refused);
  r.converged = report.executed() && report.applied.ok();
  if (!r.target_up)
    r.reason = "target unreachable: " + (report.error ? report.error->message
                                         : report.registrations.target_down
                                             ? report.registrations.target_down->message
                                             : std::string("not observed"));
  else if (!r.converged)
    r.reason = report.error ? report.error->message : "last reconcile failed";
  return r;
}

nlohmann::json last_sync_json(const Report& report, const std::string& reason) {
  const auto& a = report.applied;
  return {{"reason", reason},
          {"revision", report.revision},
          {"outcome", std::string(to_string(report.outcome))},
          {"failedRegistrations", report.registrations.failed()},
          {"durationSeconds", report.seconds},
          {"steps", a.results.size()},
          {"failedSteps", a.failed},
          {"summary", summary(report)},
          {"error", report.error ? report.error->message : std::string()},
          {"errorCode", report.error ? std::string(to_string(report.error->code)) : std::string()},
          {"stepsNotStarted", a.not_started},
          {"plan", nlohmann::json::parse(plan_json(report, 200).dump())}};
}

nlohmann::json objects_json(const Report& report) {
  nlohmann::json objects = nlohmann::json::array();
  for (const auto& o : report.applied.objects) {
    nlohmann::json j{{"key", o.key}, {"state", std::string(reconcile::to_string(o.state))}};
    if (!o.detail.empty()) j["error"] = o.detail;
    objects.push_back(std::move(j));
  }
  for (const auto& u : report.plan.unmanaged)
    objects.push_back({{"key", u}, {"state", "unmanaged"}});
  return objects;
}

nlohmann::json drift_json(const Report& report) {
  nlohmann::json drift = nlohmann::json::array();
  for (const auto& d : report.plan.drift)
    drift.push_back({{"key", d.key}, {"detail", d.detail}, {"reverted", d.healed}});
  for (const auto& o : report.registrations.items)
    for (const auto& d : o.drift)
      drift.push_back({{"key", o.key}, {"detail", d}, {"reverted", !o.activated.empty()}});
  return drift;
}

nlohmann::json registrations_json(const Report& report) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& o : report.registrations.items) out.push_back(registration::to_json(o));
  return out;
}

ObjectCounts object_counts(const Report& report, const reconcile::Managed& managed) {
  ObjectCounts c;
  for (const auto& [k, r] : managed)
    (k.rfind("project/", 0) == 0 ? c.managed_projects : c.managed_overrides) += 1;
  for (const auto& u : report.plan.unmanaged)
    (u.rfind("project/", 0) == 0 ? c.unmanaged_projects : c.unmanaged_overrides) += 1;
  for (const auto& d : report.plan.drift)
    (d.kind == reconcile::ObjectKind::project ? c.drifted_projects : c.drifted_overrides) += 1;
  return c;
}

std::map<std::string, double> registrations_by_state(const Report& report) {
  std::map<std::string, double> by_state;
  for (const char* st :
       {"registered", "in-sync", "activated", "removed", "orphaned", "failed", "conflict"})
    by_state[st] = 0;
  for (const auto& o : report.registrations.items) by_state[o.state] += 1;
  return by_state;
}

std::vector<std::string> drift_lines(const Report& report) {
  std::vector<std::string> out;
  for (const auto& d : report.plan.drift) out.push_back(d.key + ": " + d.detail);
  for (const auto& o : report.registrations.items)
    for (const auto& d : o.drift) out.push_back(o.key + ": " + d);
  return out;
}

}  // namespace flytecd::pass
