#include "sinks/flyteadmin/admin_sink.hpp"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <type_traits>
#include <variant>

#include "daemon/common/log.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/flyteadmin/channel.hpp"
#include "sinks/flyteadmin/hints.hpp"
#include "sinks/flyteadmin/oauth.hpp"
#include "sinks/flyteadmin/requests.hpp"
#include "sinks/workflow_compiler.hpp"

namespace flytecd::sinks::flyteadmin {
namespace admin = flyteidl::admin;
using sinks::Action;
using sinks::ObjectKind;

admin::Project render_project(const sinks::ProjectState& p) {
  admin::Project out;
  out.set_id(p.id);
  out.set_name(p.name);
  out.set_description(p.description);
  for (const auto& [k, v] : p.labels) (*out.mutable_labels()->mutable_values())[k] = v;
  out.set_state(p.archived ? admin::Project::ARCHIVED : admin::Project::ACTIVE);
  return out;
}

sinks::ProjectState parse_project(const admin::Project& p) {
  sinks::ProjectState out;
  out.id = p.id();
  out.name = p.name();
  out.description = p.description();
  for (const auto& [k, v] : p.labels().values()) out.labels[k] = v;
  out.archived = p.state() == admin::Project::ARCHIVED;
  return out;
}

sinks::OverrideState parse_row(const admin::MatchableAttributesConfiguration& row,
                               sinks::AttributeType type) {
  return sinks::OverrideState{sinks::Scope{row.project(), row.domain(), row.workflow()}, type,
                              row.attributes()};
}

namespace {

const char* code_name(grpc::StatusCode code) { return grpc_code_name(code); }

// Counting semaphore bounding RPCs in flight.
class Gate {
 public:
  explicit Gate(int n) : m_free(n) {}
  void acquire() {
    std::unique_lock<std::mutex> lock(m_mu);
    m_cv.wait(lock, [&] { return m_free > 0; });
    --m_free;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(m_mu);
      ++m_free;
    }
    m_cv.notify_one();
  }

 private:
  std::mutex m_mu;
  std::condition_variable m_cv;
  int m_free;
};

}  // namespace

struct AdminSink::Impl {
  AdminConfig cfg;
  std::string label;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<flyteidl::service::AdminService::Stub> stub;
  std::unique_ptr<flyteidl::service::DataProxyService::Stub> data_proxy;
  std::unique_ptr<TokenSource> tokens;
  Gate gate{16};
  mutable std::mutex stats_mu;
  std::map<std::string, uint64_t> stats;
  std::shared_ptr<spdlog::logger> log;

  explicit Impl(int in_flight) : gate(in_flight) {}

  // One RPC with deadline, auth, retries and accounting.
  template <typename Req, typename Resp, typename Fn>
  Status call(const char* method, const Req& req, Resp* resp, Fn fn) {
    return call_on(stub.get(), method, req, resp, fn);
  }
  template <typename StubT, typename Req, typename Resp, typename Fn>
  Status call_on(StubT* target, const char* method, const Req& req, Resp* resp, Fn fn) {
    // Never an empty project or domain: FlyteAdmin would read it as "any" (see empty_scope).
    if (auto why = empty_scope(req))
      return make_error(ErrorCode::invalid_input,
                        std::string("flyteadmin: ") + method + ": not sent: " + *why);
    const std::string where = std::string("flyteadmin: ") + method;
    CallOutcome out = call_with_retries(
        cfg, tokens.get(), method,
        [&](grpc::ClientContext& ctx) {
          gate.acquire();
          grpc::Status st = (target->*fn)(&ctx, req, resp);
          gate.release();
          return st;
        },
        [&](grpc::StatusCode code) {
          std::lock_guard<std::mutex> lock(stats_mu);
          ++stats[std::string(method) + " " + code_name(code)];
        },
        *log);
    if (out.auth_error) return out.auth_error->wrap(where);
    if (out.status.ok()) return ok_status();
    return call_error(cfg, where, out.status);
  }
};

