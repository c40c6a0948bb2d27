#pragma once

// FlyteAdmin's manager layer, emulated over the Store (internal to sinks/emulator).
// One method per RPC: it validates like FlyteAdmin (same messages and codes, see
// /work/shared/reference/flyte-semantics.md §2–§3) and runs in one Store transaction, so every
// write RPC is atomic and durable. Errors use ErrorCode: invalid_input -> INVALID_ARGUMENT,
// not_found -> NOT_FOUND, already_exists -> ALREADY_EXISTS, internal -> INTERNAL.
// Thread-safe: the Store serializes transactions.

#include <google/protobuf/any.pb.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "flytecd_service.pb.h"
#include "flyteidl/admin/launch_plan.pb.h"
#include "flyteidl/admin/matchable_resource.pb.h"
#include "flyteidl/admin/project.pb.h"
#include "flyteidl/admin/project_attributes.pb.h"
#include "flyteidl/admin/project_domain_attributes.pb.h"
#include "flyteidl/admin/task.pb.h"
#include "flyteidl/admin/version.pb.h"
#include "flyteidl/admin/workflow.pb.h"
#include "flyteidl/admin/workflow_attributes.pb.h"
#include "sinks/emulator/store.hpp"

namespace flytecd::sinks::emulator {

namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;
namespace fs = ::flyteidl::service;

struct AdminConfig {
  std::vector<std::string> domains;
  std::string bucket = "flytecd-emulator";
  // FlyteAdmin's default `flyteadmin.maxParallelism`, used by GetProjectAttributes for
  // WORKFLOW_EXECUTION_CONFIG (the only server default the emulator models).
  int32_t default_max_parallelism = 25;
  int64_t max_upload_expiry_s = 3600;  // server.dataProxy.upload.maxExpiresIn
  int max_workflow_nodes = 100;        // registration.maxWorkflowNodes
  uint64_t seed = 0;                   // seeds random upload file names
};

// A PUT (or GET) received by the upload HTTP endpoint, and the reply to send.
struct UploadRequest {
  std::string method;
  std::string path;  // request target without query string, e.g. "/upload/p/d/PREFIX/f.tgz"
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};
struct UploadReply {
  int status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
};

// FlyteAdmin attaches a status detail to some errors (errors.go WithDetails, e.g.
// admin.InactiveProject). The validator that fails records it here for the call running on this
// thread; the gRPC layer clears it before and takes it after each call (calls are synchronous).
void set_error_detail(const google::protobuf::Message& detail);
std::optional<google::protobuf::Any> take_error_detail();

class Admin {
 public:
  Admin(Store& store, AdminConfig config);
  // Base of signed URLs ("http://127.0.0.1:PORT"); set once before serving.
  void set_upload_base_url(std::string url) { m_upload_base = std::move(url); }

  // Projects
  Status register_project(const fa::ProjectRegisterRequest& req, fa::ProjectRegisterResponse* out);
  Status update_project(const fa::Project& req, fa::ProjectUpdateResponse* out);
  Status get_project(const fa::ProjectGetRequest& req, fa::Project* out);
  Status list_projects(const fa::ProjectListRequest& req, fa::Projects* out);

  // Matchable attributes
  Status update_project_attributes(const fa::ProjectAttributesUpdateRequest& req,
                                   fa::ProjectAttributesUpdateResponse* out);
  Status get_project_attributes(const fa::ProjectAttributesGetRequest& req,
                                fa::ProjectAttributesGetResponse* out);
  Status delete_project_attributes(const fa::ProjectAttributesDeleteRequest& req,
                                   fa::ProjectAttributesDeleteResponse* out);
  Status update_project_domain_attributes(const fa::ProjectDomainAttributesUpdateRequest& req,
                                          fa::ProjectDomainAttributesUpdateResponse* out);
  Status get_project_domain_attributes(const fa::ProjectDomainAttributesGetRequest& req,
                                       fa::ProjectDomainAttributesGetResponse* out);
  Status delete_project_domain_attributes(const fa::ProjectDomainAttributesDeleteRequest& req,
                                          fa::ProjectDomainAttributesDeleteResponse* out);
  Status update_workflow_attributes(const fa::WorkflowAttributesUpdateRequest& req,
                                    fa::WorkflowAttributesUpdateResponse* out);
  Status get_workflow_attributes(const fa::WorkflowAttributesGetRequest& req,
                                 fa::WorkflowAttributesGetResponse* out);
  Status delete_workflow_attributes(const fa::WorkflowAttributesDeleteRequest& req,
                                    fa::WorkflowAttributesDeleteResponse* out);
  Status list_matchable_attributes(const fa::ListMatchableAttributesRequest& req,
                                   fa::ListMatchableAttributesResponse* out);

