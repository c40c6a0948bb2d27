#include "sinks/flyteadmin/admin_sink.hpp"

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "daemon/common/log.hpp"
#include "daemon/common/scan.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/flyteadmin/admin_sink_impl.hpp"
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

// "override/<project>/<domain>/<workflow>/<TYPE>"; nullopt for any other form (a platform
// default has an empty project and is dropped by the caller, which reads only scoped projects).
std::optional<RowKey> parse_override_key(const std::string& key) {
  constexpr std::string_view k_prefix = "override/";
  if (key.rfind(k_prefix, 0) != 0) return std::nullopt;
  const size_t p = key.find('/', k_prefix.size());
  const size_t d = p == std::string::npos ? p : key.find('/', p + 1);
  const size_t t = key.rfind('/');
  if (d == std::string::npos || t <= d) return std::nullopt;
  auto type = sinks::attribute_type_from_name(key.substr(t + 1));
  if (!type) return std::nullopt;
  RowKey out{key,
             sinks::Scope{key.substr(k_prefix.size(), p - k_prefix.size()),
                          key.substr(p + 1, d - p - 1), key.substr(d + 1, t - d - 1)},
             *type};
  // A workflow without a domain is no scope FlyteAdmin has; the round trip rejects the rest.
  if (out.scope.domain.empty() && !out.scope.workflow.empty()) return std::nullopt;
  if (sinks::override_key(out.scope, out.type) != key) return std::nullopt;
  return out;
}

// The row a Get's answer names: its project, and its domain and workflow where the message has
// them, with the attributes.
template <typename Attrs>
void row_of(const Attrs& a, admin::MatchableAttributesConfiguration& row) {
  row.set_project(a.project());
  if constexpr (requires { a.domain(); }) row.set_domain(a.domain());
  if constexpr (requires { a.workflow(); }) row.set_workflow(a.workflow());
  *row.mutable_attributes() = a.matching_attributes();
}

// Runs fn(0) .. fn(n - 1) on up to `workers` threads (the caller's among them).
void run_parallel(size_t n, size_t workers, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < std::min(workers, n); ++w) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
}

}  // namespace

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
  sinks::State st;
  auto projects = m_impl->list_projects();
  if (!projects) return projects.error();
  st.projects = std::move(*projects);
  for (sinks::AttributeType type : sinks::all_attribute_types()) {
    auto rows = m_impl->list_rows(type);
    if (!rows) return rows.error();
    for (auto& o : *rows) st.overrides[sinks::override_key(o.scope, o.type)] = std::move(o);
  }
  return st;
}

Result<std::map<std::string, sinks::ProjectState>> AdminSink::Impl::list_projects() {
  using Stub = flyteidl::service::AdminService::Stub;
  std::map<std::string, sinks::ProjectState> out;
  // FlyteAdmin hides archived projects unless asked, so list both states explicitly.
  for (const char* filter : {"neq(state,1)", "eq(state,1)"}) {
    std::string token;
    do {
      admin::ProjectListRequest req;
      req.set_limit(1000);
      req.set_token(token);
      req.set_filters(filter);
      admin::Projects resp;
      if (auto s = call("ListProjects", req, &resp, &Stub::ListProjects); !s) return s.error();
      for (const auto& p : resp.projects()) out[p.id()] = parse_project(p);
      token = resp.token();
    } while (!token.empty());
  }
  return out;
}

namespace {
// One AdminService method called with a lighter answer type than the generated code's
// (flytecd_service.proto: the same field numbers, the parts not needed left as bytes or out),
// through gRPC's BlockingUnaryCall as the generated code calls it.
template <typename Req, typename Resp>
class LighterAnswerCall {
 public:
  LighterAnswerCall(std::shared_ptr<grpc::Channel> channel, const char* path)
      : m_channel(std::move(channel)),
        m_method(path, grpc::internal::RpcMethod::NORMAL_RPC, m_channel) {}
  grpc::Status Call(grpc::ClientContext* ctx, const Req& req, Resp* resp) {
    return grpc::internal::BlockingUnaryCall<Req, Resp, google::protobuf::MessageLite,
                                             google::protobuf::MessageLite>(
        m_channel.get(), m_method, ctx, req, resp);
  }

