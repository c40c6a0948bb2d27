#include "sinks/emulator/service.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flytecd_service.grpc.pb.h"
#include "sinks/decode_bound.hpp"
#include "sinks/emulator/call_gate.hpp"

namespace flytecd::sinks::emulator {
namespace {

using GStatus = grpc::Status;

// What decoding one Create* request may take (the package memory budget's default): the emulator
// receives the entities a client registers, and checks the bound before decoding them.
constexpr uint64_t k_max_decoded_request_bytes = 256ull << 20;

// The Create* methods take their request undecoded: a request is decoded only once the wire
// format's estimate (sinks/decode_bound.hpp) is within bounds, so an entity that is a
// decode bomb (millions of empty nodes) is refused with INVALID_ARGUMENT before memory is spent.
//
// Every method is a callback method. The writes (projects, matchable attributes, Create*) never
// wait for the store's group commit on gRPC's threads: the handler writes, and the store's
// committer thread sends the reply once the group holding the write is synced
// (CallGate::finish_write). With synchronous handlers every write held a thread asleep until its
// group's fdatasync; the server's thread pool then woke and parked threads around each call, and
// groups stayed small.
//
// ListLaunchPlans answers with bytes too: the store's serialized launch plans are written into
// the answer as they are (Admin::list_launch_plans), not decoded and encoded again.
using AdminServiceBase = fs::AdminService::WithRawCallbackMethod_CreateTask<
    fs::AdminService::WithRawCallbackMethod_CreateWorkflow<
        fs::AdminService::WithRawCallbackMethod_CreateLaunchPlan<
            fs::AdminService::WithRawCallbackMethod_ListLaunchPlans<
                fs::AdminService::CallbackService>>>>;

class AdminServiceImpl final : public AdminServiceBase {
 public:
  AdminServiceImpl(Admin& admin, CallGate& gate) : m_admin(admin), m_gate(gate) {}

  grpc::ServerUnaryReactor* CreateTask(grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* req,
                                       grpc::ByteBuffer* resp) override {
    return raw_unary<fa::TaskCreateRequest, fa::TaskCreateResponse>(
        ctx, "CreateTask", *req, resp,
        [this, ctx](const fa::TaskCreateRequest& r, fa::TaskCreateResponse* out,
                    google::protobuf::Any*, const FaultDecision& fault) {
          return m_gate.run_decided(ctx, "CreateTask", fault,
                                    [&] { return m_admin.create_task(r, out); });
        });
  }

  grpc::ServerUnaryReactor* CreateWorkflow(grpc::CallbackServerContext* ctx,
                                           const grpc::ByteBuffer* req,
                                           grpc::ByteBuffer* resp) override {
    return raw_unary<fa::WorkflowCreateRequest, fa::WorkflowCreateResponse>(
        ctx, "CreateWorkflow", *req, resp,
        [this, ctx](const fa::WorkflowCreateRequest& r, fa::WorkflowCreateResponse* out,
                    google::protobuf::Any* detail, const FaultDecision& fault) {
          return m_gate.run_decided(
              ctx, "CreateWorkflow", fault, [&] { return m_admin.create_workflow(r, out, detail); },
              detail);
        });
  }

