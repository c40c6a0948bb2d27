#pragma once

// Flyte 2 as a sink: projects through flyteidl2.project.ProjectService (listed, created,
// updated; a removed project is archived, as on FlyteAdmin), and Flyte 2's settings service
// (flyteidl2.settings.SettingsService) with one generic object per settings record
// ("settings/<org>/<domain>/<project>", sinks::ObjectValue of flyteidl2.settings.Settings). The
// service cannot list, so observe() reads exactly the keys the pass expects (Sink::expect). Every
// write is conditional: CreateSettings where the scope has no record, UpdateSettings with the
// version observed; a write the server refuses because the record changed (FailedPrecondition on a
// stale version, AlreadyExists, NotFound) is never retried as sent but fails as ErrorCode::stale,
// so the pass observes again and plans from what is there now (drift if Git did not change: healed
// with selfHeal, reported without). Each write is read back: a field the server does not keep (a
// server older than the IDL drops it, as protojson drops unknown fields) is reported once and
// left out of the comparison, instead of being drift on every pass.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "daemon/common/result.hpp"
#include "flyteidl2/project/project_service.pb.h"
#include "flyteidl2/settings/settings_definition.pb.h"
#include "sinks/flyteadmin/config.hpp"
#include "sinks/sink.hpp"

namespace flytecd::sinks::flyte2 {

// The SettingsKey of an object key "settings/<org>/<domain>/<project>"; nullopt for any other.
// Pure.
std::optional<flyteidl2::settings::SettingsKey> settings_key_of(const std::string& object_key);

// A record as compared: `scope_level` (filled by the server on reads, never stored) cleared
// everywhere. Pure.
void clear_scope_levels(google::protobuf::Message& settings);

// A project as Flyte 2 holds it, and back (archived: ARCHIVED or SYSTEM_ARCHIVED). Pure.
flyteidl2::project::Project render_project(const ProjectState& p);
ProjectState parse_project(const flyteidl2::project::Project& p);

class Flyte2Sink final : public Sink {
 public:
  // Connects to the endpoint of `cfg` (the `flyte2:` section, auth as `admin:`); no call is made.
  // Errors: invalid_input (no endpoint, an unreadable CA file, an unsupported authType).
  static Result<std::unique_ptr<Flyte2Sink>> connect(const flyteadmin::AdminConfig& cfg,
                                                     std::string label);
  ~Flyte2Sink() override;

  Capabilities capabilities() const override;
  void expect(const std::set<std::string>& object_keys) override;
  // Every project (ListProjects, active and archived, paged), and one GetSettingsForEdit per
  // expected key; a scope with no record (version 0) or an empty one (what removing leaves) is
  // absent.
  Result<State> observe() override;
  Status execute(const Step& step) override;
  std::string describe() const override;
  std::map<std::string, uint64_t> rpc_counts() const override;
  uint64_t written_version(const std::string& key) const override;
  // Settings fields (JSON paths) a write was read back without: the server's schema lacks them.
  // Each is logged once; a record that holds what flytecd wrote less these is not drift.
  std::set<std::string> unkept_fields() const;

  struct Impl;

 private:
  explicit Flyte2Sink(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace flytecd::sinks::flyte2