  // Tasks and workflows. create_workflow fills `detail` (CreateWorkflowFailureReason) when
  // the workflow already exists, as FlyteAdmin attaches it to the status.
  Status create_task(const fa::TaskCreateRequest& req, fa::TaskCreateResponse* out);
  Status get_task(const fa::ObjectGetRequest& req, fa::Task* out);
  Status list_tasks(const fa::ResourceListRequest& req, fa::TaskList* out);
  Status list_task_ids(const fa::NamedEntityIdentifierListRequest& req,
                       fa::NamedEntityIdentifierList* out);
  Status create_workflow(const fa::WorkflowCreateRequest& req, fa::WorkflowCreateResponse* out,
                         google::protobuf::Any* detail);
  Status get_workflow(const fa::ObjectGetRequest& req, fa::Workflow* out);
  Status list_workflows(const fa::ResourceListRequest& req, fa::WorkflowList* out);
  Status list_workflow_ids(const fa::NamedEntityIdentifierListRequest& req,
                           fa::NamedEntityIdentifierList* out);

  // Launch plans
  Status create_launch_plan(const fa::LaunchPlanCreateRequest& req,
                            fa::LaunchPlanCreateResponse* out);
  Status get_launch_plan(const fa::ObjectGetRequest& req, fa::LaunchPlan* out);
  Status update_launch_plan(const fa::LaunchPlanUpdateRequest& req,
                            fa::LaunchPlanUpdateResponse* out);
  Status get_active_launch_plan(const fa::ActiveLaunchPlanRequest& req, fa::LaunchPlan* out);
  Status list_active_launch_plans(const fa::ActiveLaunchPlanListRequest& req,
                                  fa::LaunchPlanList* out);
  // ListLaunchPlans's answer as the bytes of an admin.LaunchPlanList: the list that decoding each
  // row would give, written from the stored rows (sinks/emulator/wire.hpp).
  Status list_launch_plans(const fa::ResourceListRequest& req, std::string* wire);
  Status list_launch_plan_ids(const fa::NamedEntityIdentifierListRequest& req,
                              fa::NamedEntityIdentifierList* out);

  Status get_version(const fa::GetVersionRequest& req, fa::GetVersionResponse* out);

  // DataProxy
  Status create_upload_location(const fs::CreateUploadLocationRequest& req,
                                fs::CreateUploadLocationResponse* out);
  // Serves the signed URLs handed out by create_upload_location (HTTP PUT / GET).
  UploadReply handle_upload(const UploadRequest& req);
  // Stored bytes of an upload by native_url, for tests.
  Result<std::optional<std::string>> uploaded(const std::string& native_url);

 private:
  Status get_entity(EntityKind kind, const fa::ObjectGetRequest& req, std::string* blob);
  Status list_entity_ids(EntityKind kind, const fa::NamedEntityIdentifierListRequest& req,
                         fa::NamedEntityIdentifierList* out);
  Result<std::vector<EntityRow>> list_entity_rows(EntityKind kind,
                                                  const fa::ResourceListRequest& req,
                                                  std::string* token);

  Store& m_store;
  AdminConfig m_config;
  std::string m_upload_base;
  std::mutex m_rng_mu;
  std::mt19937_64 m_rng;  // random file names for uploads without a filename
};

}  // namespace flytecd::sinks::emulator
