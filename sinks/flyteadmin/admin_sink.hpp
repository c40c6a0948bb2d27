#pragma once

#include <map>
#include <memory>
#include <string>

#include "sinks/entity_sink.hpp"
#include "sinks/flyteadmin/config.hpp"
#include "sinks/sink.hpp"

namespace flyteidl::admin {
class Project;
class MatchableAttributesConfiguration;
}  // namespace flyteidl::admin

namespace flytecd::sinks::flyteadmin {

// The FlyteAdmin sink: AdminService over gRPC. Every RPC has a deadline; UNAVAILABLE,
// DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED are retried with exponential backoff and full
// jitter (others are not); at most `max_in_flight` RPCs run at once; with authType ClientSecret
// an OAuth2 token travels in the metadata key FlyteAdmin asks for, and an UNAUTHENTICATED
// answer refreshes it once.
class AdminSink : public Sink, public EntitySink {
 public:
  // Creates the channel (no RPC is sent). `label` names the instance in logs and describe().
  static Result<std::unique_ptr<AdminSink>> connect(const AdminConfig& cfg,
                                                    const std::string& label);
  ~AdminSink() override;

  // Projects, project/domain/workflow overrides and registrations (FlyteAdmin keeps global and
  // domain-wide defaults in its own configuration, not in rows).
  Capabilities capabilities() const override;
  Result<sinks::State> observe() override;
  // The scope's projects (archived or not; GetProject each, or ListProjects on a FlyteAdmin
  // without GetProject) and, of their override rows, exactly those of `scope.override_keys` that
  // exist, each as observe() returns it: read with the exact Get*Attributes, except project-level
  // WORKFLOW_EXECUTION_CONFIG rows and rows below project level of an archived project, which
  // FlyteAdmin's Get does not answer as stored, and come from one ListMatchableAttributes per
  // such type. Everything (observe()) when the scope is. Errors as observe().
  Result<sinks::State> observe_scoped(const ObserveScope& scope) override;
  Status execute(const sinks::Step& step) override;
  // maxInFlight: project and override steps also run through gRPC's callback client (their RPCs
  // one after another, retries waiting on a timer), each holding one of the maxInFlight slots
  // until it ends, so a pass keeps that many in flight without a thread each.
  int async_window() const override;
  void execute_async(const sinks::Step& step, std::function<void(Status)> done) override;
  std::string describe() const override;
  EntitySink* entities() override { return this; }

  Result<Created> create_task(const flyteidl::admin::TaskCreateRequest& req) override;
  Result<Created> create_workflow(const flyteidl::admin::WorkflowCreateRequest& req) override;
  Result<Created> create_launch_plan(const flyteidl::admin::LaunchPlanCreateRequest& req) override;
  Result<std::map<std::string, std::string>> active_launch_plans(
      const std::string& project, const std::string& domain) override;
  Result<bool> launch_plan_exists(const flyteidl::core::Identifier& id) override;
  bool looks_up_entities() const override { return true; }
  Result<bool> task_interface(const flyteidl::core::Identifier& id,
                              flyteidl::core::TypedInterface& out) override;
  Result<bool> launch_plan_interface(const flyteidl::core::Identifier& id,
                                     compiler::LaunchPlanInterface& out) override;
  Result<VersionedLaunchPlans> launch_plans_at(const std::string& project,
                                               const std::string& domain,
                                               const std::vector<std::string>& versions) override;
  Status set_launch_plan_state(const flyteidl::core::Identifier& id, bool active) override;
  Result<UploadLocation> create_upload_location(const std::string& project,
                                                const std::string& domain,
                                                const std::string& filename,
                                                const std::string& content_md5) override;

  // RPCs issued so far, keyed "Method CODE" (e.g. "UpdateProjectAttributes OK").
  std::map<std::string, uint64_t> rpc_counts() const override;
  // FlyteAdmin's GetVersion (a cheap reachability check).
  Result<std::string> server_version();
  // GetVersion's control-plane version, as `flytectl version` prints it.
  struct ServerVersion {
    std::string version, build, build_time;
  };
  Result<ServerVersion> server_version_info();

 private:
  struct Impl;
  class AsyncStep;
  explicit AdminSink(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

// Pure conversions between FlyteAdmin messages and flytecd's state (unit-tested).
flyteidl::admin::Project render_project(const sinks::ProjectState& p);
sinks::ProjectState parse_project(const flyteidl::admin::Project& p);
sinks::OverrideState parse_row(const flyteidl::admin::MatchableAttributesConfiguration& row,
                               sinks::AttributeType type);

}  // namespace flytecd::sinks::flyteadmin
