// The FlyteAdmin emulator, exercised over real gRPC on 127.0.0.1:0: fault specs, version and
// projects, matchable attributes.

#include <catch2/catch.hpp>

#include "tests/unit/sinks/emulator/emulator_test_support.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace emulator_test;
using flytecd::sinks::emulator::parse_fault;
using flytecd::sinks::emulator::parse_faults;

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

}  // namespace FLYTECD_UNITY_ID