  grpc::ServerUnaryReactor* CreateLaunchPlan(grpc::CallbackServerContext* ctx,
                                             const grpc::ByteBuffer* req,
                                             grpc::ByteBuffer* resp) override {
    return raw_unary<fa::LaunchPlanCreateRequest, fa::LaunchPlanCreateResponse>(
        ctx, "CreateLaunchPlan", *req, resp,
        [this, ctx](const fa::LaunchPlanCreateRequest& r, fa::LaunchPlanCreateResponse* out,
                    google::protobuf::Any*, const FaultDecision& fault) {
          return m_gate.run_decided(ctx, "CreateLaunchPlan", fault,
                                    [&] { return m_admin.create_launch_plan(r, out); });
        });
  }

// Request/Response are type names, which cannot be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define FLYTECD_EMULATOR_RPC(Method, Request, Response, call)                                   \
  grpc::ServerUnaryReactor* Method(grpc::CallbackServerContext* ctx, const Request* req,        \
                                   Response* resp) override {                                   \
    return m_gate.finish(ctx, #Method, [this, req, resp] { return m_admin.call(*req, resp); }); \
  }
  // NOLINTEND(bugprone-macro-parentheses)

  FLYTECD_EMULATOR_RPC(GetTask, fa::ObjectGetRequest, fa::Task, get_task)
  FLYTECD_EMULATOR_RPC(ListTaskIds, fa::NamedEntityIdentifierListRequest,
                       fa::NamedEntityIdentifierList, list_task_ids)
  FLYTECD_EMULATOR_RPC(ListTasks, fa::ResourceListRequest, fa::TaskList, list_tasks)
  FLYTECD_EMULATOR_RPC(GetWorkflow, fa::ObjectGetRequest, fa::Workflow, get_workflow)
  FLYTECD_EMULATOR_RPC(ListWorkflowIds, fa::NamedEntityIdentifierListRequest,
                       fa::NamedEntityIdentifierList, list_workflow_ids)
  FLYTECD_EMULATOR_RPC(ListWorkflows, fa::ResourceListRequest, fa::WorkflowList, list_workflows)
  FLYTECD_EMULATOR_RPC(GetLaunchPlan, fa::ObjectGetRequest, fa::LaunchPlan, get_launch_plan)
  FLYTECD_EMULATOR_RPC(GetActiveLaunchPlan, fa::ActiveLaunchPlanRequest, fa::LaunchPlan,
                       get_active_launch_plan)
  FLYTECD_EMULATOR_RPC(ListActiveLaunchPlans, fa::ActiveLaunchPlanListRequest, fa::LaunchPlanList,
                       list_active_launch_plans)
  FLYTECD_EMULATOR_RPC(ListLaunchPlanIds, fa::NamedEntityIdentifierListRequest,
                       fa::NamedEntityIdentifierList, list_launch_plan_ids)
#define FLYTECD_EMULATOR_WRITE_RPC(Method, Request, Response, call)                               \
  grpc::ServerUnaryReactor* Method(grpc::CallbackServerContext* ctx, const Request* req,          \
                                   Response* resp) override {                                     \
    return m_gate.finish_write(ctx, #Method, [this, ctx, req, resp](const FaultDecision& fault) { \
      return m_gate.run_decided(ctx, #Method, fault, [&] { return m_admin.call(*req, resp); });   \
    });                                                                                           \
  }
  FLYTECD_EMULATOR_WRITE_RPC(UpdateLaunchPlan, fa::LaunchPlanUpdateRequest,
                             fa::LaunchPlanUpdateResponse, update_launch_plan)
  FLYTECD_EMULATOR_WRITE_RPC(RegisterProject, fa::ProjectRegisterRequest,
                             fa::ProjectRegisterResponse, register_project)
  FLYTECD_EMULATOR_WRITE_RPC(UpdateProject, fa::Project, fa::ProjectUpdateResponse, update_project)
  FLYTECD_EMULATOR_RPC(GetProject, fa::ProjectGetRequest, fa::Project, get_project)
  FLYTECD_EMULATOR_RPC(ListProjects, fa::ProjectListRequest, fa::Projects, list_projects)
  FLYTECD_EMULATOR_WRITE_RPC(UpdateProjectDomainAttributes,
                             fa::ProjectDomainAttributesUpdateRequest,
                             fa::ProjectDomainAttributesUpdateResponse,
                             update_project_domain_attributes)
  FLYTECD_EMULATOR_RPC(GetProjectDomainAttributes, fa::ProjectDomainAttributesGetRequest,
                       fa::ProjectDomainAttributesGetResponse, get_project_domain_attributes)
  FLYTECD_EMULATOR_WRITE_RPC(DeleteProjectDomainAttributes,
                             fa::ProjectDomainAttributesDeleteRequest,
                             fa::ProjectDomainAttributesDeleteResponse,
                             delete_project_domain_attributes)
  FLYTECD_EMULATOR_WRITE_RPC(UpdateProjectAttributes, fa::ProjectAttributesUpdateRequest,
                             fa::ProjectAttributesUpdateResponse, update_project_attributes)
  FLYTECD_EMULATOR_RPC(GetProjectAttributes, fa::ProjectAttributesGetRequest,
                       fa::ProjectAttributesGetResponse, get_project_attributes)
  FLYTECD_EMULATOR_WRITE_RPC(DeleteProjectAttributes, fa::ProjectAttributesDeleteRequest,
                             fa::ProjectAttributesDeleteResponse, delete_project_attributes)
  FLYTECD_EMULATOR_WRITE_RPC(UpdateWorkflowAttributes, fa::WorkflowAttributesUpdateRequest,
                             fa::WorkflowAttributesUpdateResponse, update_workflow_attributes)
  FLYTECD_EMULATOR_RPC(GetWorkflowAttributes, fa::WorkflowAttributesGetRequest,
                       fa::WorkflowAttributesGetResponse, get_workflow_attributes)
  FLYTECD_EMULATOR_WRITE_RPC(DeleteWorkflowAttributes, fa::WorkflowAttributesDeleteRequest,
                             fa::WorkflowAttributesDeleteResponse, delete_workflow_attributes)
  FLYTECD_EMULATOR_RPC(ListMatchableAttributes, fa::ListMatchableAttributesRequest,
                       fa::ListMatchableAttributesResponse, list_matchable_attributes)
  FLYTECD_EMULATOR_RPC(GetVersion, fa::GetVersionRequest, fa::GetVersionResponse, get_version)

#undef FLYTECD_EMULATOR_RPC
#undef FLYTECD_EMULATOR_WRITE_RPC

  grpc::ServerUnaryReactor* ListLaunchPlans(grpc::CallbackServerContext* ctx,
                                            const grpc::ByteBuffer* req,
                                            grpc::ByteBuffer* resp) override {
    std::shared_ptr<fa::ResourceListRequest> request;
    if (auto refused = decode_request(ctx, "ListLaunchPlans", *req, &request)) return refused;
    return m_gate.finish(ctx, "ListLaunchPlans", [this, request, resp] {
      std::string wire;
      Status st = m_admin.list_launch_plans(*request, &wire);
      if (st) {
        grpc::Slice out(std::move(wire));
        *resp = grpc::ByteBuffer(&out, 1);
      }
      return st;
    });
  }

 private:
  // Decodes a raw method's request into `out` once the wire format's estimate is within bounds;
  // otherwise finishes the call (INVALID_ARGUMENT: before the gate, so not counted, no fault)
  // and returns its reactor.
  template <typename Request>
  grpc::ServerUnaryReactor* decode_request(grpc::CallbackServerContext* ctx, const char* method,
                                           const grpc::ByteBuffer& req,
                                           std::shared_ptr<Request>* out) {
    auto refuse = [ctx](GStatus st) {
      auto* reactor = ctx->DefaultReactor();
      reactor->Finish(std::move(st));
      return reactor;
    };
    std::vector<grpc::Slice> slices;
    if (!req.Dump(&slices).ok())
      return refuse(GStatus(grpc::StatusCode::INTERNAL, "emulator: cannot read the request"));
    std::string wire;
    wire.reserve(req.Length());
    for (const auto& sl : slices) wire.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
    slices.clear();
    const std::string what = std::string(method) + " request";
    const std::string type = Request::descriptor()->full_name();
    const auto est = sinks::estimate_decode(*Request::descriptor(), wire);
    if (est.malformed)
      return refuse(GStatus(grpc::StatusCode::INVALID_ARGUMENT,
                            what + ": not a well-formed " + type + " (truncated or corrupt)"));
    if (auto s = sinks::check_decode(est, wire.size(), k_max_decoded_request_bytes,
                                     "the emulator's bound on a decoded request", what);
        !s)
      return refuse(GStatus(grpc::StatusCode::INVALID_ARGUMENT, s.error().message));
    // Shared: a slowed call uses it on its own thread after this handler returned.
    auto request = std::make_shared<Request>();
    if (!request->ParseFromString(wire))
      return refuse(
          GStatus(grpc::StatusCode::INVALID_ARGUMENT, what + ": cannot be decoded as " + type));
    *out = std::move(request);
    return nullptr;
  }

  // Decodes `req` as above, then writes as CallGate::finish_write: `call` (request, response,
  // error detail, fault) and the encoded response.
  template <typename Request, typename Response, typename Call>
  grpc::ServerUnaryReactor* raw_unary(grpc::CallbackServerContext* ctx, const char* method,
                                      const grpc::ByteBuffer& req, grpc::ByteBuffer* resp,
                                      Call call) {
    std::shared_ptr<Request> request;
    if (auto refused = decode_request(ctx, method, req, &request)) return refused;
    return m_gate.finish_write(ctx, method, [request, resp, call](const FaultDecision& fault) {
      Response response;
      google::protobuf::Any detail;
      GStatus st = call(*request, &response, &detail, fault);
      if (st.ok()) {
        grpc::Slice out(response.SerializeAsString());
        *resp = grpc::ByteBuffer(&out, 1);
      }
      return st;
    });
  }

  Admin& m_admin;
  CallGate& m_gate;
};

// A callback service too: with no synchronous method left, the server starts no synchronous
// thread pool (its pollers competed with the callback threads for every request).
class DataProxyServiceImpl final : public fs::DataProxyService::CallbackService {
 public:
  DataProxyServiceImpl(Admin& admin, CallGate& gate) : m_admin(admin), m_gate(gate) {}