AdminSink::AdminSink(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
AdminSink::~AdminSink() = default;

Result<std::unique_ptr<AdminSink>> AdminSink::connect(const AdminConfig& cfg,
                                                      const std::string& label) {
  auto impl = std::make_unique<Impl>(std::max(1, cfg.max_in_flight));
  impl->cfg = cfg;
  impl->label = label;
  impl->log = log::get("flyteadmin:" + label);
  auto conn = open_connection(cfg, "flyteadmin");
  if (!conn) return conn.error();
  impl->channel = conn->channel;
  impl->tokens = std::move(conn->tokens);
  impl->stub = flyteidl::service::AdminService::NewStub(impl->channel);
  impl->data_proxy = flyteidl::service::DataProxyService::NewStub(impl->channel);
  return std::unique_ptr<AdminSink>(new AdminSink(std::move(impl)));
}

std::string AdminSink::describe() const { return m_impl->label; }

Capabilities AdminSink::capabilities() const {
  return Capabilities{.projects = true, .overrides = true, .registrations = true};
}

std::map<std::string, uint64_t> AdminSink::rpc_counts() const {
  std::lock_guard<std::mutex> lock(m_impl->stats_mu);
  return m_impl->stats;
}

Result<std::string> AdminSink::server_version() {
  admin::GetVersionRequest req;
  admin::GetVersionResponse resp;
  if (auto s = m_impl->call("GetVersion", req, &resp,
                            &flyteidl::service::AdminService::Stub::GetVersion);
      !s)
    return s.error();
  return resp.control_plane_version().build() + " " + resp.control_plane_version().version();
}

Result<AdminSink::ServerVersion> AdminSink::server_version_info() {
  admin::GetVersionRequest req;
  admin::GetVersionResponse resp;
  if (auto s = m_impl->call("GetVersion", req, &resp,
                            &flyteidl::service::AdminService::Stub::GetVersion);
      !s)
    return s.error();
  const auto& v = resp.control_plane_version();
  return ServerVersion{v.version(), v.build(), v.buildtime()};
}

Result<sinks::State> AdminSink::observe() {
  using Stub = flyteidl::service::AdminService::Stub;
  sinks::State st;
  // FlyteAdmin hides archived projects unless asked, so list both states explicitly.
  for (const char* filter : {"neq(state,1)", "eq(state,1)"}) {
    std::string token;
    do {
      admin::ProjectListRequest req;
      req.set_limit(1000);
      req.set_token(token);
      req.set_filters(filter);
      admin::Projects resp;
      if (auto s = m_impl->call("ListProjects", req, &resp, &Stub::ListProjects); !s)
        return s.error();
      for (const auto& p : resp.projects()) st.projects[p.id()] = parse_project(p);
      token = resp.token();
    } while (!token.empty());
  }
  for (sinks::AttributeType type : sinks::all_attribute_types()) {
    admin::ListMatchableAttributesRequest req;
    req.set_resource_type(type);
    admin::ListMatchableAttributesResponse resp;
    if (auto s =
            m_impl->call("ListMatchableAttributes", req, &resp, &Stub::ListMatchableAttributes);
        !s)
      return s.error();
    for (const auto& row : resp.configurations()) {
      if (!row.launch_plan().empty()) continue;  // launch-plan level rows are not API-writable
      auto o = parse_row(row, type);
      st.overrides[sinks::override_key(o.scope, o.type)] = std::move(o);
    }
  }
  return st;
}

namespace {
using AdminStub = flyteidl::service::AdminService::Stub;

// The stub method and response type of each OverrideRequest alternative.
template <typename Req>
struct OverrideRpc;
template <>
struct OverrideRpc<admin::ProjectAttributesUpdateRequest> {
  using Response = admin::ProjectAttributesUpdateResponse;
  static constexpr auto method = &AdminStub::UpdateProjectAttributes;
};
template <>
struct OverrideRpc<admin::ProjectDomainAttributesUpdateRequest> {
  using Response = admin::ProjectDomainAttributesUpdateResponse;
  static constexpr auto method = &AdminStub::UpdateProjectDomainAttributes;
};
template <>
struct OverrideRpc<admin::WorkflowAttributesUpdateRequest> {
  using Response = admin::WorkflowAttributesUpdateResponse;
  static constexpr auto method = &AdminStub::UpdateWorkflowAttributes;
};
template <>
struct OverrideRpc<admin::ProjectAttributesDeleteRequest> {
  using Response = admin::ProjectAttributesDeleteResponse;
  static constexpr auto method = &AdminStub::DeleteProjectAttributes;
};
template <>
struct OverrideRpc<admin::ProjectDomainAttributesDeleteRequest> {
  using Response = admin::ProjectDomainAttributesDeleteResponse;
  static constexpr auto method = &AdminStub::DeleteProjectDomainAttributes;
};
template <>
struct OverrideRpc<admin::WorkflowAttributesDeleteRequest> {
  using Response = admin::WorkflowAttributesDeleteResponse;
  static constexpr auto method = &AdminStub::DeleteWorkflowAttributes;
};
}  // namespace

Status AdminSink::execute(const sinks::Step& step) {
  Impl& i = *m_impl;
  if (step.action == Action::adopt) return ok_status();
  if (step.kind == ObjectKind::project) {
    const auto& p = *step.project;
    if (step.action == Action::create) {
      admin::ProjectRegisterRequest req;
      *req.mutable_project() = render_project(p);
      admin::ProjectRegisterResponse resp;
      auto s = i.call("RegisterProject", req, &resp, &AdminStub::RegisterProject);
      if (s || s.error().code != ErrorCode::already_exists) return s;
      // Registered earlier (e.g. before a crash): make it match instead.
    }
    admin::Project req = render_project(p);
    if (step.action == Action::remove) req.set_state(admin::Project::ARCHIVED);
    admin::ProjectUpdateResponse resp;
    return i.call("UpdateProject", req, &resp, &AdminStub::UpdateProject);
  }

  // Overrides: send what render_override_step rendered, in order, stopping at the first failure.
  for (const OverrideRequest& req : render_override_step(step)) {
    const std::string method(rpc_name(req));
    Status s = std::visit(
        [&](const auto& r) {
          using Rpc = OverrideRpc<std::decay_t<decltype(r)>>;
          typename Rpc::Response resp;
          return i.call(method.c_str(), r, &resp, Rpc::method);
        },
        req);
    if (!s) return s;
  }
  return ok_status();
}

namespace {
Result<Created> created_or_exists(Status s) {
  if (s) return Created::created;
  if (s.error().code == ErrorCode::already_exists) return Created::already_exists;
  return s.error();
}
}  // namespace

Result<Created> AdminSink::create_task(const admin::TaskCreateRequest& req) {
  admin::TaskCreateResponse resp;
  return created_or_exists(
      m_impl->call("CreateTask", req, &resp, &flyteidl::service::AdminService::Stub::CreateTask));
}

Result<Created> AdminSink::create_workflow(const admin::WorkflowCreateRequest& req) {
  admin::WorkflowCreateResponse resp;
  return created_or_exists(m_impl->call("CreateWorkflow", req, &resp,
                                        &flyteidl::service::AdminService::Stub::CreateWorkflow));
}

Result<Created> AdminSink::create_launch_plan(const admin::LaunchPlanCreateRequest& req) {
  admin::LaunchPlanCreateResponse resp;
  return created_or_exists(m_impl->call("CreateLaunchPlan", req, &resp,
                                        &flyteidl::service::AdminService::Stub::CreateLaunchPlan));
}

Result<std::map<std::string, std::string>> AdminSink::active_launch_plans(
    const std::string& project, const std::string& domain) {
  std::map<std::string, std::string> out;
  std::string token;
  do {
    admin::ActiveLaunchPlanListRequest req;
    req.set_project(project);
    req.set_domain(domain);
    req.set_limit(500);
    req.set_token(token);
    admin::LaunchPlanList resp;
    if (auto s = m_impl->call("ListActiveLaunchPlans", req, &resp,
                              &flyteidl::service::AdminService::Stub::ListActiveLaunchPlans);
        !s)
      return s.error();
    for (const auto& lp : resp.launch_plans()) out[lp.id().name()] = lp.id().version();
    token = resp.token();
  } while (!token.empty());
  return out;
}

Result<bool> AdminSink::launch_plan_exists(const flyteidl::core::Identifier& id) {
  admin::ObjectGetRequest req;
  *req.mutable_id() = id;
  req.mutable_id()->set_resource_type(flyteidl::core::LAUNCH_PLAN);
  admin::LaunchPlan resp;
  auto s = m_impl->call("GetLaunchPlan", req, &resp,
                        &flyteidl::service::AdminService::Stub::GetLaunchPlan);
  if (s) return true;
  if (s.error().code == ErrorCode::not_found) return false;
  return s.error();
}

Result<bool> AdminSink::task_interface(const flyteidl::core::Identifier& id,
                                       flyteidl::core::TypedInterface& out) {
  admin::ObjectGetRequest req;
  *req.mutable_id() = id;
  req.mutable_id()->set_resource_type(flyteidl::core::TASK);
  admin::Task resp;
  auto s = m_impl->call("GetTask", req, &resp, &flyteidl::service::AdminService::Stub::GetTask);
  if (!s) {
    if (s.error().code == ErrorCode::not_found) return false;
    return s.error();
  }
  out = resp.closure().compiled_task().template_().interface();
  return true;
}

Result<bool> AdminSink::launch_plan_interface(const flyteidl::core::Identifier& id,
                                              compiler::LaunchPlanInterface& out) {
  admin::ObjectGetRequest req;
  *req.mutable_id() = id;
  req.mutable_id()->set_resource_type(flyteidl::core::LAUNCH_PLAN);
  admin::LaunchPlan resp;
  auto s = m_impl->call("GetLaunchPlan", req, &resp,
                        &flyteidl::service::AdminService::Stub::GetLaunchPlan);
  if (!s) {
    if (s.error().code == ErrorCode::not_found) return false;
    return s.error();
  }
  out.inputs = resp.closure().expected_inputs();
  out.outputs = resp.closure().expected_outputs();
  return true;
}

Result<std::set<std::string>> AdminSink::launch_plans_at(const std::string& project,
                                                         const std::string& domain,
                                                         const std::string& version) {
  std::set<std::string> out;
  std::string token;
  do {
    admin::ResourceListRequest req;
    req.mutable_id()->set_project(project);
    req.mutable_id()->set_domain(domain);
    req.set_filters("eq(version," + version + ")");
    req.set_limit(500);
    req.set_token(token);
    admin::LaunchPlanList resp;
    if (auto s = m_impl->call("ListLaunchPlans", req, &resp,
                              &flyteidl::service::AdminService::Stub::ListLaunchPlans);
        !s)
      return s.error();
    for (const auto& lp : resp.launch_plans())
      if (lp.id().version() == version) out.insert(lp.id().name());
    token = resp.token();
  } while (!token.empty());
  return out;
}

Status AdminSink::set_launch_plan_state(const flyteidl::core::Identifier& id, bool active) {
  admin::LaunchPlanUpdateRequest req;
  *req.mutable_id() = id;
  req.mutable_id()->set_resource_type(flyteidl::core::LAUNCH_PLAN);
  req.set_state(active ? admin::ACTIVE : admin::INACTIVE);
  admin::LaunchPlanUpdateResponse resp;
  return m_impl->call("UpdateLaunchPlan", req, &resp,
                      &flyteidl::service::AdminService::Stub::UpdateLaunchPlan);
}

Result<UploadLocation> AdminSink::create_upload_location(const std::string& project,
                                                         const std::string& domain,
                                                         const std::string& filename,
                                                         const std::string& content_md5) {
  flyteidl::service::CreateUploadLocationRequest req;
  req.set_project(project);
  req.set_domain(domain);
  req.set_filename(filename);
  req.set_content_md5(content_md5);
  flyteidl::service::CreateUploadLocationResponse resp;
  if (auto s = m_impl->call_on(m_impl->data_proxy.get(), "CreateUploadLocation", req, &resp,
                               &flyteidl::service::DataProxyService::Stub::CreateUploadLocation);
      !s)
    return s.error();
  UploadLocation out;
  out.signed_url = resp.signed_url();
  out.native_url = resp.native_url();
  for (const auto& [k, v] : resp.headers()) out.headers[k] = v;
  return out;
}

}  // namespace flytecd::sinks::flyteadmin
