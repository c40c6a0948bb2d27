// The FlyteAdmin emulator, exercised over real gRPC on 127.0.0.1:0 (and real HTTP for uploads).

#include <arpa/inet.h>
#include <curl/curl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

namespace fa = flyteidl::admin;
namespace fc = flyteidl::core;
namespace fs = flyteidl::service;
using flytecd::sinks::emulator::Emulator;
using flytecd::sinks::emulator::FaultRule;
using flytecd::sinks::emulator::Options;
using flytecd::sinks::emulator::parse_fault;
using flytecd::sinks::emulator::parse_faults;
using flytecd::sinks::emulator::run_standalone;

// One emulator plus stubs; every call has a deadline.
struct Peer {
  explicit Peer(const Options& options = {}) {
    auto started = Emulator::start(options);
    if (!started) FAIL(started.error().message);
    emu = std::move(*started);
    auto channel = grpc::CreateChannel(emu->address(), grpc::InsecureChannelCredentials());
    admin = fs::AdminService::NewStub(channel);
    proxy = fs::DataProxyService::NewStub(channel);
  }

  template <typename Stub, typename Req, typename Resp>
  static grpc::Status call(Stub& stub,
                           grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                           const Req& req, Resp* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return (stub.*method)(&ctx, req, resp);
  }
  template <typename Req, typename Resp>
  grpc::Status rpc(grpc::Status (fs::AdminService::Stub::*method)(grpc::ClientContext*, const Req&,
                                                                  Resp*),
                   const Req& req, Resp* resp = nullptr) {
    Resp local;
    return call(*admin, method, req, resp ? resp : &local);
  }

  std::unique_ptr<Emulator> emu;
  std::unique_ptr<fs::AdminService::Stub> admin;
  std::unique_ptr<fs::DataProxyService::Stub> proxy;
};

using S = fs::AdminService::Stub;

grpc::Status register_project(Peer& peer, const std::string& id) {
  fa::ProjectRegisterRequest req;
  req.mutable_project()->set_id(id);
  req.mutable_project()->set_name(id + " project");
  return peer.rpc(&S::RegisterProject, req);
}

fa::MatchingAttributes task_resources(const std::string& cpu) {
  fa::MatchingAttributes m;
  m.mutable_task_resource_attributes()->mutable_defaults()->set_cpu(cpu);
  return m;
}

fa::MatchingAttributes queue(const std::string& tag) {
  fa::MatchingAttributes m;
  m.mutable_execution_queue_attributes()->add_tags(tag);
  return m;
}

grpc::Status set_project_attrs(Peer& peer, const std::string& p, const fa::MatchingAttributes& m) {
  fa::ProjectAttributesUpdateRequest req;
  req.mutable_attributes()->set_project(p);
  *req.mutable_attributes()->mutable_matching_attributes() = m;
  return peer.rpc(&S::UpdateProjectAttributes, req);
}

grpc::Status set_domain_attrs(Peer& peer, const std::string& p, const std::string& d,
                              const fa::MatchingAttributes& m) {
  fa::ProjectDomainAttributesUpdateRequest req;
  req.mutable_attributes()->set_project(p);
  req.mutable_attributes()->set_domain(d);
  *req.mutable_attributes()->mutable_matching_attributes() = m;
  return peer.rpc(&S::UpdateProjectDomainAttributes, req);
}

grpc::Status set_workflow_attrs(Peer& peer, const std::string& p, const std::string& d,
                                const std::string& wf, const fa::MatchingAttributes& m) {
  fa::WorkflowAttributesUpdateRequest req;
  req.mutable_attributes()->set_project(p);
  req.mutable_attributes()->set_domain(d);
  req.mutable_attributes()->set_workflow(wf);
  *req.mutable_attributes()->mutable_matching_attributes() = m;
  return peer.rpc(&S::UpdateWorkflowAttributes, req);
}

grpc::Status get_workflow_attrs(Peer& peer, const std::string& p, const std::string& d,
                                const std::string& wf, fa::MatchableResource type,
                                fa::WorkflowAttributesGetResponse* out) {
  fa::WorkflowAttributesGetRequest req;
  req.set_project(p);
  req.set_domain(d);
  req.set_workflow(wf);
  req.set_resource_type(type);
  return peer.rpc(&S::GetWorkflowAttributes, req, out);
}

fa::ListMatchableAttributesResponse list_attrs(Peer& peer, fa::MatchableResource type) {
  fa::ListMatchableAttributesRequest req;
  req.set_resource_type(type);
  fa::ListMatchableAttributesResponse out;
  REQUIRE(peer.rpc(&S::ListMatchableAttributes, req, &out).ok());
  return out;
}

fc::Identifier ident(fc::ResourceType type, const std::string& name, const std::string& version,
                     const std::string& project = "flytesnacks",
                     const std::string& domain = "development") {
  fc::Identifier id;
  id.set_resource_type(type);
  id.set_project(project);
  id.set_domain(domain);
  id.set_name(name);
  id.set_version(version);
  return id;
}

fa::TaskCreateRequest task(const std::string& name, const std::string& version,
                           const std::string& image = "ghcr.io/flyteorg/flytekit:py3.11") {
  fa::TaskCreateRequest req;
  *req.mutable_id() = ident(fc::TASK, name, version);
  auto* t = req.mutable_spec()->mutable_template_();
  *t->mutable_id() = req.id();
  t->set_type("python-task");
  t->mutable_metadata()->mutable_runtime()->set_version("1.10.0");
  t->mutable_interface();
  t->mutable_container()->set_image(image);
  t->mutable_container()->add_args("pyflyte-execute");
  return req;
}

fc::Node task_node(const std::string& id, const fc::Identifier& task_id) {
  fc::Node n;
  n.set_id(id);
  *n.mutable_task_node()->mutable_reference_id() = task_id;
  return n;
}

fa::WorkflowCreateRequest workflow(const std::string& name, const std::string& version,
                                   const std::vector<fc::Identifier>& tasks) {
  fa::WorkflowCreateRequest req;
  *req.mutable_id() = ident(fc::WORKFLOW, name, version);
  auto* t = req.mutable_spec()->mutable_template_();
  *t->mutable_id() = req.id();
  int i = 0;
  for (const auto& tid : tasks) *t->add_nodes() = task_node("n" + std::to_string(i++), tid);
  if (tasks.empty()) {  // FlyteAdmin's compiler refuses a workflow without nodes
    auto* wait = t->add_nodes();
    wait->set_id("wait");
    wait->mutable_gate_node()->mutable_sleep()->mutable_duration()->set_seconds(1);
  }
  return req;
}

fa::LaunchPlanCreateRequest launch_plan(const std::string& name, const std::string& version,
                                        const fc::Identifier& wf) {
  fa::LaunchPlanCreateRequest req;
  *req.mutable_id() = ident(fc::LAUNCH_PLAN, name, version);
  *req.mutable_spec()->mutable_workflow_id() = wf;
  return req;
}

// A peer with project flytesnacks registered.
struct Seeded : Peer {
  explicit Seeded(const Options& o = {}) : Peer(o) {
    REQUIRE(register_project(*this, "flytesnacks").ok());
  }
};

