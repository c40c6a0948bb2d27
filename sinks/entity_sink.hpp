#pragma once

#include <map>
#include <set>
#include <string>

#include "daemon/common/result.hpp"

namespace flyteidl::admin {
class TaskCreateRequest;
class WorkflowCreateRequest;
class LaunchPlanCreateRequest;
}  // namespace flyteidl::admin
namespace flyteidl::core {
class Identifier;
}  // namespace flyteidl::core

namespace flytecd::sinks {

// Outcome of a Create* RPC that did not fail: FlyteAdmin's ALREADY_EXISTS (identical structure,
// or a concurrent create) counts as success, as flytectl treats it.
enum class Created { created, already_exists };

struct UploadLocation {
  std::string signed_url;
  std::string native_url;
  std::map<std::string, std::string> headers;  // to send with the PUT
};

// Where workflow registrations are written: FlyteAdmin's task / workflow / launch-plan RPCs and
// DataProxy uploads. Thread-safe. A different entity under an existing version comes back as
// invalid_input whose message carries FlyteAdmin's "different structure" diff (never retried).
class EntitySink {
 public:
  virtual ~EntitySink() = default;
  virtual Result<Created> create_task(const flyteidl::admin::TaskCreateRequest& req) = 0;
  virtual Result<Created> create_workflow(const flyteidl::admin::WorkflowCreateRequest& req) = 0;
  virtual Result<Created> create_launch_plan(
      const flyteidl::admin::LaunchPlanCreateRequest& req) = 0;
  // Launch-plan name -> version for every ACTIVE launch plan of (project, domain).
  virtual Result<std::map<std::string, std::string>> active_launch_plans(
      const std::string& project, const std::string& domain) = 0;
  // GetLaunchPlan: whether launch_plan `id` (project, domain, name, version) is registered
  // (NOT_FOUND -> false). Used to rebuild ownership: launch plans are created last, so a package
  // whose launch plans all exist was registered whole.
  virtual Result<bool> launch_plan_exists(const flyteidl::core::Identifier& id) = 0;
  // ListLaunchPlans of (project, domain) filtered to `version` (every state): the names of the
  // launch plans registered at that version. Observation checks a registration the ledger calls
  // registered against it, so "in sync" means FlyteAdmin has it. Read-only.
  virtual Result<std::set<std::string>> launch_plans_at(const std::string& project,
                                                        const std::string& domain,
                                                        const std::string& version) = 0;
  // UpdateLaunchPlan(ACTIVE | INACTIVE). Activating deactivates the name's other version.
  virtual Status set_launch_plan_state(const flyteidl::core::Identifier& id, bool active) = 0;
  // DataProxyService.CreateUploadLocation for a fast-registration source archive.
  virtual Result<UploadLocation> create_upload_location(const std::string& project,
                                                        const std::string& domain,
                                                        const std::string& filename,
                                                        const std::string& content_md5) = 0;
};

}  // namespace flytecd::sinks
