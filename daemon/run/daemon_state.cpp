#include "daemon/run/daemon_state.hpp"

#include <ctime>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/text.hpp"
#include "daemon/metrics/flytecd_metrics.hpp"

namespace flytecd::run {

namespace {

nlohmann::json last_pass_json(const LastPass& p, const pass::Report* report) {
  if (!p.abandoned.empty() || !report)
    return {{"reason", p.reason},   {"revision", p.revision},  {"outcome", "failed"},
            {"error", p.abandoned}, {"errorCode", "internal"}, {"time", p.time},
            {"request", p.request}};
  auto last = pass::last_sync_json(*report, p.reason);
  last["time"] = p.time;
  last["request"] = p.request;
  last["mode"] = report->mode == pass::Mode::plan ? "plan" : "execute";
  return last;
}

// Each object's revision and time of its last write, from the ledger (absent: not managed).
void add_applied(nlohmann::json& objects, const DaemonState& s) {
  if (!s.applied) return;
  for (auto& o : objects) {
    if (!o.is_object() || !o.contains("key") || !o["key"].is_string()) continue;
    auto it = s.applied->find(o["key"].get<std::string>());
    if (it == s.applied->end()) continue;
    o["revision"] = it->second.revision;
    o["lastChange"] = text::rfc3339_utc_if_known(it->second.at);
  }
}

}  // namespace

OverviewCounts overview_counts(const DaemonState& s) {
  OverviewCounts c;
  const auto n = [](double v) { return static_cast<size_t>(v); };
  c.managed = n(s.counts.managed_projects + s.counts.managed_overrides);
  c.drifted = n(s.counts.drifted_projects + s.counts.drifted_overrides);
  c.unmanaged = n(s.counts.unmanaged_projects + s.counts.unmanaged_overrides);
  if (!s.report) return c;
  const pass::Report& r = *s.report;
  if (r.applied.objects.empty()) {
    c.in_sync = r.plan.in_sync;
  } else {
    for (const auto& o : r.applied.objects) c.in_sync += o.state == pass::ObjectState::synced;
  }
  c.failed_registrations = r.registrations.failed();
  return c;
}

nlohmann::json status_json(const DaemonState& s, const nlohmann::json& leader) {
  nlohmann::json j = nlohmann::json::object();
  j["leader"] = leader;
  j["suspended"] = s.suspension ? to_json(*s.suspension) : nlohmann::json();
  j["suspendedProjects"] = to_json(s.suspended_projects);
  j["syncServed"] = s.sync_served;
  j["version"] = FLYTECD_VERSION;
  j["source"] = s.source;
  j["target"] = s.target;
  j["targetIsEmulator"] = s.target_is_emulator;
  j["httpPort"] = s.http_port;
  if (!s.revision.empty()) {
    j["revision"] = s.revision;
    j["subject"] = s.subject;
    j["author"] = s.author;
    j["committedAt"] = text::rfc3339_utc_if_known(s.committed_at);
  }
  const auto c = overview_counts(s);
  j["counts"] = {{"managed", c.managed},
                 {"inSync", c.in_sync},
                 {"drifted", c.drifted},
                 {"unmanaged", c.unmanaged},
                 {"failedRegistrations", c.failed_registrations}};
  if (s.rejected) {
    nlohmann::json errors = nlohmann::json::array();
    for (const auto& e : s.rejected->errors) errors.push_back(e);
    j["rejectedRevision"] = {
        {"revision", s.rejected->revision}, {"time", s.rejected->time}, {"errors", errors}};
  }
  if (!s.source_error.empty()) j["sourceError"] = s.source_error;
  if (!s.last_error.empty()) j["lastError"] = s.last_error;
  if (s.reload) {
    nlohmann::json r{{"time", s.reload->time}, {"ok", s.reload->ok()}};
    if (!s.reload->ok()) {
      r["error"] = s.reload->error;
      j["lastReloadError"] = s.reload->error;  // while the file on disk is not the one in force
    }
    j["reload"] = std::move(r);
  }
  if (s.last_pass) j["lastSync"] = last_pass_json(*s.last_pass, s.last.get());
  if (s.report) {
    const pass::Report& r = *s.report;
    j["objects"] = pass::objects_json(r);
    j["drift"] = pass::drift_json(r);
    // A plan's "healed" is what executing it would do; suspended, nothing was reverted.
    if (r.mode == pass::Mode::plan)
      for (auto& d : j["drift"]) {
        d["revertOnResume"] = d.value("reverted", false);
        d["reverted"] = false;
      }
    j["registrations"] = pass::registrations_json(r);
    add_applied(j["objects"], s);
    add_applied(j["registrations"], s);
  }
  if (s.ownership) {
    auto own = pass::ownership_json(s.ownership->ownership, s.ownership->record);
    if (!s.ownership->time.empty()) own["time"] = s.ownership->time;
    j["ownership"] = std::move(own);
  }
  return j;
}

bool ready(const DaemonState& s) { return s.first_success && s.target_up; }

void show(const DaemonState& s, metrics::FlytecdMetrics& m) {
  m.set_suspended(s.suspension.has_value());
  std::vector<std::string> projects;
  for (const auto& [p, sp] : s.suspended_projects) projects.push_back(p);
  m.set_suspended_projects(projects);
  m.set_target(s.target_up, s.target_is_emulator);
  if (!s.revision.empty()) m.set_revision(s.revision);
  m.set_objects("project", "managed", s.counts.managed_projects);
  m.set_objects("override", "managed", s.counts.managed_overrides);
  m.set_objects("project", "unmanaged", s.counts.unmanaged_projects);
  m.set_objects("override", "unmanaged", s.counts.unmanaged_overrides);
  m.set_objects("project", "drifted", s.counts.drifted_projects);
  m.set_objects("override", "drifted", s.counts.drifted_overrides);
}

bool fail(DaemonState& s, const std::string& what) {
  s.last_error = what;
  const bool transition = !s.failing;
  s.failing = true;
  return transition;
}

bool after_pass(DaemonState& s, std::shared_ptr<const pass::Report> report,
                const std::string& reason, const std::string& time, const std::string& record,
                const pass::ObjectCounts& counts, uint64_t request,
                std::shared_ptr<const pass::Report> view) {
  const pass::Report& r = *report;
  const bool suspended = r.mode == pass::Mode::plan;
  s.last_pass = LastPass{reason, time, r.revision, "", request};
  s.counts = counts;
  // Ownership: a rebuild stays visible until another one; the ledger replaces anything else.
  if (r.ownership.state != pass::Ownership::State::ledger || !s.ownership ||
      s.ownership->ownership.state != pass::Ownership::State::rebuilt)
    s.ownership =
        OwnershipShown{r.ownership, record,
                       r.ownership.state != pass::Ownership::State::ledger ? time : std::string()};
  const auto readiness = pass::readiness(r);
  s.target_up = readiness.target_up;
  // Suspended, a pass that observed and planned keeps the replica ready: a restart during
  // maintenance must not leave it unready until resumed.
  const bool overrides_ok = r.executed() && r.applied.ok();
  if (overrides_ok || (suspended && r.outcome == pass::Outcome::success)) {
    s.first_success = true;
    s.not_ready.clear();
  } else {
    s.not_ready = readiness.reason;
  }
  if (!s.target_up) s.not_ready = readiness.reason;
  bool recovered = false;
  if (r.outcome == pass::Outcome::success && s.source_error.empty()) {
    recovered = s.failing;
    s.failing = false;
    s.last_error.clear();
  }
  s.report = view ? std::move(view) : report;
  s.last = std::move(report);
  return recovered;
}

std::shared_ptr<const DaemonState> StateCell::get() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_state;
}