  grpc::ServerUnaryReactor* CreateUploadLocation(grpc::CallbackServerContext* ctx,
                                                 const fs::CreateUploadLocationRequest* req,
                                                 fs::CreateUploadLocationResponse* resp) override {
    return m_gate.finish_write(
        ctx, "CreateUploadLocation", [this, ctx, req, resp](const FaultDecision& fault) {
          return m_gate.run_decided(ctx, "CreateUploadLocation", fault,
                                    [&] { return m_admin.create_upload_location(*req, resp); });
        });
  }

 private:
  Admin& m_admin;
  CallGate& m_gate;
};

}  // namespace

struct RpcFrontend::Impl {
  Impl(Admin& admin, FaultInjector& faults, std::shared_ptr<spdlog::logger> log)
      : gate(faults, std::move(log)), admin_service(admin, gate), data_proxy(admin, gate) {}
  CallGate gate;
  AdminServiceImpl admin_service;
  DataProxyServiceImpl data_proxy;
};

RpcFrontend::RpcFrontend(Admin& admin, FaultInjector& faults, std::shared_ptr<spdlog::logger> log)
    : m_impl(std::make_unique<Impl>(admin, faults, std::move(log))) {}

RpcFrontend::~RpcFrontend() = default;

void RpcFrontend::register_with(grpc::ServerBuilder& builder) {
  builder.RegisterService(&m_impl->admin_service);
  builder.RegisterService(&m_impl->data_proxy);
}

void RpcFrontend::set_log(std::shared_ptr<spdlog::logger> log) {
  m_impl->gate.set_log(std::move(log));
}

uint64_t RpcFrontend::calls(const std::string& method) const { return m_impl->gate.calls(method); }

}  // namespace flytecd::sinks::emulator