 private:
  std::shared_ptr<grpc::Channel> m_channel;
  grpc::internal::RpcMethod m_method;
};
// ListMatchableAttributes's answer with each row's attributes as bytes until a row is wanted.
using MatchableRowsCall = LighterAnswerCall<admin::ListMatchableAttributesRequest,
                                            flyteidl::service::MatchableAttributesRowList>;
// ListLaunchPlans's answer read for identifiers only.
using LaunchPlanIdentifiersCall =
    LighterAnswerCall<admin::ResourceListRequest, flyteidl::service::LaunchPlanIdentifierList>;
}  // namespace

Result<std::vector<sinks::OverrideState>> AdminSink::Impl::list_rows(
    sinks::AttributeType type, const std::set<std::string>* wanted) {
  admin::ListMatchableAttributesRequest req;
  req.set_resource_type(type);
  flyteidl::service::MatchableAttributesRowList resp;
  MatchableRowsCall rows(channel, "/flyteidl.service.AdminService/ListMatchableAttributes");
  if (auto s = call_on(&rows, "ListMatchableAttributes", req, &resp, &MatchableRowsCall::Call); !s)
    return s.error();
  std::vector<sinks::OverrideState> out;
  for (auto& row : *resp.mutable_configurations()) {
    if (!row.launch_plan().empty()) continue;  // launch-plan level rows are not API-writable
    sinks::OverrideState o{
        sinks::Scope{std::move(*row.mutable_project()), std::move(*row.mutable_domain()),
                     std::move(*row.mutable_workflow())},
        type,
        {}};
    if (wanted && !wanted->count(sinks::override_key(o.scope, type))) continue;
    if (!o.value.ParseFromString(row.attributes()))
      return make_error(ErrorCode::internal,
                        "flyteadmin: ListMatchableAttributes: the attributes of " +
                            sinks::override_key(o.scope, type) +
                            " in the answer are not a flyteidl.admin.MatchingAttributes message");
    out.push_back(std::move(o));
  }
  return out;
}

namespace {

// How observe_scoped reads the override rows it is asked for.
struct ScopedReads {
  std::vector<RowKey> gets;                                      // with the exact Get*Attributes
  std::map<sinks::AttributeType, std::set<std::string>> listed;  // keys taken from that type's List
};

// The keys of projects FlyteAdmin has, sorted by the RPC that reads each row as stored. Pure.
// - GetProjectAttributes(p, WORKFLOW_EXECUTION_CONFIG) answers config defaults when the row is
//   absent and the row merged with them when present (resource_manager.go GetProjectAttributes),
//   so that type's project rows come from ListMatchableAttributes, which returns stored rows.
// - GetProjectDomainAttributes and GetWorkflowAttributes refuse an archived project
//   (ValidateProjectAndDomain: InvalidArgument "project [p] is not active"; project-level Get only
//   needs it to exist), so an archived project's rows below project level are listed too.
ScopedReads plan_scoped_reads(const std::set<std::string>& keys,
                              const std::map<std::string, sinks::ProjectState>& projects) {
  ScopedReads out;
  for (const auto& key : keys) {
    auto k = parse_override_key(key);
    if (!k) continue;
    auto p = projects.find(k->scope.project);
    if (p == projects.end()) continue;  // not in scope, or FlyteAdmin has no such project
    const bool project_level = k->scope.level() == sinks::Level::project;
    if ((project_level && k->type == admin::WORKFLOW_EXECUTION_CONFIG) ||
        (!project_level && p->second.archived))
      out.listed[k->type].insert(key);
    else
      out.gets.push_back(std::move(*k));
  }
  return out;
}

}  // namespace