std::shared_ptr<const DaemonState> StateCell::update(
    const std::function<void(DaemonState&)>& change) {
  std::lock_guard<std::mutex> lock(m_mu);
  auto next = std::make_shared<DaemonState>(*m_state);
  change(*next);
  m_state = std::move(next);
  ++m_version;
  if (m_on_change) m_on_change(*m_state);
  return m_state;
}

std::shared_ptr<const std::string> StateCell::status_text(const nlohmann::json& leader) {
  std::shared_ptr<const DaemonState> state;
  uint64_t version = 0;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    if (m_rendered && m_rendered_version == m_version && m_rendered_leader == leader)
      return m_rendered;
    state = m_state;
    version = m_version;
  }
  // Rendered outside the lock: a large report does not hold up the reconcile thread's updates.
  auto text = std::make_shared<const std::string>(dump_json(status_json(*state, leader)));
  std::lock_guard<std::mutex> lock(m_mu);
  if (!m_rendered || m_rendered_version == UINT64_MAX || version >= m_rendered_version) {
    m_rendered = text;
    m_rendered_version = version;
    m_rendered_leader = leader;
    ++m_renders;
  }
  return text;
}

uint64_t StateCell::renders() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_renders;
}

Rejection rejection_of(const std::string& revision, const model::Diagnostics& diagnostics,
                       std::string time) {
  Rejection rejection{revision, std::move(time), {}};
  for (const auto& d : diagnostics)
    if (d.severity == model::Severity::error && rejection.errors.size() < 100)
      rejection.errors.push_back(model::format(d));
  return rejection;
}

}  // namespace flytecd::run