std::string temp_path(const std::string& stem) {
  static std::atomic<int> counter{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("flytecd-emu-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  return (dir / stem).string();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Fault specs

TEST_CASE("emulator: parse_fault reads method, rate, code, latency and after", "[emulator]") {
  auto r = parse_fault("writes:rate=0.3,code=unavailable,latency=200ms");
  REQUIRE(r);
  CHECK(r->method == "writes");
  CHECK(r->error_rate == Approx(0.3));
  CHECK(r->code == "UNAVAILABLE");
  CHECK(r->latency_ms == 200);
  auto a = parse_fault("CreateTask:after=5,code=INTERNAL");
  REQUIRE(a);
  CHECK(a->fail_after_calls == 5);
  CHECK(a->code == "INTERNAL");
  auto s = parse_fault("*:latency=2s");
  REQUIRE(s);
  CHECK(s->latency_ms == 2000);
  auto many = parse_faults("CreateTask:rate=1; GetTask:after=0");
  REQUIRE(many);
  CHECK(many->size() == 2);

  CHECK_FALSE(parse_fault("CreateTask:rate=1.5"));
  CHECK_FALSE(parse_fault("CreateTask:rate=1,code=NOPE"));
  CHECK_FALSE(parse_fault("CreateTask:bogus=1"));
  CHECK_FALSE(parse_fault(":rate=1"));
  CHECK_FALSE(parse_fault("CreateTask"));  // no effect
  CHECK(parse_fault("CreateTask:rate=x").error().code == flytecd::ErrorCode::invalid_input);
}

// ---------------------------------------------------------------------------------------------
// Version and projects

TEST_CASE("emulator: GetVersion says it is the flytecd emulator", "[emulator]") {
  Peer peer;
  fa::GetVersionResponse out;
  REQUIRE(peer.rpc(&S::GetVersion, fa::GetVersionRequest{}, &out).ok());
  CHECK(out.control_plane_version().build() == "flytecd-emulator");
  CHECK(out.control_plane_version().version() == FLYTECD_VERSION);
}

TEST_CASE("emulator: RegisterProject validates, rejects duplicates and fills configured domains",
          "[emulator]") {
  Options o;
  o.domains = {"dev", "prod"};
  Peer peer(o);
  fa::ProjectRegisterRequest no_name;
  no_name.mutable_project()->set_id("p1");
  auto st = peer.rpc(&S::RegisterProject, no_name);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "missing project_name");

  auto bad = register_project(peer, "Not_A_Label");
  CHECK(bad.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(bad.error_message(), Catch::StartsWith("invalid project id [Not_A_Label]"));

  REQUIRE(register_project(peer, "p1").ok());
  auto dup = register_project(peer, "p1");
  CHECK(dup.error_code() == grpc::StatusCode::ALREADY_EXISTS);

  fa::ProjectGetRequest get;
  get.set_id("p1");
  fa::Project project;
  REQUIRE(peer.rpc(&S::GetProject, get, &project).ok());
  CHECK(project.name() == "p1 project");
  REQUIRE(project.domains_size() == 2);
  CHECK(project.domains(0).id() == "dev");
  CHECK(project.domains(1).name() == "prod");

  get.set_id("nope");
  auto missing = peer.rpc(&S::GetProject, get, &project);
  CHECK(missing.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(missing.error_message() == "project [nope] not found");
}

TEST_CASE("emulator: archived projects are hidden from ListProjects and reject writes",
          "[emulator]") {
  Peer peer;
  REQUIRE(register_project(peer, "a").ok());
  REQUIRE(register_project(peer, "b").ok());
  fa::Project update;
  update.set_id("b");
  update.set_state(fa::Project::ARCHIVED);
  REQUIRE(peer.rpc(&S::UpdateProject, update).ok());

  fa::Projects list;
  REQUIRE(peer.rpc(&S::ListProjects, fa::ProjectListRequest{}, &list).ok());
  REQUIRE(list.projects_size() == 1);
  CHECK(list.projects(0).id() == "a");
  CHECK(list.projects(0).domains_size() == 3);

  fa::Project kept;
  fa::ProjectGetRequest get;
  get.set_id("b");
  REQUIRE(peer.rpc(&S::GetProject, get, &kept).ok());
  CHECK(kept.name() == "b project");  // empty name in the update leaves it unchanged

  auto st = set_project_attrs(peer, "b", task_resources("1"));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "project [b] is not active");

  update.set_id("ghost");
  CHECK(peer.rpc(&S::UpdateProject, update).error_code() == grpc::StatusCode::NOT_FOUND);
}

// ---------------------------------------------------------------------------------------------
// Matchable attributes

TEST_CASE("emulator: attribute writes need a registered project and a known domain", "[emulator]") {
  Seeded peer;
  auto st = set_project_attrs(peer, "ghost", task_resources("1"));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(),
             Catch::StartsWith("failed to validate that project [ghost] is registered, err: "));

  st = set_domain_attrs(peer, "ghost", "development", task_resources("1"));
  CHECK_THAT(st.error_message(), Catch::StartsWith("failed to validate that project [ghost] and "
                                                   "domain [development] are registered"));
  st = set_domain_attrs(peer, "flytesnacks", "qa", task_resources("1"));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "domain [qa] is unrecognized by system");

  // Workflow scope: a name is required, but the workflow need not be registered.
  st = set_workflow_attrs(peer, "flytesnacks", "development", "", task_resources("1"));
  CHECK(st.error_message() == "missing name");
  CHECK(
      set_workflow_attrs(peer, "flytesnacks", "development", "not.registered", task_resources("1"))
          .ok());

  fa::ProjectAttributesUpdateRequest none;
  none.mutable_attributes()->set_project("flytesnacks");
  st = peer.rpc(&S::UpdateProjectAttributes, none);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "missing matching_attributes");
}

TEST_CASE("emulator: QUALITY_OF_SERVICE and an unset oneof cannot be written", "[emulator]") {
  Seeded peer;
  fa::MatchingAttributes qos;
  qos.mutable_quality_of_service()->set_tier(fc::QualityOfService::HIGH);
  auto st = set_domain_attrs(peer, "flytesnacks", "development", qos);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "Unrecognized matching attributes type for request flytesnacks-development");
  st = set_workflow_attrs(peer, "flytesnacks", "development", "wf", fa::MatchingAttributes{});
  CHECK(st.error_message() ==
        "Unrecognized matching attributes type for request flytesnacks-development-wf");
  CHECK(list_attrs(peer, fa::QUALITY_OF_SERVICE_SPECIFICATION).configurations_size() == 0);
}

TEST_CASE("emulator: Get falls back to broader scopes and names the scope it found", "[emulator]") {
  Seeded peer;
  fa::WorkflowAttributesGetResponse got;
  auto st = get_workflow_attrs(peer, "flytesnacks", "development", "wf", fa::TASK_RESOURCE, &got);
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(st.error_message() ==
        "Resource [{Project:flytesnacks Domain:development Workflow:wf "
        "LaunchPlan: ResourceType:TASK_RESOURCE}] not found");

  REQUIRE(set_project_attrs(peer, "flytesnacks", task_resources("1")).ok());
  REQUIRE(
      get_workflow_attrs(peer, "flytesnacks", "development", "wf", fa::TASK_RESOURCE, &got).ok());
  CHECK(got.attributes().project() == "flytesnacks");
  CHECK(got.attributes().domain().empty());
  CHECK(got.attributes().workflow().empty());
  CHECK(got.attributes().matching_attributes().task_resource_attributes().defaults().cpu() == "1");

  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", task_resources("2")).ok());
  REQUIRE(
      get_workflow_attrs(peer, "flytesnacks", "development", "wf", fa::TASK_RESOURCE, &got).ok());
  CHECK(got.attributes().domain() == "development");
  CHECK(got.attributes().workflow().empty());
  CHECK(got.attributes().matching_attributes().task_resource_attributes().defaults().cpu() == "2");

  REQUIRE(set_workflow_attrs(peer, "flytesnacks", "development", "wf", task_resources("3")).ok());
  REQUIRE(
      get_workflow_attrs(peer, "flytesnacks", "development", "wf", fa::TASK_RESOURCE, &got).ok());
  CHECK(got.attributes().workflow() == "wf");
  CHECK(got.attributes().matching_attributes().task_resource_attributes().defaults().cpu() == "3");

  // Project-domain Get in another domain falls back to the project row.
  fa::ProjectDomainAttributesGetRequest pd;
  pd.set_project("flytesnacks");
  pd.set_domain("staging");
  pd.set_resource_type(fa::TASK_RESOURCE);
  fa::ProjectDomainAttributesGetResponse pd_out;
  REQUIRE(peer.rpc(&S::GetProjectDomainAttributes, pd, &pd_out).ok());
  CHECK(pd_out.attributes().domain().empty());
  CHECK(pd_out.attributes().matching_attributes().task_resource_attributes().defaults().cpu() ==
        "1");

  // Another type has nothing anywhere.
  CHECK(get_workflow_attrs(peer, "flytesnacks", "development", "wf", fa::EXECUTION_QUEUE, &got)
            .error_code() == grpc::StatusCode::NOT_FOUND);
}