Result<sinks::State> AdminSink::observe_scoped(const ObserveScope& scope) {
  if (scope.everything()) return observe();
  // Project-level WORKFLOW_EXECUTION_CONFIG rows always come from the List (plan_scoped_reads):
  // it is sent now, while the projects and the Gets are read, for every key of that type asked
  // (which the reads below narrow).
  constexpr auto k_listed_type = admin::WORKFLOW_EXECUTION_CONFIG;
  std::set<std::string> prefetch;
  bool prefetch_needed = false;
  for (const auto& key : scope.override_keys)
    if (auto k = parse_override_key(key); k && k->type == k_listed_type) {
      prefetch.insert(key);
      prefetch_needed = prefetch_needed || k->scope.level() == sinks::Level::project;
    }
  std::future<Result<std::vector<sinks::OverrideState>>> prefetched;
  if (prefetch_needed)
    prefetched =
        std::async(std::launch::async, [&] { return m_impl->list_rows(k_listed_type, &prefetch); });
  sinks::State st;
  auto projects = m_impl->get_projects(scope.projects);
  if (!projects) return projects.error();
  st.projects = std::move(*projects);
  ScopedReads reads = plan_scoped_reads(scope.override_keys, st.projects);
  std::vector<RowKey> refused;
  auto got = m_impl->get_rows(reads.gets, refused);
  if (!got) return got.error();
  for (auto& row : *got)
    if (row) st.overrides[sinks::override_key(row->scope, row->type)] = std::move(*row);
  // A Get FlyteAdmin refuses as invalid (the project archived since, a domain no longer
  // configured) is answered by the List, which validates nothing.
  for (auto& k : refused) reads.listed[k.type].insert(k.key);
  for (const auto& [type, keys] : reads.listed) {
    auto rows = type == k_listed_type && prefetched.valid() ? prefetched.get()
                                                            : m_impl->list_rows(type, &keys);
    if (!rows) return rows.error();
    for (auto& o : *rows) {
      std::string key = sinks::override_key(o.scope, o.type);
      if (keys.count(key)) st.overrides[std::move(key)] = std::move(o);
    }
  }
  m_impl->log->debug("scoped observation of {} projects: {} Gets, {} Lists", scope.projects.size(),
                     reads.gets.size(), reads.listed.size());
  return st;
}

Result<std::optional<sinks::ProjectState>> AdminSink::Impl::get_project(const std::string& id) {
  if (id.empty()) return std::optional<sinks::ProjectState>();  // FlyteAdmin would refuse it
  admin::ProjectGetRequest req;
  req.set_id(id);
  admin::Project resp;
  grpc::StatusCode code = grpc::StatusCode::OK;
  auto s = call_on(stub.get(), "GetProject", req, &resp,
                   &flyteidl::service::AdminService::Stub::GetProject, &code);
  if (s) return std::optional<sinks::ProjectState>(parse_project(resp));
  if (code == grpc::StatusCode::UNIMPLEMENTED) no_get_project = true;
  if (code == grpc::StatusCode::UNIMPLEMENTED || s.error().code == ErrorCode::not_found)
    return std::optional<sinks::ProjectState>();
  return s.error();
}

Result<std::map<std::string, sinks::ProjectState>> AdminSink::Impl::get_projects(
    const std::set<std::string>& ids) {
  std::map<std::string, sinks::ProjectState> out;
  // Several at a time, as the rows (get_rows); the first error in the projects' order is the
  // answer, as when they were asked one by one.
  const std::vector<std::string> asked(ids.begin(), ids.end());
  std::vector<std::optional<Result<std::optional<sinks::ProjectState>>>> got(asked.size());
  std::atomic<bool> failed{false};
  run_parallel(asked.size(), static_cast<size_t>(std::clamp(cfg.max_in_flight, 1, 8)),
               [&](size_t i) {
                 if (no_get_project || failed) return;
                 got[i] = get_project(asked[i]);
                 if (!*got[i]) failed = true;
               });
  for (size_t i = 0; i < asked.size() && !no_get_project; ++i) {
    if (!got[i]) continue;
    if (!*got[i]) return got[i]->error();
    if (got[i]->value()) out.emplace(asked[i], std::move(*got[i]->value()));
  }
  if (!no_get_project) return out;
  // A FlyteAdmin older than GetProject (1.11.1): list every project and keep the scope's.
  auto all = list_projects();
  if (!all) return all.error();
  out.clear();
  for (const auto& id : ids)
    if (auto it = all->find(id); it != all->end()) out.emplace(id, std::move(it->second));
  return out;
}

