#pragma once

// The daemon's suspension (POST /api/v1/suspend, /api/v1/resume): while suspended every pass
// runs in plan mode (sources polled, drift observed and reported, nothing written). Persisted in
// the state directory so that a restart stays suspended.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/common/result.hpp"

namespace flytecd::run {

struct Suspension {
  std::string since;   // RFC 3339
  std::string reason;  // as given ("" when none)
  std::string by;      // who asked (API client and remote address)
};

// {"since", "reason", "by"}.
nlohmann::json to_json(const Suspension& s);

// <state_dir>/suspended.json.
std::filesystem::path suspension_file(const std::filesystem::path& state_dir);

// Reads the file: nullopt when it does not exist (not suspended). Errors: invalid_input naming
// the file when it cannot be read or is not a suspension document (a corrupt file must not
// silently resume writing).
Result<std::optional<Suspension>> read_suspension(const std::filesystem::path& file);

// Replaces the file atomically (a temporary beside it, written, fsynced, renamed over it, and
// the directory fsynced); with nullopt removes it. Idempotent. Errors: unavailable naming the
// file.
Status write_suspension(const std::filesystem::path& file, const std::optional<Suspension>& s);

// Suspensions of single projects (`flytecd suspend --project P`), by project: their passes plan
// them and write nothing of theirs while other projects apply (pass/hold.hpp). Persisted beside
// the global suspension, in <state_dir>/suspended-projects.json.
using ProjectSuspensions = std::map<std::string, Suspension>;

// [{"project", "since", "reason", "by"}] in project order (the status document's
// `suspendedProjects`).
nlohmann::json to_json(const ProjectSuspensions& s);

// <state_dir>/suspended-projects.json.
std::filesystem::path project_suspension_file(const std::filesystem::path& state_dir);

// Reads the file: empty when it does not exist. Errors: invalid_input naming the file when it
// cannot be read or is not a list of project suspensions (a corrupt file must not silently
// resume writing to a suspended project).
Result<ProjectSuspensions> read_project_suspensions(const std::filesystem::path& file);

// Replaces the file atomically; an empty map removes it. Idempotent. Errors: unavailable.
Status write_project_suspensions(const std::filesystem::path& file, const ProjectSuspensions& s);

// `current` after a suspend (`on`) or resume of `project`. Suspending a suspended project keeps
// its since/by and takes `asked`'s reason when one is given; `asked` is the new suspension
// otherwise. Errors: invalid_input when `project` is not a Flyte project id ([A-Za-z0-9_-], at
// most 63 characters).
Result<ProjectSuspensions> change_project_suspension(ProjectSuspensions current, bool on,
                                                     const std::string& project,
                                                     const Suspension& asked);

}  // namespace flytecd::run