TEST_CASE("emulator: GetProjectAttributes is exact, with server defaults for execution config",
          "[emulator]") {
  Seeded peer;
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", task_resources("2")).ok());
  fa::ProjectAttributesGetRequest req;
  req.set_project("flytesnacks");
  req.set_resource_type(fa::TASK_RESOURCE);
  fa::ProjectAttributesGetResponse out;
  auto st = peer.rpc(&S::GetProjectAttributes, req, &out);
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);

  req.set_resource_type(fa::WORKFLOW_EXECUTION_CONFIG);
  REQUIRE(peer.rpc(&S::GetProjectAttributes, req, &out).ok());
  CHECK(out.attributes().matching_attributes().workflow_execution_config().max_parallelism() == 25);

  fa::MatchingAttributes wec;
  wec.mutable_workflow_execution_config()->mutable_labels()->mutable_values()->insert(
      {"team", "ml"});
  REQUIRE(set_project_attrs(peer, "flytesnacks", wec).ok());
  out.Clear();
  REQUIRE(peer.rpc(&S::GetProjectAttributes, req, &out).ok());
  const auto& got = out.attributes().matching_attributes().workflow_execution_config();
  CHECK(got.max_parallelism() == 25);
  CHECK(got.labels().values().at("team") == "ml");
  // ListMatchableAttributes shows the raw row, without defaults.
  auto raw = list_attrs(peer, fa::WORKFLOW_EXECUTION_CONFIG);
  REQUIRE(raw.configurations_size() == 1);
  CHECK(raw.configurations(0).attributes().workflow_execution_config().max_parallelism() == 0);

  req.set_project("ghost");  // validation/project_validator.go ValidateProjectExists
  CHECK(peer.rpc(&S::GetProjectAttributes, req, &out).error_message() ==
        "failed to validate that project [ghost] exists, err: [project [ghost] not found]");
}

TEST_CASE("emulator: Update replaces the whole attributes of one scope and type", "[emulator]") {
  Seeded peer;
  fa::MatchingAttributes first;
  (*first.mutable_cluster_resource_attributes()->mutable_attributes())["a"] = "1";
  (*first.mutable_cluster_resource_attributes()->mutable_attributes())["b"] = "2";
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", first).ok());
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", queue("gpu")).ok());
  fa::MatchingAttributes second;
  (*second.mutable_cluster_resource_attributes()->mutable_attributes())["c"] = "3";
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", second).ok());

  auto rows = list_attrs(peer, fa::CLUSTER_RESOURCE);
  REQUIRE(rows.configurations_size() == 1);
  const auto& map = rows.configurations(0).attributes().cluster_resource_attributes().attributes();
  CHECK(map.size() == 1);
  CHECK(map.at("c") == "3");
  CHECK(list_attrs(peer, fa::EXECUTION_QUEUE).configurations_size() == 1);  // other type untouched
}

TEST_CASE("emulator: plugin overrides merge by task type with the existing row", "[emulator]") {
  Seeded peer;
  auto overrides = [](const std::vector<std::pair<std::string, std::string>>& entries) {
    fa::MatchingAttributes m;
    for (const auto& [type, plugin] : entries) {
      auto* o = m.mutable_plugin_overrides()->add_overrides();
      o->set_task_type(type);
      o->add_plugin_id(plugin);
    }
    return m;
  };
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development",
                           overrides({{"spark", "spark-v1"}, {"ray", "ray-v1"}}))
              .ok());
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development",
                           overrides({{"spark", "spark-v2"}, {"dask", "dask-v1"}}))
              .ok());
  auto rows = list_attrs(peer, fa::PLUGIN_OVERRIDE);
  REQUIRE(rows.configurations_size() == 1);
  const auto& merged = rows.configurations(0).attributes().plugin_overrides().overrides();
  REQUIRE(merged.size() == 3);
  CHECK(merged[0].task_type() == "ray");
  CHECK(merged[0].plugin_id(0) == "ray-v1");
  CHECK(merged[1].task_type() == "spark");
  CHECK(merged[1].plugin_id(0) == "spark-v2");
  CHECK(merged[2].task_type() == "dask");
  // The merge is per exact scope: a workflow-level write does not pick up the domain row.
  REQUIRE(set_workflow_attrs(peer, "flytesnacks", "development", "wf", overrides({{"ray", "r2"}}))
              .ok());
  rows = list_attrs(peer, fa::PLUGIN_OVERRIDE);
  REQUIRE(rows.configurations_size() == 2);
  CHECK(rows.configurations(0).workflow() == "wf");
  CHECK(rows.configurations(0).attributes().plugin_overrides().overrides_size() == 1);
}

// flyteadmin/pkg/manager/impl/resources/resource_manager.go createOrMergeUpdateProjectAttributes
// -> flyteadmin/pkg/repositories/gormimpl/resource_repo.go GetRaw (empty domain refused, passed
// through errors/postgres.go ToFlyteAdminError -> Internal).
TEST_CASE(
    "emulator: project-scope plugin overrides fail as in FlyteAdmin (GetRaw refuses an "
    "empty domain), other project-scope types and project-domain overrides are stored",
    "[emulator]") {
  Seeded peer;
  fa::MatchingAttributes m;
  auto* o = m.mutable_plugin_overrides()->add_overrides();
  o->set_task_type("spark");
  o->add_plugin_id("spark-v1");
  auto st = set_project_attrs(peer, "flytesnacks", m);
  CHECK(st.error_code() == grpc::StatusCode::INTERNAL);
  CHECK(st.error_message() ==
        "unexpected error type for: missing and/or invalid parameters: "
        "{flytesnacks    PLUGIN_OVERRIDE}");
  // An empty PluginOverrides is still the plugin_overrides oneof: it fails the same way.
  fa::MatchingAttributes empty;
  empty.mutable_plugin_overrides();
  CHECK(set_project_attrs(peer, "flytesnacks", empty).error_code() == grpc::StatusCode::INTERNAL);
  CHECK(list_attrs(peer, fa::PLUGIN_OVERRIDE).configurations_size() == 0);
  // Project validation still comes first.
  st = set_project_attrs(peer, "ghost", m);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(set_project_attrs(peer, "flytesnacks", task_resources("1")).ok());
  CHECK(set_domain_attrs(peer, "flytesnacks", "development", m).ok());
}

TEST_CASE("emulator: delete at project scope removes narrower rows of that type", "[emulator]") {
  Seeded peer;
  REQUIRE(register_project(peer, "other").ok());
  REQUIRE(set_project_attrs(peer, "flytesnacks", task_resources("1")).ok());
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", task_resources("2")).ok());
  REQUIRE(set_workflow_attrs(peer, "flytesnacks", "staging", "wf", task_resources("3")).ok());
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", queue("q")).ok());
  REQUIRE(set_project_attrs(peer, "other", task_resources("9")).ok());

  fa::ProjectAttributesDeleteRequest del;
  del.set_project("flytesnacks");
  del.set_resource_type(fa::TASK_RESOURCE);
  REQUIRE(peer.rpc(&S::DeleteProjectAttributes, del).ok());
  auto rows = list_attrs(peer, fa::TASK_RESOURCE);
  REQUIRE(rows.configurations_size() == 1);
  CHECK(rows.configurations(0).project() == "other");
  CHECK(list_attrs(peer, fa::EXECUTION_QUEUE).configurations_size() == 1);
  // Idempotent.
  CHECK(peer.rpc(&S::DeleteProjectAttributes, del).ok());
}

TEST_CASE("emulator: delete at project-domain scope also removes its workflow rows", "[emulator]") {
  Seeded peer;
  REQUIRE(set_project_attrs(peer, "flytesnacks", task_resources("1")).ok());
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", task_resources("2")).ok());
  REQUIRE(set_workflow_attrs(peer, "flytesnacks", "development", "wf", task_resources("3")).ok());
  REQUIRE(set_workflow_attrs(peer, "flytesnacks", "staging", "wf", task_resources("4")).ok());

  fa::ProjectDomainAttributesDeleteRequest del;
  del.set_project("flytesnacks");
  del.set_domain("development");
  del.set_resource_type(fa::TASK_RESOURCE);
  REQUIRE(peer.rpc(&S::DeleteProjectDomainAttributes, del).ok());
  auto rows = list_attrs(peer, fa::TASK_RESOURCE);
  REQUIRE(rows.configurations_size() == 2);
  CHECK(rows.configurations(0).domain() == "staging");  // workflow row, priority 100
  CHECK(rows.configurations(1).domain().empty());       // project row, priority 5

  fa::WorkflowAttributesDeleteRequest wdel;
  wdel.set_project("flytesnacks");
  wdel.set_domain("staging");
  wdel.set_workflow("wf");
  wdel.set_resource_type(fa::TASK_RESOURCE);
  REQUIRE(peer.rpc(&S::DeleteWorkflowAttributes, wdel).ok());
  CHECK(list_attrs(peer, fa::TASK_RESOURCE).configurations_size() == 1);
}