// FlyteAdmin's Get*Attributes answer the most specific row that matches (ResourceRepo.Get: the
// workflow row, else the project-domain row, else the project row) and name the row's own scope,
// so an answer of a broader scope means the asked row is absent.
Result<std::optional<sinks::OverrideState>> AdminSink::Impl::get_row(const RowKey& k) {
  using Stub = flyteidl::service::AdminService::Stub;
  const sinks::Scope& at = k.scope;
  admin::MatchableAttributesConfiguration row;
  Status s = ok_status();
  if (at.level() == sinks::Level::project) {
    admin::ProjectAttributesGetRequest req;
    req.set_project(at.project);
    req.set_resource_type(k.type);
    admin::ProjectAttributesGetResponse resp;
    s = call("GetProjectAttributes", req, &resp, &Stub::GetProjectAttributes);
    row_of(resp.attributes(), row);
  } else if (at.level() == sinks::Level::project_domain) {
    admin::ProjectDomainAttributesGetRequest req;
    req.set_project(at.project);
    req.set_domain(at.domain);
    req.set_resource_type(k.type);
    admin::ProjectDomainAttributesGetResponse resp;
    s = call("GetProjectDomainAttributes", req, &resp, &Stub::GetProjectDomainAttributes);
    row_of(resp.attributes(), row);
  } else {
    admin::WorkflowAttributesGetRequest req;
    req.set_project(at.project);
    req.set_domain(at.domain);
    req.set_workflow(at.workflow);
    req.set_resource_type(k.type);
    admin::WorkflowAttributesGetResponse resp;
    s = call("GetWorkflowAttributes", req, &resp, &Stub::GetWorkflowAttributes);
    row_of(resp.attributes(), row);
  }
  if (!s) {
    if (s.error().code == ErrorCode::not_found) return std::optional<sinks::OverrideState>();
    return s.error();
  }
  if (sinks::Scope{row.project(), row.domain(), row.workflow()} != at)
    return std::optional<sinks::OverrideState>();  // fell back to a broader row
  return std::optional<sinks::OverrideState>(parse_row(row, k.type));
}

// Up to 8 Gets at once (and never more than max_in_flight): a targeted pass asks for a few dozen
// rows, and against a remote FlyteAdmin each is a round trip. `refused` receives the keys whose
// Get was refused as invalid_input; the first other error is returned.
Result<std::vector<std::optional<sinks::OverrideState>>> AdminSink::Impl::get_rows(
    const std::vector<RowKey>& ks, std::vector<RowKey>& refused) {
  std::vector<std::optional<Result<std::optional<sinks::OverrideState>>>> got(ks.size());
  std::atomic<bool> failed{false};
  run_parallel(ks.size(), static_cast<size_t>(std::clamp(cfg.max_in_flight, 1, 8)), [&](size_t i) {
    if (failed) return;
    got[i] = get_row(ks[i]);
    if (!*got[i] && got[i]->error().code != ErrorCode::invalid_input) failed = true;
  });
  std::vector<std::optional<sinks::OverrideState>> out;
  for (size_t i = 0; i < ks.size(); ++i) {
    if (!got[i]) continue;  // not sent: another Get had failed
    if (*got[i]) {
      out.push_back(std::move(**got[i]));
    } else if (got[i]->error().code == ErrorCode::invalid_input) {
      refused.push_back(ks[i]);
    } else {
      return got[i]->error();
    }
  }
  return out;
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

Result<EntitySink::VersionedLaunchPlans> AdminSink::launch_plans_at(
    const std::string& project, const std::string& domain,
    const std::vector<std::string>& versions) {
  VersionedLaunchPlans out;
  if (versions.empty()) return out;
  // FlyteAdmin's filter syntax: `eq(version,V)`, or `value_in(version,A;B;…)` for several (it
  // splits expressions at '+' and values at ';'). Documents' versions are validated URL-safe; one
  // that is not would ask about other versions, so it is refused here, before any RPC.
  for (const auto& v : versions)
    if (!scan::is_url_safe(v))
      return make_error(ErrorCode::invalid_input,
                        "flyteadmin: ListLaunchPlans: not sent: version '" + scan::printable(v) +
                            "' cannot be written in a FlyteAdmin filter (expected letters, "
                            "digits and - _ . ~)");
  std::string filter = versions.size() == 1 ? "eq(version," : "value_in(version,";
  for (size_t i = 0; i < versions.size(); ++i) {
    if (i) filter += ';';
    filter += versions[i];
  }
  filter += ')';
  const std::set<std::string> wanted(versions.begin(), versions.end());
  LaunchPlanIdentifiersCall ids(m_impl->channel, "/flyteidl.service.AdminService/ListLaunchPlans");
  std::string token;
  do {
    admin::ResourceListRequest req;
    req.mutable_id()->set_project(project);
    req.mutable_id()->set_domain(domain);
    req.set_filters(filter);
    req.set_limit(500);
    req.set_token(token);
    flyteidl::service::LaunchPlanIdentifierList resp;
    if (auto s =
            m_impl->call_on(&ids, "ListLaunchPlans", req, &resp, &LaunchPlanIdentifiersCall::Call);
        !s)
      return s.error();
    for (const auto& lp : resp.launch_plans())
      if (wanted.count(lp.id().version())) out[lp.id().version()].insert(lp.id().name());
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
