#include "daemon/pass/ownership.hpp"

#include "daemon/common/digest.hpp"
#include "daemon/model/proto_yaml.hpp"

namespace flytecd::pass {
namespace {

bool same_value(const reconcile::OverrideState& a, const reconcile::OverrideState& b) {
  return model::canonical_bytes(a.value) == model::canonical_bytes(b.value);
}

}  // namespace

std::vector<ledger::Ledger::OwnedObject> owned_objects(const reconcile::State& converged,
                                                       const std::string& converged_revision,
                                                       const reconcile::State* in_flight,
                                                       const std::string& in_flight_revision,
                                                       const reconcile::State& live) {
  std::vector<ledger::Ledger::OwnedObject> out;
  auto own = [&](std::string key, const char* kind, std::string hash, const std::string& rev) {
    out.push_back({std::move(key), kind, std::move(hash), rev});
  };
  std::map<std::string, bool> done;
  // Projects.
  for (const auto& [id, want] : converged.projects) {
    const std::string key = reconcile::project_key(id);
    const reconcile::ProjectState* moved = nullptr;
    if (in_flight)
      if (auto f = in_flight->projects.find(id); f != in_flight->projects.end()) moved = &f->second;
    auto l = live.projects.find(id);
    if (moved && !(*moved == want) && l != live.projects.end() && l->second == *moved)
      own(key, "project", reconcile::hash_of(*moved), in_flight_revision);
    else
      own(key, "project", reconcile::hash_of(want), converged_revision);
    done[key] = true;
  }
  if (in_flight)
    for (const auto& [id, want] : in_flight->projects) {
      const std::string key = reconcile::project_key(id);
      if (done.count(key)) continue;
      auto l = live.projects.find(id);
      if (l != live.projects.end() && l->second == want)
        own(key, "project", reconcile::hash_of(want), in_flight_revision);
    }
  // Overrides.
  for (const auto& [key, want] : converged.overrides) {
    const reconcile::OverrideState* moved = nullptr;
    if (in_flight)
      if (auto f = in_flight->overrides.find(key); f != in_flight->overrides.end())
        moved = &f->second;
    auto l = live.overrides.find(key);
    if (moved && !same_value(*moved, want) && l != live.overrides.end() &&
        same_value(l->second, *moved))
      own(key, "override", reconcile::hash_of(*moved), in_flight_revision);
    else
      own(key, "override", reconcile::hash_of(want), converged_revision);
    done[key] = true;
  }
  if (in_flight)
    for (const auto& [key, want] : in_flight->overrides) {
      if (done.count(key)) continue;
      auto l = live.overrides.find(key);
      if (l != live.overrides.end() && same_value(l->second, want))
        own(key, "override", reconcile::hash_of(want), in_flight_revision);
    }
  return out;
}

std::string_view to_string(Ownership::State s) {
  switch (s) {
    case Ownership::State::ledger:
      return "ledger";
    case Ownership::State::rebuilt:
      return "rebuilt";
    case Ownership::State::none:
      return "none";
    case Ownership::State::unavailable:
      return "unavailable";
  }
  return "?";
}

nlohmann::ordered_json ownership_json(const Ownership& o, const std::string& record) {
  nlohmann::ordered_json j;
  j["state"] = std::string(to_string(o.state));
  j["record"] = record;
  if (o.state == Ownership::State::rebuilt) {
    j["fromRevision"] = o.from_revision;
    if (!o.in_flight.empty()) j["inFlight"] = o.in_flight;
    j["objects"] = o.objects;
    j["registrations"] = o.registrations;
    j["skipped"] = o.skipped;
  }
  if (!o.message.empty()) j["message"] = o.message;
  return j;
}

bool needs_rebuild(const AppliedRecord& record, const std::string& ledger_converged,
                   const std::string& config_fingerprint) {
  if (record.converged.empty()) return false;
  if (!record.config_fingerprint.empty() && record.config_fingerprint != config_fingerprint)
    return false;
  return record.converged != ledger_converged;
}

std::string ownership_fingerprint(const std::string& target, const std::string& repository,
                                  const std::vector<std::string>& domains) {
  std::string text = "target=" + target + "\nrepository=" + repository + "\ndomains=";
  for (const auto& d : domains) text += d + ",";
  return "sha256:" + digest::sha256_hex(text);
}

}  // namespace flytecd::pass
