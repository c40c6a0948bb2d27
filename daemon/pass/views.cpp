#include "daemon/pass/views.hpp"

#include <ctime>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "daemon/reconcile/render.hpp"

namespace flytecd::pass {
namespace {

struct RegistrationTally {
  size_t add = 0, change = 0, remove = 0, failed = 0;
};

RegistrationTally tally(const registration::RegistrationReport& regs) {
  RegistrationTally t;
  for (const auto& o : regs.items) {
    if ((o.state == registration::RegistrationState::register_ ||
         o.state == registration::RegistrationState::registered) &&
        !o.previous_version.empty())
      ++t.change;  // a new version (or content) of a registration flytecd already applied
    else if (o.state == registration::RegistrationState::register_ ||
             o.state == registration::RegistrationState::registered)
      ++t.add;
    else if (o.state == registration::RegistrationState::activate ||
             o.state == registration::RegistrationState::activated)
      ++t.change;
    else if (o.state == registration::RegistrationState::removed)
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
  if (report.targeted.used)
    s += " · targeted: " + PassScope{"", "", report.targeted.projects}.describe() +
         " changed since " + report.targeted.base.substr(0, 12);
  return s;
}

namespace {

template <typename T, typename KeyOf>
void merge_by_key(std::vector<T>& out, const std::vector<T>& whole, const std::vector<T>& targeted,
                  const PassScope& scope, KeyOf key_of) {
  out.clear();
  for (const auto& x : whole)
    if (!key_in_scope(scope, key_of(x))) out.push_back(x);
  out.insert(out.end(), targeted.begin(), targeted.end());
  std::stable_sort(out.begin(), out.end(),
                   [&](const T& a, const T& b) { return key_of(a) < key_of(b); });
}

}  // namespace

Report merged_view(const Report& whole, const Report& targeted) {
  Report out = targeted;
  if (!targeted.targeted.used) return out;
  const PassScope scope{"", "", targeted.targeted.projects};
  merge_by_key(out.applied.objects, whole.applied.objects, targeted.applied.objects, scope,
               [](const ObjectStatus& o) -> const std::string& { return o.key; });
  merge_by_key(out.plan.drift, whole.plan.drift, targeted.plan.drift, scope,
               [](const reconcile::DriftItem& d) -> const std::string& { return d.key; });
  merge_by_key(out.plan.unmanaged, whole.plan.unmanaged, targeted.plan.unmanaged, scope,
               [](const std::string& k) -> const std::string& { return k; });
  merge_by_key(out.plan.orphaned, whole.plan.orphaned, targeted.plan.orphaned, scope,
               [](const std::string& k) -> const std::string& { return k; });
  merge_by_key(
      out.registrations.items, whole.registrations.items, targeted.registrations.items, scope,
      [](const registration::RegistrationOutcome& o) -> const std::string& { return o.key; });
  return out;
}

nlohmann::ordered_json plan_json(const Report& report, size_t max_steps) {
  auto j = reconcile::render_json(report.plan, report.target);
  j["revision"] = report.revision;
  j["outcome"] = std::string(to_string(report.outcome));
  if (report.error) j["error"] = report.error->message;
  j["summary"] = summary(report);
  {
    const Verdict v = report.mode == Mode::execute ? apply_verdict(report) : plan_verdict(report);
    j["verdict"] = v.word;
    j["verdictLine"] = v.line;
    j["exitCode"] = v.exit_code;
  }
  if (max_steps && j["steps"].size() > max_steps) {
    const size_t omitted = j["steps"].size() - max_steps;
    j["steps"].erase(j["steps"].begin() + static_cast<std::ptrdiff_t>(max_steps), j["steps"].end());
    j["stepsOmitted"] = omitted;
  }
  if (!report.held.empty()) {
    j["heldProjects"] = std::vector<std::string>(report.held.begin(), report.held.end());
    j["heldSteps"] = report.held_steps;
  }
  j["registrationChanges"] = report.registrations.has_changes();
  j["registrations"] = nlohmann::ordered_json::array();
  for (const auto& o : report.registrations.items)
    j["registrations"].push_back(
        nlohmann::ordered_json::parse(dump_json(registration::to_json(o))));
  return j;
}

std::string plan_text(const Report& report, bool markdown) {
  std::string out = markdown ? reconcile::render_markdown(report.plan, report.target)
                             : reconcile::render_text(report.plan, report.target);
  if (!report.registrations.items.empty()) {
    out += markdown ? "\n### Registrations\n\n" : "registrations:\n";
    for (const auto& o : report.registrations.items)
      out += (markdown ? "- " : "  ") + registration::describe(o) + "\n";
  }
  // The summary (registrations counted) and the verdict close the text; the verdict is the
  // value the exit code comes from.
  const Verdict v = plan_verdict(report);
  if (markdown)
    out += "\n**" + v.line + "** · " + summary(report) + "\n";
  else
    out += summary(report) + "\n" + v.line + "\n";
  return out;
}

namespace {

// The first failure of a pass, and how many there were (steps and registrations).
std::pair<size_t, std::string> failures(const Report& r) {
  size_t n = r.applied.failed + r.registrations.failed();
  std::string first;
  for (const auto& s : r.applied.results)
    if (!s.status.ok()) {
      first = reconcile::object_name(s.step) + ": " + s.status.error().message;
      break;
    }
  if (first.empty())
    for (const auto& o : r.registrations.items)
      if (!o.ok()) {
        first = o.key + ": " + o.message;
        break;
      }
  if (first.empty() && r.error) first = r.error->message;
  if (first.empty() && !r.applied.error.empty()) first = r.applied.error;
  return {n, first};
}

}  // namespace

Verdict plan_verdict(const Report& report) {
  if (report.outcome == Outcome::refused)
    return {1, "REFUSED: " + report.guard.reason + " (nothing of this revision would be executed)",
            "refused"};
  if (report.outcome != Outcome::success) {
    auto [n, first] = failures(report);
    return {1, "FAILED: " + (first.empty() ? std::string("the pass failed") : first), "failed"};
  }
  if (report.has_changes()) return {2, "changes pending", "changes"};
  // Drift left in place (self-heal off) is a difference between Git and live state too.
  if (!report.plan.drift.empty())
    return {2,
            "no changes planned; " + std::to_string(report.plan.drift.size()) +
                " object(s) drifted from Git (self-heal off)",
            "drift"};
  return {0, "no changes", "no-changes"};
}

Verdict apply_verdict(const Report& report) {
  if (report.outcome == Outcome::refused)
    return {1, "REFUSED: " + report.guard.reason + " (nothing of this revision was executed)",
            "refused"};
  if (report.outcome == Outcome::success && report.observed) {
    if (report.held.empty()) return {0, "converged", "converged"};
    // The projects whose writes are suspended were planned only: said, not hidden.
    return {0,
            "converged (suspended: project " + describe(report.held) + ", " +
                std::to_string(report.held_steps) + " step(s) planned, not written)",
            "converged"};
  }
  auto [n, first] = failures(report);
  // The target went away: what stopped the pass (and how much never started) comes first.
  if (report.target_down() && report.error)
    return {1,
            "not converged: " + report.error->message +
                (n ? " (" + std::to_string(n) + " failed)" : std::string()),
            "not-converged"};
  if (!report.observed || n == 0)
    return {1, "not converged: " + (first.empty() ? std::string("the pass failed") : first),
            "not-converged"};
  return {1, "not converged: " + std::to_string(n) + " failed: " + first, "not-converged"};
}

int plan_exit_code(const Report& report) { return plan_verdict(report).exit_code; }

int apply_exit_code(const Report& report) { return apply_verdict(report).exit_code; }

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

// What the pass covered: {"whole": true} (with "targetedDeclined" when a targeted pass was
// offered and why it was not taken), or the targeted projects and the base they changed from.
nlohmann::json scope_json(const Report& report) {
  const TargetedReport& t = report.targeted;
  if (!t.used) {
    nlohmann::json j{{"whole", true}};
    if (t.asked) j["targetedDeclined"] = t.whole_because;
    return j;
  }
  return {
      {"whole", false},
      {"projects", nlohmann::json(std::vector<std::string>(t.projects.begin(), t.projects.end()))},
      {"changedSince", t.base}};
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
          {"scope", scope_json(report)},
          {"plan", nlohmann::json::parse(dump_json(plan_json(report, 200)))}};
}

nlohmann::json objects_json(const Report& report) {
  nlohmann::json objects = nlohmann::json::array();
  for (const auto& o : report.applied.objects) {
    nlohmann::json j{{"key", o.key}, {"state", std::string(to_string(o.state))}};
    if (!o.detail.empty()) j["error"] = o.detail;
    objects.push_back(std::move(j));
  }
  for (const auto& u : report.plan.unmanaged)
    objects.push_back({{"key", u}, {"state", "unmanaged"}});
  return objects;
}

nlohmann::json drift_json(const Report& report) {
  nlohmann::json drift = nlohmann::json::array();
  for (const auto& d : report.plan.drift) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : d.changes)
      changes.push_back(nlohmann::json::parse(dump_json(reconcile::change_json(c))));
    drift.push_back(
        {{"key", d.key}, {"detail", d.detail}, {"reverted", d.healed}, {"changes", changes}});
  }
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

ObjectCounts object_counts(const Report& report, const std::map<std::string, size_t>& managed) {
  ObjectCounts c;
  // Projects and override rows (generic objects have no counts of their own here yet).
  auto kind_of = [](const std::string& key) { return key.substr(0, key.find('/')); };
  auto count = [&](const char* kind) {
    auto it = managed.find(kind);
    return it == managed.end() ? 0.0 : static_cast<double>(it->second);
  };
  c.managed_projects = count("project");
  c.managed_overrides = count("override");
  for (const auto& u : report.plan.unmanaged)
    if (kind_of(u) == "project" || kind_of(u) == "override")
      (kind_of(u) == "project" ? c.unmanaged_projects : c.unmanaged_overrides) += 1;
  for (const auto& d : report.plan.drift)
    if (d.kind != reconcile::ObjectKind::object)
      (d.kind == reconcile::ObjectKind::project ? c.drifted_projects : c.drifted_overrides) += 1;
  return c;
}

std::map<std::string, double> registrations_by_state(const Report& report) {
  std::map<std::string, double> by_state;
  for (const char* st :
       {"registered", "in-sync", "activated", "removed", "orphaned", "failed", "conflict"})
    by_state[st] = 0;
  for (const auto& o : report.registrations.items)
    by_state[std::string(registration::to_string(o.state))] += 1;
  return by_state;
}

nlohmann::ordered_json history_json(const std::vector<ledger::HistoryEntry>& entries) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& e : entries) {
    nlohmann::ordered_json j;
    j["id"] = e.id;
    j["time"] = text::rfc3339_utc_if_known(e.started_at);
    j["revision"] = e.revision;
    j["subject"] = e.subject;
    j["author"] = e.author;
    j["committedAt"] = text::rfc3339_utc_if_known(e.committed_at);
    j["trigger"] = e.trigger;
    j["outcome"] = e.outcome;
    j["detail"] = e.detail;
    j["noopPassesAfter"] = e.noops;
    j["steps"] = nlohmann::ordered_json::array();
    for (const auto& s : e.step_list) {
      nlohmann::ordered_json st{
          {"action", s.action}, {"key", s.key}, {"outcome", s.outcome}, {"message", s.message}};
      st["changes"] = s.changes.empty() ? nlohmann::ordered_json::array()
                                        : nlohmann::ordered_json::parse(s.changes, nullptr, false);
      j["steps"].push_back(std::move(st));
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::string history_text(const std::vector<ledger::HistoryEntry>& entries) {
  if (entries.empty()) return "no history\n";
  std::string out;
  for (const auto& e : entries) {
    // A commit id is shown short; a directory revision ("dir:/path") whole.
    const bool commit = e.revision.size() == 40 &&
                        e.revision.find_first_not_of("0123456789abcdef") == std::string::npos;
    out += text::rfc3339_utc_if_known(e.started_at) + "  " + e.outcome + "  " +
           (commit ? e.revision.substr(0, 12) : scan::printable(e.revision, 200));
    if (!e.subject.empty()) out += " \"" + scan::printable(e.subject, 120) + "\"";
    if (!e.author.empty()) out += " by " + scan::printable(e.author, 120);
    if (!e.trigger.empty()) out += " (" + scan::printable(e.trigger, 60) + ")";
    out += "\n";
    if (!e.detail.empty()) out += "  " + scan::printable(e.detail, 1024) + "\n";
    for (const auto& s : e.step_list) {
      // A registration's message is its describe() line, which starts with the key: said once.
      std::string_view message = s.message;
      if (message.rfind(s.key + ": ", 0) == 0) message.remove_prefix(s.key.size() + 2);
      out += scan::printable("  " + s.action + " " + s.key + (s.outcome == "ok" ? "" : " FAILED") +
                                 ": " + std::string(message),
                             1024) +
             "\n";
      if (s.changes.empty()) continue;
      auto changes = nlohmann::json::parse(s.changes, nullptr, false);
      if (!changes.is_array()) continue;
      for (const auto& c : changes)
        out += "      " + reconcile::change_line(reconcile::change_from_json(c)) + "\n";
    }
    if (e.noops > 0) out += "  then " + std::to_string(e.noops) + " pass(es) with nothing to do\n";
  }
  return out;
}

Result<ledger::HistoryQuery> history_query(const std::map<std::string, std::string>& params) {
  ledger::HistoryQuery q;
  if (auto it = params.find("limit"); it != params.end()) {
    int n = 0;
    const auto& v = it->second;
    if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos ||
        (n = std::stoi(v)) < 1 || n > 1000)
      return make_error(ErrorCode::invalid_input, "limit: expected a number from 1 to 1000, got '" +
                                                      scan::printable(v) + "'");
    q.limit = n;
  }
  if (auto it = params.find("object"); it != params.end()) q.object = it->second;
  if (auto it = params.find("project"); it != params.end()) q.project = it->second;
  return q;
}

Result<std::string> history_body(const ledger::Ledger& ledger,
                                 const std::map<std::string, std::string>& params) {
  auto query = history_query(params);
  if (!query) return query.error();
  auto entries = ledger.history(*query);
  if (!entries) return entries.error();
  return dump_json(history_json(*entries));
}

metrics::ReconcileResult reconcile_result(const Report& report) {
  switch (report.outcome) {
    case Outcome::refused:
      return metrics::ReconcileResult::refused;
    case Outcome::success:
      return metrics::ReconcileResult::success;
    case Outcome::failed:
      break;
  }
  // The quirk (see the header): the overrides converged, a registration failed.
  return report.applied.ok() ? metrics::ReconcileResult::success : metrics::ReconcileResult::failed;
}

namespace {
std::string drift_line(const reconcile::DriftItem& d) {
  std::string line = d.key + ": " + d.detail;
  for (const auto& c : d.changes) line += "; " + reconcile::change_line(c);
  return line;
}
}  // namespace

std::vector<std::string> drift_lines(const Report& report) {
  std::vector<std::string> out;
  for (const auto& d : report.plan.drift) out.push_back(drift_line(d));
  return out;
}

DriftNotice drift_notice(const Report& report, const std::set<std::string>& known, bool self_heal) {
  const bool suspended = report.mode == Mode::plan;
  DriftNotice n;
  for (const auto& d : report.plan.drift) {
    n.drifted.insert(d.key);
    if (known.count(d.key)) continue;
    n.lines.push_back(drift_line(d));
    if (!d.healed || suspended) n.left_in_place.push_back(n.lines.back());
  }
  if (!n.lines.empty())
    n.summary = std::to_string(n.lines.size()) + " object(s) changed outside Git" +
                (suspended   ? " (suspended, left in place)"
                 : self_heal ? " (reverted)"
                             : " (self-heal off)");
  return n;
}

bool refusal_is_news(const Report& report, std::string& notified) {
  if (report.outcome == Outcome::refused) {
    const bool news = report.revision != notified;
    notified = report.revision;
    return news;
  }
  if (report.outcome == Outcome::success || report.revision != notified) notified.clear();
  return false;
}

std::vector<std::string> refusal_lines(const Report& report) {
  std::vector<std::string> out;
  if (report.outcome != Outcome::refused) return out;
  for (const auto& k : report.guard_input.kinds) {
    if (k.managed == 0 && k.destroyed == 0) continue;
    const char* done = k.name == "projects"       ? "archived"
                       : k.name == "overrides"    ? "deleted"
                       : k.name == "launch plans" ? "deactivated"
                                                  : "removed";
    out.push_back(k.name + ": " + std::to_string(k.destroyed) + " of " + std::to_string(k.managed) +
                  " managed would be " + done + ", " + std::to_string(k.desired) + " declared");
  }
  return out;
}

}  // namespace flytecd::pass
