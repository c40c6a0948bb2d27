#include "daemon/registration/registrar.hpp"

#include <algorithm>
#include <string_view>

#include "daemon/common/scan.hpp"
#include "sources/oci/digest.hpp"

// Reports: what one registration's outcome says (one line for humans, JSON), and the dry-run
// view of a plan. Pure.

namespace flytecd::registration {

bool RegistrationReport::has_changes() const {
  for (const auto& i : items)
    if (i.state != RegistrationState::in_sync) return true;
  return false;
}

std::string_view to_string(RegistrationState s) {
  switch (s) {
    case RegistrationState::in_sync:
      return "in-sync";
    case RegistrationState::registered:
      return "registered";
    case RegistrationState::activated:
      return "activated";
    case RegistrationState::register_:
      return "register";
    case RegistrationState::activate:
      return "activate";
    case RegistrationState::removed:
      return "removed";
    case RegistrationState::orphaned:
      return "orphaned";
    case RegistrationState::failed:
      return "failed";
    case RegistrationState::conflict:
      return "conflict";
  }
  return "?";
}

std::string describe(const RegistrationOutcome& o) {
  std::string s = o.key + ": ";
  auto counts = [&] {
    return std::to_string(o.tasks) + " tasks, " + std::to_string(o.workflows) + " workflows, " +
           std::to_string(o.launch_plans) + " launch plans";
  };
  auto names = [](const std::vector<std::string>& v) {
    std::string out =
        std::to_string(v.size()) + (v.size() == 1 ? " launch plan (" : " launch plans (");
    for (size_t i = 0; i < v.size() && i < 3; ++i) out += (i ? ", " : "") + v[i];
    return out + (v.size() > 3 ? ", …)" : ")");
  };
  std::string pkg = o.package;
  if (auto pin = pkg.find("#sha256="); pin != std::string::npos) pkg.resize(pin);
  if (!o.digest.empty()) pkg += " (" + sources::oci::short_digest(o.digest) + ")";
  if (o.state == RegistrationState::failed || o.state == RegistrationState::conflict)
    return s + (o.state == RegistrationState::failed ? "FAILED: " : "CONFLICT: ") +
           (o.source.empty() ? "" : "(" + o.source + ") ") + o.message;
  if (o.state == RegistrationState::orphaned) return s + "orphaned: " + o.message;
  if (o.state == RegistrationState::removed)
    return s + "removed from Git; deactivated " +
           (o.deactivated.empty() ? "nothing (no launch plan was ACTIVE at " + o.version + ")"
                                  : names(o.deactivated));
  const std::string was = o.previous_version.empty() ? ""
                          : o.rollback
                              ? " (rollback " + o.previous_version + " → " + o.version + ")"
                              : " (was " + o.previous_version +
                                    (o.previous_digest.empty() || o.previous_digest == o.digest
                                         ? ""
                                         : " " + sources::oci::short_digest(o.previous_digest)) +
                                    ")";
  if (o.state == RegistrationState::register_)
    s += "would register " + o.version + was + " from " + pkg + ": " + counts() +
         (o.message.empty() ? "" : " (" + o.message + ")");
  else if (o.state == RegistrationState::registered)
    s += "registered " + o.version + was + " from " + pkg + ": " + counts() + " (" +
         std::to_string(o.created) + " created, " + std::to_string(o.existed) + " already existed)";
  else
    s += (o.state == RegistrationState::in_sync ? "in sync at " : "") + o.version + " from " + pkg +
         ": " + counts();
  if (!o.signed_by.empty()) s += "; " + o.signed_by;
  if (o.signer_changed)
    s += "; SIGNER CHANGED (the recorded version was " +
         (o.previous_signed_by.empty() ? std::string("unsigned") : o.previous_signed_by) + ")";
  if (!o.activated.empty())
    s += (o.state == RegistrationState::register_ || o.state == RegistrationState::activate
              ? "; would activate "
              : "; activated ") +
         names(o.activated);
  if (!o.deactivated.empty())
    s += (o.state == RegistrationState::register_ || o.state == RegistrationState::activate
              ? "; would deactivate "
              : "; deactivated ") +
         names(o.deactivated);
  if (o.activated.empty() && o.state == RegistrationState::in_sync)
    s += "; " + std::to_string(o.active.size()) + " launch plans ACTIVE";
  // Names and messages come from documents and packages: escape them, one line per item.
  s = scan::printable(s, 4096);
  for (const auto& d : o.drift) s += "\n  ! drift: " + scan::printable(d, 1024);
  return s;
}

nlohmann::json to_json(const RegistrationOutcome& o) {
  return nlohmann::json{
      {"key", o.key},
      {"name", o.name},
      {"kind", o.source_kind},
      {"source", o.source},
      {"project", o.project},
      {"domain", o.domain},
      {"version", o.version},
      {"package", o.package},
      {"digest", o.digest},
      {"manifestDigest", o.manifest_digest},
      {"signature",
       o.signed_by.empty()
           ? nlohmann::json(nullptr)
           : nlohmann::json{{"by", o.signed_by},
                            {"identity", o.signer_identity},
                            {"issuer", o.signer_issuer.empty() ? nlohmann::json(nullptr)
                                                               : nlohmann::json(o.signer_issuer)},
                            {"digest", o.manifest_digest},
                            {"signedAt", o.signed_at > 0 ? nlohmann::json(o.signed_at)
                                                         : nlohmann::json(nullptr)},
                            {"changed", o.signer_changed},
                            {"previous", o.previous_signed_by.empty()
                                             ? nlohmann::json(nullptr)
                                             : nlohmann::json(o.previous_signed_by)}}},
      {"previous", o.previous_version.empty() ? nlohmann::json(nullptr)
                                              : nlohmann::json{{"version", o.previous_version},
                                                               {"digest", o.previous_digest}}},
      {"rollback", o.rollback ? nlohmann::json{{"from", o.previous_version}, {"to", o.version}}
                              : nlohmann::json(nullptr)},
      {"activate", std::string(model::to_string(o.activate))},
      {"counts", {{"tasks", o.tasks}, {"workflows", o.workflows}, {"launchPlans", o.launch_plans}}},
      {"created", o.created},
      {"existed", o.existed},
      {"activated", o.activated},
      {"deactivated", o.deactivated},
      {"active", o.active},
      {"drift", o.drift},
      {"state", std::string(to_string(o.state))},
      {"message", o.message}};
}

namespace {

size_t count_prefix(const std::vector<std::string>& ids, std::string_view prefix) {
  return static_cast<size_t>(std::count_if(ids.begin(), ids.end(), [&](const std::string& s) {
    return s.compare(0, prefix.size(), prefix) == 0;
  }));
}

}  // namespace

RegistrationOutcome outcome_of(const PlanItem& it) {
  RegistrationOutcome o;
  o.key = it.key;
  if (it.registration) {
    const model::Registration& r = *it.registration;
    o.name = r.name;
    o.source_kind = r.source_kind;
    o.project = r.project;
    o.domain = r.domain;
    o.version = r.version;
    o.package = r.package;
    o.activate = r.activate;
    o.source = r.where.file.empty() ? "" : r.where.file + ":" + std::to_string(r.where.line);
  } else if (it.previous) {
    o.name = it.key.substr(it.key.rfind('/') + 1);
    o.project = it.previous->project;
    o.domain = it.previous->domain;
    o.version = it.previous->version;
    o.package = it.previous->package;
  }
  if (!it.package.reference.empty()) o.package = it.package.reference;
  o.digest = it.package.digest;
  o.manifest_digest = it.package.manifest_digest;
  if (const auto& s = it.package.signer) {
    o.signed_by = s->describe();
    o.signer_identity = s->identity;
    o.signer_issuer = s->issuer;
    o.signed_at = s->signed_at;
    // Another signer than the recorded version's is called out (a first signature is not).
    if (it.previous && !it.previous->signer.empty()) {
      const std::string before = ledger::signer_by(it.previous->signer);
      if (before != o.signed_by) {
        o.signer_changed = true;
        o.previous_signed_by = before;
      }
    }
  }
  if (it.registration && it.previous &&
      (it.previous->version != it.registration->version || it.previous->digest != o.digest)) {
    o.previous_version = it.previous->version;
    o.previous_digest = it.previous->digest;
    o.rollback = it.rollback && it.previous->version != it.registration->version;
  }
  if (it.registers()) {
    o.tasks = it.package.tasks;
    o.workflows = it.package.workflows;
    o.launch_plans = it.package.launch_plans;
  } else if (it.previous && (it.state != ItemState::failed || !it.registration)) {
    o.tasks = count_prefix(it.previous->entities, "TASK ");
    o.workflows = count_prefix(it.previous->entities, "WORKFLOW ");
    o.launch_plans = count_prefix(it.previous->entities, "LAUNCH_PLAN ");
  }
  o.activated = it.names(StepKind::activate);
  o.deactivated = it.names(StepKind::deactivate);
  o.active = it.active;
  o.drift = it.drift;
  o.message = it.message;
  // A registration the ledger recorded that FlyteAdmin lacks says so wherever it is shown.
  if (it.registers() && !it.steps.empty() &&
      it.steps.front().reason.rfind("missing in FlyteAdmin", 0) == 0)
    o.message = it.steps.front().reason;
  switch (it.state) {
    case ItemState::in_sync:
      o.state = RegistrationState::in_sync;
      break;
    case ItemState::register_:
      o.state = RegistrationState::register_;
      break;
    case ItemState::activate:
      o.state = RegistrationState::activate;
      break;
    case ItemState::remove:
      o.state = RegistrationState::removed;
      break;
    case ItemState::orphaned:
      o.state = RegistrationState::orphaned;
      break;
    case ItemState::failed:
      o.state = RegistrationState::failed;
      break;
  }
  return o;
}

RegistrationReport report_of(const RegistrationPlan& plan) {
  RegistrationReport report;
  for (const auto& it : plan.items) report.items.push_back(outcome_of(it));
  report.target_down = plan.target_down;
  return report;
}

}  // namespace flytecd::registration
