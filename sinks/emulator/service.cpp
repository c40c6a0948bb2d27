#include "sinks/emulator/service.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "flytecd_service.grpc.pb.h"
#include "sinks/decode_bound.hpp"
#include "sinks/emulator/call_gate.hpp"
#include "sinks/emulator/store.hpp"

namespace flytecd::sinks::emulator {
namespace {

using grpc::ServerContext;
using GStatus = grpc::Status;

// What decoding one Create* request may take (the package memory budget's default): the emulator
// receives the entities a client registers, and checks the bound before decoding them.
constexpr uint64_t k_max_decoded_request_bytes = 256ull << 20;

// The Create* methods take their request undecoded: a request is decoded only once the wire
// format's estimate (sinks/decode_bound.hpp) is within bounds, so an entity that is a
// decode bomb (millions of empty nodes) is refused with INVALID_ARGUMENT before memory is spent.
//
// The writes of projects and matchable attributes are callback methods that never wait for the
// store's group commit on gRPC's threads: the handler writes, and the store's committer thread
// sends the reply once the group holding the write is synced (write_unary). With synchronous
// handlers every write held a thread asleep until its group's fdatasync; the server's thread
// pool then woke and parked threads around each call, and groups stayed small.
using AdminServiceBase = fs::AdminService::WithRawCallbackMethod_CreateTask<
    fs::AdminService::WithRawCallbackMethod_CreateWorkflow<
        fs::AdminService::WithRawCallbackMethod_CreateLaunchPlan<
            fs::AdminService::CallbackService>>>;

class AdminServiceImpl final : public AdminServiceBase {
 public:
  AdminServiceImpl(Admin& admin, CallGate& gate) : m_admin(admin), m_gate(gate) {}

  grpc::ServerUnaryReactor* CreateTask(grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* req,
                                       grpc::ByteBuffer* resp) override {
    return raw_unary<fa::TaskCreateRequest, fa::TaskCreateResponse>(
        ctx, "CreateTask", *req, resp,
        [&](const fa::TaskCreateRequest& r, fa::TaskCreateResponse* out, google::protobuf::Any*) {
          return m_gate.run(ctx, "CreateTask", [&] { return m_admin.create_task(r, out); });
        });
  }

  grpc::ServerUnaryReactor* CreateWorkflow(grpc::CallbackServerContext* ctx,
                                           const grpc::ByteBuffer* req,
                                           grpc::ByteBuffer* resp) override {
    return raw_unary<fa::WorkflowCreateRequest, fa::WorkflowCreateResponse>(
        ctx, "CreateWorkflow", *req, resp,
        [&](const fa::WorkflowCreateRequest& r, fa::WorkflowCreateResponse* out,
            google::protobuf::Any* detail) {
          return m_gate.run(
              ctx, "CreateWorkflow", [&] { return m_admin.create_workflow(r, out, detail); },
              detail);
        });
  }

  grpc::ServerUnaryReactor* CreateLaunchPlan(grpc::CallbackServerContext* ctx,
                                             const grpc::ByteBuffer* req,
                                             grpc::ByteBuffer* resp) override {
    return raw_unary<fa::LaunchPlanCreateRequest, fa::LaunchPlanCreateResponse>(
        ctx, "CreateLaunchPlan", *req, resp,
        [&](const fa::LaunchPlanCreateRequest& r, fa::LaunchPlanCreateResponse* out,
            google::protobuf::Any*) {
          return m_gate.run(ctx, "CreateLaunchPlan",
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
  FLYTECD_EMULATOR_RPC(ListLaunchPlans, fa::ResourceListRequest, fa::LaunchPlanList,
                       list_launch_plans)
  FLYTECD_EMULATOR_RPC(UpdateLaunchPlan, fa::LaunchPlanUpdateRequest, fa::LaunchPlanUpdateResponse,
                       update_launch_plan)
#define FLYTECD_EMULATOR_WRITE_RPC(Method, Request, Response, call)                           \
  grpc::ServerUnaryReactor* Method(grpc::CallbackServerContext* ctx, const Request* req,      \
                                   Response* resp) override {                                 \
    return write_unary(ctx, #Method, [this, req, resp] { return m_admin.call(*req, resp); }); \
  }
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

 private:
  // A write on gRPC's callback thread: runs `call` without waiting for the store's sync
  // (DeferredAck) and replies when the store says the write is durable. A call drawn to sleep
  // (an injected latency) runs on a thread of its own instead, waiting as a synchronous
  // handler does, so that it holds up no other call.
  template <typename Call>
  grpc::ServerUnaryReactor* write_unary(grpc::CallbackServerContext* ctx, const char* method,
                                        Call call) {
    const FaultDecision fault = m_gate.decide(method);
    if (fault.latency_ms > 0) return m_gate.finish(ctx, method, fault, call);
    auto* reactor = ctx->DefaultReactor();
    std::optional<DeferredAck::Pending> pending;
    GStatus st;
    {
      DeferredAck deferred;
      st = m_gate.run_decided(ctx, method, fault, call);
      pending = deferred.pending();
    }
    if (!pending) {
      reactor->Finish(std::move(st));
      return reactor;
    }
    pending->store->when_durable(pending->group, [this, method, reactor, st](Status durable) {
      reactor->Finish(durable ? st : m_gate.failed(method, durable));
    });
    return reactor;
  }

  // Decodes `req` as Request within the bound, runs `call` and encodes its response.
  template <typename Request, typename Response, typename Call>
  grpc::ServerUnaryReactor* raw_unary(grpc::CallbackServerContext* ctx, const char* method,
                                      const grpc::ByteBuffer& req, grpc::ByteBuffer* resp,
                                      Call&& call) {
    auto* reactor = ctx->DefaultReactor();
    auto finish = [reactor](GStatus st) {
      reactor->Finish(std::move(st));
      return reactor;
    };
    std::vector<grpc::Slice> slices;
    if (!req.Dump(&slices).ok())
      return finish(GStatus(grpc::StatusCode::INTERNAL, "emulator: cannot read the request"));
    std::string wire;
    wire.reserve(req.Length());
    for (const auto& sl : slices) wire.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
    slices.clear();
    const std::string what = std::string(method) + " request";
    const std::string type = Request::descriptor()->full_name();
    const auto est = sinks::estimate_decode(*Request::descriptor(), wire);
    if (est.malformed)
      return finish(GStatus(grpc::StatusCode::INVALID_ARGUMENT,
                            what + ": not a well-formed " + type + " (truncated or corrupt)"));
    if (auto s = sinks::check_decode(est, wire.size(), k_max_decoded_request_bytes,
                                     "the emulator's bound on a decoded request", what);
        !s)
      return finish(GStatus(grpc::StatusCode::INVALID_ARGUMENT, s.error().message));
    Request request;
    if (!request.ParseFromString(wire))
      return finish(
          GStatus(grpc::StatusCode::INVALID_ARGUMENT, what + ": cannot be decoded as " + type));
    std::string().swap(wire);
    Response response;
    google::protobuf::Any detail;
    GStatus st = call(request, &response, &detail);
    if (st.ok()) {
      grpc::Slice out(response.SerializeAsString());
      *resp = grpc::ByteBuffer(&out, 1);
    }
    return finish(std::move(st));
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
    return m_gate.finish(ctx, "CreateUploadLocation",
                         [this, req, resp] { return m_admin.create_upload_location(*req, resp); });
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