TEST_CASE("emulator: ListMatchableAttributes orders by priority and validates the type",
          "[emulator]") {
  Seeded peer;
  REQUIRE(set_project_attrs(peer, "flytesnacks", queue("p")).ok());
  REQUIRE(set_workflow_attrs(peer, "flytesnacks", "development", "wf", queue("w")).ok());
  REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", queue("d")).ok());
  auto rows = list_attrs(peer, fa::EXECUTION_QUEUE);
  REQUIRE(rows.configurations_size() == 3);
  CHECK(rows.configurations(0).workflow() == "wf");
  CHECK(rows.configurations(1).domain() == "development");
  CHECK(rows.configurations(1).workflow().empty());
  CHECK(rows.configurations(2).domain().empty());
  CHECK(list_attrs(peer, fa::CLUSTER_ASSIGNMENT).configurations_size() == 0);

  fa::ListMatchableAttributesRequest bad;
  bad.set_resource_type(static_cast<fa::MatchableResource>(42));
  auto st = peer.rpc(&S::ListMatchableAttributes, bad);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "invalid value for resource_type");
}

// ---------------------------------------------------------------------------------------------
// Tasks, workflows, launch plans

TEST_CASE(
    "emulator: CreateTask identical is AlreadyExists, different is InvalidArgument with a diff",
    "[emulator]") {
  Seeded peer;
  REQUIRE(peer.rpc(&S::CreateTask, task("t1", "v1")).ok());
  auto same = peer.rpc(&S::CreateTask, task("t1", "v1"));
  CHECK(same.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  CHECK(same.error_message() == "task with identical structure already exists");

  auto diff = peer.rpc(&S::CreateTask, task("t1", "v1", "other:image"));
  CHECK(diff.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(diff.error_message(),
             Catch::StartsWith("t1 task with different structure already exists. (Please register "
                               "a new version of the task):\n"));
  CHECK_THAT(diff.error_message(),
             Catch::Contains("/template/container/image:\n\t- "
                             "ghcr.io/flyteorg/flytekit:py3.11 \n\t+ other:image"));
  CHECK(peer.rpc(&S::CreateTask, task("t1", "v2", "other:image")).ok());

  fa::ObjectGetRequest get;
  *get.mutable_id() = ident(fc::TASK, "t1", "v1");
  fa::Task got;
  REQUIRE(peer.rpc(&S::GetTask, get, &got).ok());
  CHECK(got.closure().compiled_task().template_().container().image() ==
        "ghcr.io/flyteorg/flytekit:py3.11");
  CHECK(got.closure().compiled_task().template_().id().version() == "v1");
  CHECK(got.closure().has_created_at());

  *get.mutable_id() = ident(fc::TASK, "t1", "v9");
  auto nf = peer.rpc(&S::GetTask, get, &got);
  CHECK(nf.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(nf.error_message() ==
        "missing entity of type TASK with identifier project:\"flytesnacks\" "
        "domain:\"development\" name:\"t1\" version:\"v9\"");
}

TEST_CASE("emulator: CreateTask validates the identifier, project and template", "[emulator]") {
  Seeded peer;
  auto req = task("t", "v1");
  req.mutable_id()->clear_version();
  CHECK(peer.rpc(&S::CreateTask, req).error_message() == "missing version");
  req = task("t", "v1");
  req.mutable_id()->set_resource_type(fc::WORKFLOW);
  CHECK_THAT(peer.rpc(&S::CreateTask, req).error_message(),
             Catch::StartsWith("unexpected resource type workflow for identifier [") &&
                 Catch::EndsWith("], expected task instead"));
  req = task("t", "v1");
  req.mutable_id()->set_project("ghost");
  CHECK_THAT(peer.rpc(&S::CreateTask, req).error_message(),
             Catch::StartsWith("failed to validate that project [ghost] and domain [development]"));
  req = task("t", "v1");
  req.mutable_spec()->mutable_template_()->mutable_container()->clear_image();
  CHECK(peer.rpc(&S::CreateTask, req).error_message() == "missing image");
  req = task("t", "v1");
  req.clear_spec();
  CHECK(peer.rpc(&S::CreateTask, req).error_message() == "missing spec");
}

TEST_CASE("emulator: CreateWorkflow needs every referenced task, also inside branches",
          "[emulator]") {
  Seeded peer;
  const auto t1 = ident(fc::TASK, "t1", "v1");
  const auto t2 = ident(fc::TASK, "t2", "v1");
  auto req = workflow("wf", "v1", {t1});
  auto* branch = req.mutable_spec()->mutable_template_()->add_nodes();
  branch->set_id("b");
  // A case with its condition and an else (FlyteAdmin's compiler refuses a branch without
  // either).
  auto* if_else = branch->mutable_branch_node()->mutable_if_else();
  *if_else->mutable_case_()->mutable_then_node() = task_node("inner", t2);
  auto* cmp = if_else->mutable_case_()->mutable_condition()->mutable_comparison();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the constant FlyteAdmin compares
  cmp->mutable_left_value()->mutable_primitive()->set_integer(1);
  cmp->mutable_right_value()->mutable_primitive()->set_integer(1);
#pragma GCC diagnostic pop
  *if_else->mutable_else_node() = task_node("other", t2);

  auto st = peer.rpc(&S::CreateWorkflow, req);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(),
             Catch::StartsWith("failed to compile workflow for [resource_type:WORKFLOW "
                               "project:\"flytesnacks\"") &&
                 Catch::Contains("with err: missing entity of type TASK with identifier "
                                 "project:\"flytesnacks\" domain:\"development\" name:\"t1\""));
  REQUIRE(peer.rpc(&S::CreateTask, task("t1", "v1")).ok());
  CHECK_THAT(peer.rpc(&S::CreateWorkflow, req).error_message(), Catch::Contains("name:\"t2\""));
  REQUIRE(peer.rpc(&S::CreateTask, task("t2", "v1")).ok());
  REQUIRE(peer.rpc(&S::CreateWorkflow, req).ok());

  fa::ObjectGetRequest get;
  *get.mutable_id() = req.id();
  fa::Workflow wf;
  REQUIRE(peer.rpc(&S::GetWorkflow, get, &wf).ok());
  CHECK(wf.closure().compiled_workflow().tasks_size() == 2);
  CHECK(wf.closure().compiled_workflow().primary().template_().nodes_size() == 2);

  auto again = peer.rpc(&S::CreateWorkflow, req);
  CHECK(again.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  CHECK(again.error_message() == "workflow with identical structure already exists");
  CHECK_FALSE(again.error_details().empty());  // CreateWorkflowFailureReason, as FlyteAdmin
  req.mutable_spec()->mutable_template_()->mutable_nodes(0)->set_id("renamed");
  auto different = peer.rpc(&S::CreateWorkflow, req);
  CHECK(different.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(different.error_message(),
             Catch::StartsWith("wf workflow with different structure already exists."));

  // A sub-workflow reference must be shipped in spec.sub_workflows.
  auto sub = workflow("parent", "v1", {});
  auto* node = sub.mutable_spec()->mutable_template_()->add_nodes();
  node->set_id("s");
  *node->mutable_workflow_node()->mutable_sub_workflow_ref() = ident(fc::WORKFLOW, "child", "v1");
  CHECK_THAT(peer.rpc(&S::CreateWorkflow, sub).error_message(),
             Catch::Contains("WorkflowReferenceNotFound"));
  auto* child = sub.mutable_spec()->add_sub_workflows();
  *child->mutable_id() = ident(fc::WORKFLOW, "child", "v1");
  *child->add_nodes() = task_node("c", t1);
  auto* lp_node = child->add_nodes();  // referenced launch plans must be registered too
  lp_node->set_id("l");
  *lp_node->mutable_workflow_node()->mutable_launchplan_ref() = ident(fc::LAUNCH_PLAN, "lp", "v1");
  CHECK_THAT(peer.rpc(&S::CreateWorkflow, sub).error_message(),
             Catch::Contains("missing entity of type LAUNCH_PLAN with identifier"));
  REQUIRE(peer.rpc(&S::CreateLaunchPlan, launch_plan("lp", "v1", req.id())).ok());
  CHECK(peer.rpc(&S::CreateWorkflow, sub).ok());
}

TEST_CASE("emulator: CreateLaunchPlan needs its workflow, starts inactive and fills inputs",
          "[emulator]") {
  Seeded peer;
  const auto wf_id = ident(fc::WORKFLOW, "wf", "v1");
  auto st = peer.rpc(&S::CreateLaunchPlan, launch_plan("lp", "v1", wf_id));
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK_THAT(st.error_message(),
             Catch::StartsWith("missing entity of type WORKFLOW with identifier"));

  auto wf = workflow("wf", "v1", {});
  auto& inputs = *wf.mutable_spec()->mutable_template_()->mutable_interface()->mutable_inputs();
  (*inputs.mutable_variables())["x"].mutable_type()->set_simple(fc::INTEGER);
  (*inputs.mutable_variables())["y"].mutable_type()->set_simple(fc::STRING);
  REQUIRE(peer.rpc(&S::CreateWorkflow, wf).ok());

  auto lp = launch_plan("lp", "v1", wf_id);
  auto& fixed = (*lp.mutable_spec()->mutable_fixed_inputs()->mutable_literals())["y"];
  fixed.mutable_scalar()->mutable_primitive()->set_string_value("hi");
  REQUIRE(peer.rpc(&S::CreateLaunchPlan, lp).ok());
  CHECK(peer.rpc(&S::CreateLaunchPlan, lp).error_code() == grpc::StatusCode::ALREADY_EXISTS);

  fa::ObjectGetRequest get;
  *get.mutable_id() = lp.id();
  fa::LaunchPlan got;
  REQUIRE(peer.rpc(&S::GetLaunchPlan, get, &got).ok());
  CHECK(got.closure().state() == fa::INACTIVE);
  REQUIRE(got.spec().default_inputs().parameters().count("x") == 1);
  CHECK(got.spec().default_inputs().parameters().at("x").required());
  CHECK(got.spec().default_inputs().parameters().count("y") == 0);

  auto unknown = launch_plan("lp2", "v1", wf_id);
  (*unknown.mutable_spec()->mutable_fixed_inputs()->mutable_literals())["zzz"] = fixed;
  CHECK(peer.rpc(&S::CreateLaunchPlan, unknown).error_message() == "unexpected fixed_input zzz");

  auto changed = lp;
  changed.mutable_spec()->set_max_parallelism(7);
  CHECK_THAT(peer.rpc(&S::CreateLaunchPlan, changed).error_message(),
             Catch::StartsWith("lp launch plan with different structure already exists."));
}

TEST_CASE("emulator: activating a launch plan version deactivates the previous one", "[emulator]") {
  Seeded peer;
  const auto wf_id = ident(fc::WORKFLOW, "wf", "v1");
  REQUIRE(peer.rpc(&S::CreateWorkflow, workflow("wf", "v1", {})).ok());
  REQUIRE(peer.rpc(&S::CreateLaunchPlan, launch_plan("lp", "v1", wf_id)).ok());
  REQUIRE(peer.rpc(&S::CreateLaunchPlan, launch_plan("lp", "v2", wf_id)).ok());

  fa::ActiveLaunchPlanRequest active;
  active.mutable_id()->set_project("flytesnacks");
  active.mutable_id()->set_domain("development");
  active.mutable_id()->set_name("lp");
  fa::LaunchPlan got;
  auto none = peer.rpc(&S::GetActiveLaunchPlan, active, &got);
  CHECK(none.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(none.error_message() == "No active launch plan could be found: flytesnacks:development:lp");

  auto activate = [&](const std::string& version, fa::LaunchPlanState state) {
    fa::LaunchPlanUpdateRequest req;
    *req.mutable_id() = ident(fc::LAUNCH_PLAN, "lp", version);
    req.set_state(state);
    return peer.rpc(&S::UpdateLaunchPlan, req);
  };
  REQUIRE(activate("v1", fa::ACTIVE).ok());
  REQUIRE(peer.rpc(&S::GetActiveLaunchPlan, active, &got).ok());
  CHECK(got.id().version() == "v1");
  REQUIRE(activate("v2", fa::ACTIVE).ok());
  REQUIRE(activate("v2", fa::ACTIVE).ok());  // idempotent
  REQUIRE(peer.rpc(&S::GetActiveLaunchPlan, active, &got).ok());
  CHECK(got.id().version() == "v2");
  CHECK(got.closure().state() == fa::ACTIVE);

  fa::ObjectGetRequest get;
  *get.mutable_id() = ident(fc::LAUNCH_PLAN, "lp", "v1");
  REQUIRE(peer.rpc(&S::GetLaunchPlan, get, &got).ok());
  CHECK(got.closure().state() == fa::INACTIVE);

  fa::ActiveLaunchPlanListRequest list_req;
  list_req.set_project("flytesnacks");
  list_req.set_domain("development");
  list_req.set_limit(10);
  fa::LaunchPlanList list;
  REQUIRE(peer.rpc(&S::ListActiveLaunchPlans, list_req, &list).ok());
  REQUIRE(list.launch_plans_size() == 1);
  CHECK(list.launch_plans(0).id().version() == "v2");

  CHECK(activate("v9", fa::ACTIVE).error_code() == grpc::StatusCode::NOT_FOUND);
  REQUIRE(activate("v2", fa::INACTIVE).ok());
  CHECK(peer.rpc(&S::GetActiveLaunchPlan, active, &got).error_code() ==
        grpc::StatusCode::NOT_FOUND);
  fa::LaunchPlanUpdateRequest untyped;
  *untyped.mutable_id() = ident(fc::UNSPECIFIED, "lp", "v1");
  untyped.set_state(fa::INACTIVE);
  // rpc/adminservice fills in an UNSPECIFIED resource type before INACTIVE re-validates the
  // identifier; a wrong one is still refused.
  CHECK(peer.rpc(&S::UpdateLaunchPlan, untyped).ok());
  fa::LaunchPlanUpdateRequest mistyped = untyped;
  mistyped.mutable_id()->set_resource_type(fc::TASK);
  CHECK(peer.rpc(&S::UpdateLaunchPlan, mistyped).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  untyped.set_state(
      fa::ACTIVE);  // ACTIVE does not re-validate the identifier (flytectl relies on it)
  CHECK(peer.rpc(&S::UpdateLaunchPlan, untyped).ok());
}

TEST_CASE("emulator: lists page with limit and token and need a limit", "[emulator]") {
  Seeded peer;
  for (const char* name : {"a", "b", "c"}) {
    for (const char* version : {"v1", "v2"})
      REQUIRE(peer.rpc(&S::CreateTask, task(name, version)).ok());
  }
  fa::ResourceListRequest req;
  req.mutable_id()->set_project("flytesnacks");
  req.mutable_id()->set_domain("development");
  fa::TaskList tasks;
  CHECK(peer.rpc(&S::ListTasks, req, &tasks).error_message() == "invalid value for limit");
  req.set_limit(4);
  REQUIRE(peer.rpc(&S::ListTasks, req, &tasks).ok());
  CHECK(tasks.tasks_size() == 4);
  CHECK(tasks.token() == "4");
  req.set_token(tasks.token());
  tasks.Clear();
  REQUIRE(peer.rpc(&S::ListTasks, req, &tasks).ok());
  CHECK(tasks.tasks_size() == 2);
  CHECK(tasks.token().empty());

  req.set_token("");
  req.mutable_id()->set_name("b");
  req.set_filters("eq(version,v2)");
  tasks.Clear();
  REQUIRE(peer.rpc(&S::ListTasks, req, &tasks).ok());
  REQUIRE(tasks.tasks_size() == 1);
  CHECK(tasks.tasks(0).id().name() == "b");

  fa::NamedEntityIdentifierListRequest ids;
  ids.set_project("flytesnacks");
  ids.set_domain("development");
  ids.set_limit(10);
  ids.mutable_sort_by()->set_key("name");
  ids.mutable_sort_by()->set_direction(fa::Sort::DESCENDING);
  fa::NamedEntityIdentifierList names;
  REQUIRE(peer.rpc(&S::ListTaskIds, ids, &names).ok());
  REQUIRE(names.entities_size() == 3);
  CHECK(names.entities(0).name() == "c");
  CHECK(names.entities(2).name() == "a");
}

// A filter that is exactly eq(version,V) is read from the database at that version; any other
// filter row by row. Both give the same rows, order and pages, and an unknown field in a filter
// is still refused.
TEST_CASE("emulator: eq(version) lists the same rows and pages as filtering every row",
          "[emulator]") {
  Seeded peer;
  for (const char* version : {"v1", "v2", "v3"})
    for (const char* name : {"c", "a", "b"})
      REQUIRE(peer.rpc(&S::CreateTask, task(name, version)).ok());
  auto pages = [&](const std::string& filters) {
    fa::ResourceListRequest req;
    req.mutable_id()->set_project("flytesnacks");
    req.mutable_id()->set_domain("development");
    req.set_filters(filters);
    req.set_limit(2);
    std::vector<std::string> seen;
    for (int page = 0; page < 10; ++page) {
      fa::TaskList tasks;
      const auto st = peer.rpc(&S::ListTasks, req, &tasks);
      INFO(st.error_message());
      REQUIRE(st.ok());
      for (const auto& t : tasks.tasks()) seen.push_back(t.id().name() + "@" + t.id().version());
      seen.push_back("token " + tasks.token());
      if (tasks.token().empty()) break;
      req.set_token(tasks.token());
    }
    return seen;
  };
  const auto fast = pages("eq(version,v2)");
  CHECK(fast == std::vector<std::string>{"c@v2", "a@v2", "token 2", "b@v2", "token "});
  CHECK(pages("eq(version,v2)+neq(name,zzz)") == fast);  // evaluated row by row
  CHECK(pages("eq(task.version,v2)") == fast);
  CHECK(pages("eq(version,v9)") == std::vector<std::string>{"token "});
  fa::ResourceListRequest bad;
  bad.mutable_id()->set_project("flytesnacks");
  bad.mutable_id()->set_domain("development");
  bad.set_limit(2);
  bad.set_filters("eq(version,v2)+eq(colour,red)");
  fa::TaskList none;
  CHECK(peer.rpc(&S::ListTasks, bad, &none).error_message() == "invalid filter field: colour");
}

// ---------------------------------------------------------------------------------------------
// Persistence

TEST_CASE("emulator: state persists across a restart on the same database file", "[emulator]") {
  const auto db = temp_path("admin.db");
  Options o;
  o.db_path = db;
  {
    Seeded peer(o);
    REQUIRE(set_domain_attrs(peer, "flytesnacks", "development", task_resources("2")).ok());
    REQUIRE(peer.rpc(&S::CreateTask, task("t1", "v1")).ok());
  }
  Peer again(o);
  CHECK(register_project(again, "flytesnacks").error_code() == grpc::StatusCode::ALREADY_EXISTS);
  CHECK(list_attrs(again, fa::TASK_RESOURCE).configurations_size() == 1);
  CHECK(again.rpc(&S::CreateTask, task("t1", "v1")).error_code() ==
        grpc::StatusCode::ALREADY_EXISTS);
  again.emu->shutdown();
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
}

TEST_CASE("emulator: committed writes survive a crash (database files copied while running)",
          "[emulator]") {
  const auto db = temp_path("admin.db");
  const auto crashed = temp_path("crashed.db");
  Options o;
  o.db_path = db;
  Seeded peer(o);
  REQUIRE(set_project_attrs(peer, "flytesnacks", queue("q1")).ok());
  REQUIRE(peer.rpc(&S::CreateTask, task("t1", "v1")).ok());
  // What a SIGKILL leaves behind: the main file and the WAL, never checkpointed or closed.
  REQUIRE(std::filesystem::exists(db + "-wal"));
  std::filesystem::copy_file(db, crashed);
  std::filesystem::copy_file(db + "-wal", crashed + "-wal");

  Options r;
  r.db_path = crashed;
  Peer recovered(r);
  auto rows = list_attrs(recovered, fa::EXECUTION_QUEUE);
  REQUIRE(rows.configurations_size() == 1);
  CHECK(rows.configurations(0).attributes().execution_queue_attributes().tags(0) == "q1");
  fa::ObjectGetRequest get;
  *get.mutable_id() = ident(fc::TASK, "t1", "v1");
  CHECK(recovered.rpc(&S::GetTask, get).ok());
  recovered.emu->shutdown();
  peer.emu->shutdown();
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
  std::filesystem::remove_all(std::filesystem::path(crashed).parent_path());
}

// ---------------------------------------------------------------------------------------------
// Fault injection

TEST_CASE("emulator: a fault with rate 1 fails every matching call with its code", "[emulator]") {
  Options o;
  auto rule = parse_fault("UpdateProjectAttributes:rate=1,code=UNAVAILABLE");
  REQUIRE(rule);
  o.faults = {*rule};
  Seeded peer(o);
  auto st = set_project_attrs(peer, "flytesnacks", queue("q"));
  CHECK(st.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(list_attrs(peer, fa::EXECUTION_QUEUE).configurations_size() == 0);  // not applied
  CHECK(peer.emu->calls("UpdateProjectAttributes") == 1);

  // "writes" matches Create*/Update*/Delete*/Register*, not reads; rules change at runtime.
  peer.emu->set_faults({FaultRule{"writes", 1.0, "INTERNAL", 0, -1, false}});
  CHECK(peer.rpc(&S::CreateTask, task("t", "v1")).error_code() == grpc::StatusCode::INTERNAL);
  CHECK(register_project(peer, "x").error_code() == grpc::StatusCode::INTERNAL);
  CHECK(peer.rpc(&S::GetVersion, fa::GetVersionRequest{}).ok());
  peer.emu->set_faults({});
  CHECK(peer.rpc(&S::CreateTask, task("t", "v1")).ok());
}

TEST_CASE("emulator: fault latency is observed by the client", "[emulator]") {
  Options o;
  o.faults = {*parse_fault("GetVersion:latency=300ms")};
  Peer peer(o);
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(peer.rpc(&S::GetVersion, fa::GetVersionRequest{}).ok());
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(300));
}

TEST_CASE("emulator: after=N lets N calls through and fails the rest", "[emulator]") {
  Options o;
  o.faults = {*parse_fault("CreateTask:after=2,code=RESOURCE_EXHAUSTED")};
  Seeded peer(o);
  CHECK(peer.rpc(&S::CreateTask, task("a", "v1")).ok());
  CHECK(peer.rpc(&S::CreateTask, task("b", "v1")).ok());
  CHECK(peer.rpc(&S::CreateTask, task("c", "v1")).error_code() ==
        grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(peer.rpc(&S::CreateTask, task("d", "v1")).error_code() ==
        grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(peer.emu->calls("CreateTask") == 4);
}

TEST_CASE("emulator: a fractional rate is deterministic for a seed", "[emulator]") {
  auto outcomes = [](uint64_t seed) {
    Options o;
    o.seed = seed;
    o.faults = {*parse_fault("GetVersion:rate=0.5")};
    Peer peer(o);
    std::string seen;
    for (int i = 0; i < 40; ++i)
      seen += peer.rpc(&S::GetVersion, fa::GetVersionRequest{}).ok() ? '.' : 'x';
    return seen;
  };
  const auto a = outcomes(7);
  CHECK(a == outcomes(7));
  CHECK(a.find('x') != std::string::npos);
  CHECK(a.find('.') != std::string::npos);
}

TEST_CASE("emulator: drop=true applies the write but loses the response", "[emulator]") {
  Options o;
  o.faults = {*parse_fault("UpdateProjectDomainAttributes:rate=1,drop=true")};
  Seeded peer(o);
  CHECK(set_domain_attrs(peer, "flytesnacks", "development", queue("q")).error_code() ==
        grpc::StatusCode::UNAVAILABLE);
  CHECK(list_attrs(peer, fa::EXECUTION_QUEUE).configurations_size() == 1);
}

// ---------------------------------------------------------------------------------------------
// DataProxy uploads

namespace {

size_t ignore_body(char*, size_t size, size_t n, void*) { return size * n; }

struct Body {
  const std::string* data;
  size_t pos = 0;
};

size_t read_body(char* out, size_t size, size_t n, void* user) {
  auto* b = static_cast<Body*>(user);
  const size_t len = std::min(size * n, b->data->size() - b->pos);
  b->data->copy(out, len, b->pos);
  b->pos += len;
  return len;
}

int on_curl_debug(CURL*, curl_infotype type, char* data, size_t size, void* user) {
  if (type == CURLINFO_HEADER_IN &&
      std::string_view(data, size).starts_with("HTTP/1.1 100 Continue")) {
    *static_cast<bool*>(user) = true;
  }
  return 0;
}

// PUT with curl, as a real client does. Returns the status; `continued` tells whether the
// server answered curl's `Expect: 100-continue` (curl sends it for large bodies).
long http_put(const std::string& url, const std::string& body, const std::string& content_md5,
              bool* continued = nullptr) {
  CURL* curl = curl_easy_init();
  REQUIRE(curl != nullptr);
  Body b{&body};
  curl_slist* headers = nullptr;
  if (!content_md5.empty())
    headers = curl_slist_append(headers, ("Content-MD5: " + content_md5).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_body);
  curl_easy_setopt(curl, CURLOPT_READDATA, &b);
  curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, ignore_body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  bool saw_continue = false;
  curl_easy_setopt(curl, CURLOPT_DEBUGFUNCTION, on_curl_debug);
  curl_easy_setopt(curl, CURLOPT_DEBUGDATA, &saw_continue);
  curl_easy_setopt(curl, CURLOPT_VERBOSE, 1L);  // needed for the debug callback; prints nothing
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  REQUIRE(rc == CURLE_OK);
  if (continued) *continued = saw_continue;
  return status;
}

// 16 raw bytes from 32 hex chars.
std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace

TEST_CASE("emulator: CreateUploadLocation names content-addressed locations like FlyteAdmin",
          "[emulator]") {
  Peer peer;
  fs::CreateUploadLocationRequest req;
  fs::CreateUploadLocationResponse out;
  auto st = Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "project and domain are required parameters");
  req.set_project("flytesnacks");
  req.set_domain("development");
  req.set_filename("fastf5f1.tar.gz");
  st = Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &out);
  CHECK(st.error_message() == "content_md5 or filename_root is a required parameter");

  // The reference's example: md5 aa0c31cc… => prefix VIGDDTFJJNH2HSQJLHG4GFF7U4======.
  req.set_content_md5(unhex("aa0c31cca94b4fa3ca0959cdc314bfa7"));
  REQUIRE(
      Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &out).ok());
  CHECK(out.native_url() ==
        "s3://flytecd-emulator/flytesnacks/development/VIGDDTFJJNH2HSQJLHG4GFF7U4======/"
        "fastf5f1.tar.gz");
  CHECK_THAT(out.signed_url(),
             Catch::StartsWith(peer.emu->upload_base_url() + "/upload/flytesnacks/"));
  CHECK(out.headers().at("Content-MD5") == "qgwxzKlLT6PKCVnNwxS/pw==");
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  CHECK(out.expires_at().seconds() > now + 3500);
  CHECK(out.expires_at().seconds() <= now + 3601);

  req.mutable_expires_in()->set_seconds(7200);
  st = Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_CASE("emulator: the signed URL accepts a PUT only with a matching Content-MD5", "[emulator]") {
  Peer peer;
  // Large enough for curl to send `Expect: 100-continue`.
  std::string body(size_t{2} * 1024 * 1024, 'x');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
  fs::CreateUploadLocationRequest req;
  req.set_project("flytesnacks");
  req.set_domain("development");
  req.set_filename("source.tar");
  req.set_filename_root("root1");
  fs::CreateUploadLocationResponse loc;
  REQUIRE(
      Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &loc).ok());
  CHECK(loc.native_url() == "s3://flytecd-emulator/flytesnacks/development/root1/source.tar");

  CHECK(http_put(loc.signed_url(), body, "") == 400);  // header required
  bool continued = false;
  CHECK(http_put(loc.signed_url(), body, "qgwxzKlLT6PKCVnNwxS/pw==", &continued) ==
        400);  // BadDigest
  CHECK(continued);
  CHECK_FALSE(peer.emu->uploaded(loc.native_url()));
  CHECK(http_put(peer.emu->upload_base_url() + "/upload/flytesnacks/development/x/y", body,
                 "qgwxzKlLT6PKCVnNwxS/pw==") == 403);  // never issued

  // With the right MD5 (from a tiny body whose digest we know) the bytes are stored.
  const std::string hello = "hello\n";  // md5 b1946ac92492d2347c6235b4d2611184
  const std::string md5_b64 = "sZRqySSS0jR8YjW00mERhA==";
  CHECK(http_put(loc.signed_url(), hello, md5_b64) == 200);
  CHECK(peer.emu->uploaded(loc.native_url()) == hello);

  // A content-addressed location pins the MD5 it was signed for.
  fs::CreateUploadLocationRequest pinned;
  pinned.set_project("flytesnacks");
  pinned.set_domain("development");
  pinned.set_filename("hello.txt");
  pinned.set_content_md5(unhex("b1946ac92492d2347c6235b4d2611184"));
  REQUIRE(Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, pinned, &loc)
              .ok());
  CHECK(http_put(loc.signed_url(), hello, "qgwxzKlLT6PKCVnNwxS/pw==") ==
        403);                                               // not the signed MD5
  CHECK(http_put(loc.signed_url(), body, md5_b64) == 400);  // signed MD5, other bytes: BadDigest
  CHECK(http_put(loc.signed_url(), hello, md5_b64) == 200);

  // A caller-chosen location that already holds different content cannot be re-issued.
  req.set_content_md5(unhex("00000000000000000000000000000000"));
  auto st = Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &loc);
  CHECK(st.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  req.set_content_md5(unhex("b1946ac92492d2347c6235b4d2611184"));
  CHECK(Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &loc).ok());
}

// ---------------------------------------------------------------------------------------------
// Standalone mode

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

TEST_CASE("emulator: run_standalone serves until SIGTERM and exits 0", "[emulator]") {
  Options o;
  o.listen = "127.0.0.1:" + std::to_string(free_port());
  std::atomic<int> rc{-1};
  std::thread server([&] { rc = run_standalone(o); });

  auto stub =
      fs::AdminService::NewStub(grpc::CreateChannel(o.listen, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_wait_for_ready(true);  // bounded wait for the server to come up, no sleeps
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  fa::GetVersionResponse version;
  const bool up = stub->GetVersion(&ctx, fa::GetVersionRequest{}, &version).ok();
  CHECK(up);
  CHECK(version.control_plane_version().build() == "flytecd-emulator");
  // SIGTERM is blocked in that thread (and the servers it started) and taken by sigwait().
  if (up)
    pthread_kill(server.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
  server.join();
  CHECK(rc == (up ? 0 : 1));
}

// ---------------------------------------------------------------------------------------------
// Task resources: flyteadmin/pkg/manager/impl/validation/task_validator.go

namespace {

using ResourceList = std::vector<std::pair<fc::Resources::ResourceName, std::string>>;

fa::TaskCreateRequest task_with_resources(const std::string& name, const ResourceList& requests,
                                          const ResourceList& limits) {
  auto req = task(name, "v1");
  auto* res = req.mutable_spec()->mutable_template_()->mutable_container()->mutable_resources();
  for (const auto& [n, v] : requests) {
    auto* e = res->add_requests();
    e->set_name(n);
    e->set_value(v);
  }
  for (const auto& [n, v] : limits) {
    auto* e = res->add_limits();
    e->set_name(n);
    e->set_value(v);
  }
  return req;
}

grpc::Status create(Peer& peer, const fa::TaskCreateRequest& req) {
  return peer.rpc(&S::CreateTask, req);
}

constexpr auto CPU = fc::Resources::CPU;
constexpr auto GPU = fc::Resources::GPU;
constexpr auto MEMORY = fc::Resources::MEMORY;

const char* const k_contact =
    ". Please contact Flyte Admins to change these limits or consult the configuration";

}  // namespace

// task_validator.go validateResource: the platform limits (default config: cpu 2, memory 1Gi,
// gpu 1) bound requests; a limit is only checked when its resource is also requested.
TEST_CASE("emulator: task requests are checked against the platform limits, a lone limit is not",
          "[emulator][task_resources]") {
  Seeded peer;
  CHECK(create(peer, task_with_resources("lone_limit", {}, {{MEMORY, "8Gi"}, {CPU, "16"}})).ok());
  auto st = create(peer, task_with_resources("big_request", {{MEMORY, "2Gi"}}, {}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        std::string("Requested MEMORY default [2Gi] is greater than current limit set in the "
                    "platform configuration [1Gi]") +
            k_contact);
  st = create(peer, task_with_resources("limit_over", {{MEMORY, "512Mi"}}, {{MEMORY, "2048Mi"}}));
  CHECK(st.error_message() ==
        std::string("Requested MEMORY limit [2Gi] is greater than current limit set in the "
                    "platform configuration [1Gi]") +
            k_contact);
}

// validateResource compares Quantity.Value() (rounded up to an integer) and prints
// Quantity.String() (the canonical form).
TEST_CASE("emulator: task resources compare rounded-up integer values and print canonical forms",
          "[emulator][task_resources]") {
  Seeded peer;
  // 500m and 200m both round up to 1: FlyteAdmin accepts a request above its limit here.
  CHECK(create(peer, task_with_resources("milli", {{CPU, "500m"}}, {{CPU, "200m"}})).ok());
  // 2.5 rounds up to 3 > 2: refused although 2.1 would too; 1.5 (-> 2) is not above 2.
  CHECK(create(peer, task_with_resources("ok_cpu", {{CPU, "1.5"}}, {})).ok());
  auto st = create(peer, task_with_resources("over_cpu", {{CPU, "2.1"}}, {}));
  CHECK(st.error_message() ==
        std::string("Requested CPU default [2100m] is greater than current limit set in the "
                    "platform configuration [2]") +
            k_contact);
  st = create(peer, task_with_resources("req_gt_lim", {{CPU, "1.5"}}, {{CPU, "0.5"}}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "Requested CPU default [1500m] is greater than the limit [500m]. Please fix your "
        "configuration");
}

// requestedResourcesToQuantity / addResourceEntryToMap / isWholeNumber, and validateResource's
// GPU case.
TEST_CASE(
    "emulator: GPU must be whole and its request equal its limit, duplicates and bad "
    "quantities are refused",
    "[emulator][task_resources]") {
  Seeded peer;
  const std::string id_text =
      "resource_type:TASK project:\"flytesnacks\" domain:\"development\" name:\"%\" "
      "version:\"v1\"";
  auto with_name = [&](const std::string& n) {
    std::string s = id_text;
    return s.replace(s.find('%'), 1, n);
  };
  auto st = create(peer, task_with_resources("half_gpu", {{GPU, "0.5"}}, {}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "gpu for [" + with_name("half_gpu") + "] must be a whole number, got: 0.5 instead");
  st = create(peer, task_with_resources("gpu_neq", {{GPU, "1"}}, {{GPU, "2"}}));
  CHECK(st.error_message() ==
        "For extended resource 'gpu' the default value must equal the limit value for task [" +
            with_name("gpu_neq") + "]");
  st = create(peer, task_with_resources("gpu_big", {{GPU, "2"}}, {{GPU, "2"}}));
  CHECK(st.error_message() ==
        std::string("Requested GPU default [2] is greater than current limit set in the platform "
                    "configuration [1]") +
            k_contact);
  CHECK(create(peer, task_with_resources("gpu_ok", {{GPU, "1"}}, {{GPU, "1"}})).ok());

  st = create(peer, task_with_resources("dup", {{CPU, "1"}, {CPU, "1"}}, {}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "can't specify CPU limit for task [" + with_name("dup") + "] multiple times");
  st = create(peer, task_with_resources("bad_q", {}, {{MEMORY, "4x"}}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "Parsing of MEMORY request failed for value 4x - reason  quantities must match the "
        "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'. Please follow K8s "
        "conventions for resources "
        "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/");
}

// validateK8sPod: every container of the pod spec, with Kubernetes resource names.
TEST_CASE("emulator: every container of a pod task is checked against the platform limits",
          "[emulator][task_resources]") {
  Seeded peer;
  auto pod_task = [](const std::string& name, const std::string& second_cpu) {
    auto req = task(name, "v1");
    auto* t = req.mutable_spec()->mutable_template_();
    t->clear_container();
    t->set_type("sidecar");
    auto* spec = t->mutable_k8s_pod()->mutable_pod_spec();
    auto* containers = (*spec->mutable_fields())["containers"].mutable_list_value();
    for (const std::string& cpu : {std::string("1"), second_cpu}) {
      auto* c = containers->add_values()->mutable_struct_value();
      (*c->mutable_fields())["name"].set_string_value("c");
      auto* res = (*c->mutable_fields())["resources"].mutable_struct_value();
      auto* requests = (*res->mutable_fields())["requests"].mutable_struct_value();
      (*requests->mutable_fields())["cpu"].set_string_value(cpu);
      (*requests->mutable_fields())["ephemeral-storage"].set_string_value("1Gi");
    }
    return req;
  };
  CHECK(create(peer, pod_task("pod_ok", "2")).ok());
  auto st = create(peer, pod_task("pod_big", "3"));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        std::string("Requested CPU default [3] is greater than current limit set in the platform "
                    "configuration [2]") +
            k_contact);
}

// flyteadmin/pkg/manager/impl/workflow_manager.go GetWorkflow and launch_plan_manager.go
// GetLaunchPlan return validation.go ValidateIdentifier's error; task_manager.go GetTask only
// logs it and lets the lookup decide.
TEST_CASE(
    "emulator: GetWorkflow and GetLaunchPlan refuse an invalid identifier, GetTask looks "
    "it up anyway",
    "[emulator]") {
  Seeded peer;
  REQUIRE(peer.rpc(&S::CreateTask, task("t1", "v1")).ok());
  auto wf = workflow("wf", "v1", {ident(fc::TASK, "t1", "v1")});
  REQUIRE(peer.rpc(&S::CreateWorkflow, wf).ok());
  REQUIRE(peer.rpc(&S::CreateLaunchPlan, launch_plan("wf", "v1", wf.id())).ok());

  fa::ObjectGetRequest get;
  *get.mutable_id() = ident(fc::TASK, "wf", "v1");  // wrong resource type
  fa::Workflow w;
  auto st = peer.rpc(&S::GetWorkflow, get, &w);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "unexpected resource type task for identifier [resource_type:TASK "
        "project:\"flytesnacks\" domain:\"development\" name:\"wf\" version:\"v1\"], expected "
        "workflow instead");
  get.mutable_id()->set_resource_type(fc::WORKFLOW);
  get.mutable_id()->clear_version();
  st = peer.rpc(&S::GetWorkflow, get, &w);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "missing version");

  fa::ObjectGetRequest get_lp;
  *get_lp.mutable_id() = ident(fc::WORKFLOW, "wf", "v1");
  fa::LaunchPlan lp;
  st = peer.rpc(&S::GetLaunchPlan, get_lp, &lp);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::StartsWith("unexpected resource type workflow"));
  CHECK(peer.rpc(&S::GetLaunchPlan, fa::ObjectGetRequest{}, &lp).error_message() == "missing id");

  // GetTask: an unset resource type is only logged; the row is found by the other fields.
  fa::ObjectGetRequest get_task;
  *get_task.mutable_id() = ident(fc::TASK, "t1", "v1");
  get_task.mutable_id()->set_resource_type(fc::UNSPECIFIED);
  fa::Task t;
  CHECK(peer.rpc(&S::GetTask, get_task, &t).ok());
}

}  // namespace FLYTECD_UNITY_ID
