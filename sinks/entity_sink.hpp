#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"

namespace flyteidl::admin {
class TaskCreateRequest;
class WorkflowCreateRequest;
class LaunchPlanCreateRequest;
}  // namespace flyteidl::admin
namespace flyteidl::core {
class Identifier;
class TypedInterface;
}  // namespace flyteidl::core
namespace flytecd::sinks::compiler {
struct LaunchPlanInterface;
}  // namespace flytecd::sinks::compiler

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
  // ListLaunchPlans of (project, domain) filtered to `versions` (every state): for each version,
  // the names of the launch plans registered at it (a version with none is absent). Observation
  // checks the registrations the ledger calls registered against it, so "in sync" means
  // FlyteAdmin has them. One filter for many versions (`value_in`), so a scope's check costs
  // calls per page of launch plans, not per registration. Versions are URL-safe (documents are
  // validated so), which FlyteAdmin's filter syntax needs. Read-only.
  using VersionedLaunchPlans = std::map<std::string, std::set<std::string>>;
  virtual Result<VersionedLaunchPlans> launch_plans_at(
      const std::string& project, const std::string& domain,
      const std::vector<std::string>& versions) = 0;
  // UpdateLaunchPlan(ACTIVE | INACTIVE). Activating deactivates the name's other version.
  virtual Status set_launch_plan_state(const flyteidl::core::Identifier& id, bool active) = 0;
  // GetTask / GetLaunchPlan for the interface of an entity a package references but does not
  // hold (FlyteAdmin's CreateWorkflow compiles against the ones in its database): the task's
  // interface, or the launch plan's expected inputs and outputs, into `out`; false when it is
  // not registered (NOT_FOUND). Read-only. A sink whose looks_up_entities() is false (this
  // default) cannot: such references stay unchecked, a warning, as offline.
  virtual bool looks_up_entities() const { return false; }
  virtual Result<bool> task_interface(const flyteidl::core::Identifier& id,
                                      flyteidl::core::TypedInterface& out) {
    (void)id;
    (void)out;
    return make_error(ErrorCode::internal, "this target cannot look up registered tasks");
  }
  virtual Result<bool> launch_plan_interface(const flyteidl::core::Identifier& id,
                                             compiler::LaunchPlanInterface& out) {
    (void)id;
    (void)out;
    return make_error(ErrorCode::internal, "this target cannot look up registered launch plans");
  }
  // DataProxyService.CreateUploadLocation for a fast-registration source archive.
  virtual Result<UploadLocation> create_upload_location(const std::string& project,
                                                        const std::string& domain,
                                                        const std::string& filename,
                                                        const std::string& content_md5) = 0;
};

}  // namespace flytecd::sinks
