#include "daemon/run/targeting.hpp"

namespace flytecd::run {

std::string Targeting::on_revision(const wiring::LoadedRevision* before,
                                   const wiring::LoadedRevision& after, const config::Config& cfg) {
  m_change.reset();
  if (!before) return "no revision was in force";
  bool repository_keys = false;
  for (const auto& v : cfg.packages.verify) repository_keys |= !v.key.empty();
  auto change =
      pass::changed_projects(before->docs, before->files, after.docs, after.files, repository_keys);
  if (change.everything) return change.why;
  m_change = pass::Options::Targeted{before->revision, std::move(change.projects)};
  return "";
}

std::optional<pass::Options::Targeted> Targeting::offer(const std::string& reason, bool suspended,
                                                        double drift_scan_seconds,
                                                        Clock::time_point now) {
  auto change = std::move(m_change);
  m_change.reset();
  if (!change || suspended || !m_last_whole) return std::nullopt;
  if (reason != "interval" && reason.rfind("webhook", 0) != 0) return std::nullopt;
  // 0.85: an interval tick comes after 0.9-1.1 intervals (jitter), and is then the scan.
  const auto due = std::chrono::duration<double>(drift_scan_seconds * 0.85);
  if (now - *m_last_whole >= due) return std::nullopt;
  return change;
}

void Targeting::after(const pass::Report& report, Clock::time_point started) {
  if (!report.targeted.used && report.observed) m_last_whole = started;
}

AppliedMap applied_after(const pass::Report& report, const AppliedMap* before, AppliedMap part) {
  if (!report.targeted.used || !before) return part;
  auto next = *before;
  const pass::PassScope scope{"", "", report.targeted.projects};
  std::erase_if(next, [&](const auto& kv) { return pass::key_in_scope(scope, kv.first); });
  next.merge(part);
  return next;
}

std::set<std::string> known_drift_after(const pass::Report& report, std::set<std::string> drifted,
                                        const std::set<std::string>& known) {
  if (!report.targeted.used) return drifted;
  const pass::PassScope scope{"", "", report.targeted.projects};
  for (const auto& key : known)
    if (!pass::key_in_scope(scope, key)) drifted.insert(key);
  return drifted;
}

}  // namespace flytecd::run
