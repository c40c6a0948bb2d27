// The emulator fails where FlyteAdmin 1.x fails, with its code and message: launch plans,
// project reads and the project-domain plugin-override merge. Each test names the upstream
// file and function (flyteorg/flyte, flyteadmin/...) it follows. Real gRPC on 127.0.0.1:0.

#include <google/protobuf/any.pb.h>
#include <google/protobuf/unknown_field_set.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/unit/sinks/emulator/emulator_peer.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

using namespace flytecd::tests::emulator;
using S = AdminStub;

fc::LiteralType simple(fc::SimpleType t) {
  fc::LiteralType lt;
  lt.set_simple(t);
  return lt;
}

fc::Literal int_literal(int64_t v) {
  fc::Literal l;
  l.mutable_scalar()->mutable_primitive()->set_integer(v);
  return l;
}

fc::Literal string_literal(const std::string& v) {
  fc::Literal l;
  l.mutable_scalar()->mutable_primitive()->set_string_value(v);
  return l;
}

fc::Identifier ident(fc::ResourceType type, const std::string& name) {
  fc::Identifier id;
  id.set_resource_type(type);
  id.set_project("flytesnacks");
  id.set_domain("development");
  id.set_name(name);
  id.set_version("v1");
  return id;
}

// flytesnacks with a task and a workflow "wf" whose interface has inputs `inputs`.
struct LaunchPlanPeer : EmulatorPeer {
  explicit LaunchPlanPeer(const std::vector<std::pair<std::string, fc::LiteralType>>& inputs) {
    REQUIRE(register_project("flytesnacks").ok());
    fa::TaskCreateRequest task;
    *task.mutable_id() = ident(fc::TASK, "t1");
    auto* t = task.mutable_spec()->mutable_template_();
    *t->mutable_id() = task.id();
    t->set_type("python-task");
    t->mutable_interface();
    t->mutable_metadata()->mutable_runtime()->set_version("1.10.0");
    t->mutable_container()->set_image("ghcr.io/flyteorg/flytekit:py3.11");
    t->mutable_container()->add_args("pyflyte-execute");
    REQUIRE(rpc(&S::CreateTask, task).error_message() == "");
    fa::WorkflowCreateRequest wf;
    *wf.mutable_id() = ident(fc::WORKFLOW, "wf");
    auto* w = wf.mutable_spec()->mutable_template_();
    *w->mutable_id() = wf.id();
    for (const auto& [name, type] : inputs) {
      *(*w->mutable_interface()->mutable_inputs()->mutable_variables())[name].mutable_type() = type;
    }
    auto* node = w->add_nodes();
    node->set_id("n0");
    *node->mutable_task_node()->mutable_reference_id() = task.id();
    auto st = rpc(&S::CreateWorkflow, wf);
    REQUIRE(st.error_message() == "");
  }

  fa::LaunchPlanCreateRequest lp(const std::string& version = "v1") {
    fa::LaunchPlanCreateRequest req;
    *req.mutable_id() = ident(fc::LAUNCH_PLAN, "lp");
    req.mutable_id()->set_version(version);
    *req.mutable_spec()->mutable_workflow_id() = ident(fc::WORKFLOW, "wf");
    return req;
  }
  grpc::Status create(const fa::LaunchPlanCreateRequest& req) {
    return rpc(&S::CreateLaunchPlan, req);
  }
};

fc::Parameter with_default(const fc::LiteralType& type, const fc::Literal& value) {
  fc::Parameter p;
  *p.mutable_var()->mutable_type() = type;
  *p.mutable_default_() = value;
  return p;
}

void set_default(fa::LaunchPlanCreateRequest& req, const std::string& name, fc::Parameter p) {
  (*req.mutable_spec()->mutable_default_inputs()->mutable_parameters())[name] = std::move(p);
}

void set_fixed(fa::LaunchPlanCreateRequest& req, const std::string& name, fc::Literal l) {
  (*req.mutable_spec()->mutable_fixed_inputs()->mutable_literals())[name] = std::move(l);
}

}  // namespace

// launch_plan_validator.go checkAndFetchExpectedInputForLaunchPlan, with
// flytepropeller/pkg/compiler/validators/typing.go AreTypesCastable and utils.go
// LiteralTypeForLiteral.
TEST_CASE("emulator fidelity: launch-plan inputs must be castable to the workflow interface",
          "[emulator][fidelity]") {
  fc::LiteralType maybe_int;  // union of INTEGER and NONE (Optional[int])
  *maybe_int.mutable_union_type()->add_variants() = simple(fc::INTEGER);
  *maybe_int.mutable_union_type()->add_variants() = simple(fc::NONE);
  fc::LiteralType color;
  color.mutable_enum_type()->add_values("red");
  LaunchPlanPeer peer(
      {{"n", simple(fc::INTEGER)}, {"s", simple(fc::STRING)}, {"o", maybe_int}, {"c", color}});

  auto req = peer.lp();
  set_default(req, "n", with_default(simple(fc::STRING), string_literal("x")));
  auto st = peer.create(req);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  // As upstream: the launch plan's type is printed as "expected", the workflow's as "got".
  CHECK(st.error_message() ==
        "invalid default_input wrong type n, expected simple:STRING, got simple:INTEGER instead");

  req = peer.lp();
  set_fixed(req, "s", int_literal(3));
  st = peer.create(req);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "invalid fixed_input wrong type s, expected simple:STRING, got simple:INTEGER instead");

  // Castable: INTEGER into Optional[int] (one variant matches), a string into an enum.
  req = peer.lp();
  set_fixed(req, "o", int_literal(1));
  set_fixed(req, "c", string_literal("red"));
  set_default(req, "n", with_default(simple(fc::INTEGER), int_literal(2)));
  set_default(req, "s", with_default(simple(fc::STRING), string_literal("y")));
  CHECK(peer.create(req).error_message() == "");

  // A collection literal of mixed types is a collection of a union: not castable to [int].
  LaunchPlanPeer lists({{"xs", [] {
                           fc::LiteralType t;
                           *t.mutable_collection_type() = simple(fc::INTEGER);
                           return t;
                         }()}});
  req = lists.lp();
  fc::Literal mixed;
  *mixed.mutable_collection()->add_literals() = int_literal(1);
  *mixed.mutable_collection()->add_literals() = string_literal("a");
  set_fixed(req, "xs", mixed);
  st = lists.create(req);
  CHECK(st.error_message() ==
        "invalid fixed_input wrong type xs, expected collection_type:{simple:INTEGER}, got "
        "collection_type:{union_type:{variants:{simple:INTEGER} variants:{simple:STRING}}} "
        "instead");
  // An empty collection matches any collection.
  req = lists.lp("v2");
  fc::Literal empty;
  empty.mutable_collection();
  set_fixed(req, "xs", empty);
  CHECK(lists.create(req).error_message() == "");
}

// validation.go validateParameterMap (via validateParameterMapDisableArtifacts) and
// validateLiteralMap, called by launch_plan_validator.go ValidateLaunchPlan before the inputs
// are matched to the workflow.
TEST_CASE("emulator fidelity: default and fixed inputs are validated as literals",
          "[emulator][fidelity]") {
  LaunchPlanPeer peer({{"n", simple(fc::INTEGER)}, {"t", simple(fc::DATETIME)}});

  auto req = peer.lp();
  fc::Parameter neither;
  *neither.mutable_var()->mutable_type() = simple(fc::INTEGER);
  set_default(req, "n", neither);
  auto st = peer.create(req);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "Invalid variable n in default_inputs - variable has neither default, nor is required. "
        "One must be specified");

  req = peer.lp();
  fc::Parameter untyped;
  untyped.set_required(true);
  set_default(req, "n", untyped);
  CHECK(peer.create(req).error_message() ==
        "The Variable component of the Parameter n in default_inputs either is missing, or has a "
        "missing Type");

  // The default's own type must be castable to the parameter's declared type.
  req = peer.lp();
  set_default(req, "n", with_default(simple(fc::INTEGER), string_literal("x")));
  CHECK(peer.create(req).error_message() ==
        "Type mismatch for Parameter n in default_inputs has type simple:INTEGER, expected "
        "simple:STRING");

  // A blob without metadata has no literal type.
  req = peer.lp();
  fc::Literal blob;
  blob.mutable_scalar()->mutable_blob()->set_uri("s3://b/k");
  set_default(req, "n", with_default(simple(fc::INTEGER), blob));
  CHECK(peer.create(req).error_message() ==
        "Failed to validate literal type for [n] with err: got unknown literal type: [<nil>].\n"
        "Suggested solution: Please update all your Flyte deployment images to the latest "
        "version and try again");

  req = peer.lp();
  set_fixed(req, "n", fc::Literal{});
  CHECK(peer.create(req).error_message() == "missing valid literal in fixed_inputs n");

  // ValidateDatetime: timestamppb's CheckValid.
  req = peer.lp();
  fc::Literal late;
  late.mutable_scalar()->mutable_primitive()->mutable_datetime()->set_seconds(253402300800LL);
  set_fixed(req, "t", late);
  CHECK(peer.create(req).error_message() == "timestamp (seconds:253402300800) after 9999-12-31");

  req = peer.lp();
  fc::Parameter query;
  *query.mutable_var()->mutable_type() = simple(fc::INTEGER);
  query.mutable_artifact_query();
  set_default(req, "n", query);
  CHECK(peer.create(req).error_message() ==
        "artifact mode not enabled but query found default_inputs n");
}

// validation.go validateLabels (k8s.io/apimachinery validation.IsQualifiedName and
// IsValidLabelValue) and notifications_validator.go validateNotifications, from
// ValidateLaunchPlan.
TEST_CASE("emulator fidelity: launch-plan labels and notifications are validated",
          "[emulator][fidelity]") {
  LaunchPlanPeer peer({});
  auto req = peer.lp();
  (*req.mutable_spec()->mutable_labels()->mutable_values())["team name"] = "x";
  auto st = peer.create(req);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "invalid label key [team name]: [name part must consist of alphanumeric characters, '-', "
        "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
        "'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]");
  req = peer.lp();
  (*req.mutable_spec()->mutable_labels()->mutable_values())["team"] = "-x";
  CHECK(peer.create(req).error_message() ==
        "invalid label value [-x]: [a valid label must be an empty string or consist of "
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]");

  auto notify = [&](const std::function<void(fa::Notification*)>& fill) {
    auto r = peer.lp();
    fill(r.mutable_spec()->mutable_entity_metadata()->add_notifications());
    return peer.create(r).error_message();
  };
  CHECK(notify([](fa::Notification* n) { n->add_phases(fc::WorkflowExecution::FAILED); }) ==
        "invalid value for notification type");
  CHECK(notify([](fa::Notification* n) { n->mutable_slack(); }) == "missing recipients");
  CHECK(notify([](fa::Notification* n) { n->mutable_email()->add_recipients_email(""); }) ==
        "missing recipient");
  CHECK(notify([](fa::Notification* n) {
          n->mutable_pager_duty()->add_recipients_email("oncall");
          n->add_phases(fc::WorkflowExecution::RUNNING);
        }) == "invalid value for phase");
  CHECK(notify([](fa::Notification* n) {
          n->mutable_email()->add_recipients_email("a@b.c");
          n->add_phases(fc::WorkflowExecution::SUCCEEDED);
        }) == "");
}

// launch_plan_validator.go validateSchedule (github.com/robfig/cron/v3 ParseStandard).
TEST_CASE("emulator fidelity: schedules are checked only when set, cron text must parse",
          "[emulator][fidelity]") {
  LaunchPlanPeer peer({{"n", simple(fc::INTEGER)}});
  int version = 0;
  auto with_cron = [&](const std::string& cron) {
    auto r = peer.lp("v" + std::to_string(++version));
    set_fixed(r, "n", int_literal(1));
    r.mutable_spec()
        ->mutable_entity_metadata()
        ->mutable_schedule()
        ->mutable_cron_schedule()
        ->set_schedule(cron);
    return peer.create(r).error_message();
  };
  CHECK(with_cron("* * * * * *") ==
        "Invalid cron expression: expected exactly 5 fields, found 6: [* * * * * *]");
  CHECK(with_cron("0 25 * * *") ==
        "Invalid cron expression: end of range (25) above maximum (23): 25");
  CHECK(with_cron("x * * * *") ==
        "Invalid cron expression: failed to parse int from x: strconv.Atoi: parsing \"x\": "
        "invalid syntax");
  CHECK(with_cron("@every 1y") ==
        "Invalid cron expression: failed to parse duration @every 1y: time: unknown unit \"y\" "
        "in duration \"1y\"");
  CHECK(with_cron("@fortnightly") ==
        "Invalid cron expression: unrecognized descriptor: @fortnightly");
  CHECK(with_cron("0 9 * * MON-FRI") == "");
  CHECK(with_cron("*/15 0-6,22 1 jan,Jul ?") == "");
  CHECK(with_cron("@every 1h30m") == "");
  CHECK(with_cron("CRON_TZ=UTC 0 0 * * *") == "");

  // The deprecated cron_expression is parsed too.
  auto r = peer.lp("v100");
  set_fixed(r, "n", int_literal(1));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  r.mutable_spec()->mutable_entity_metadata()->mutable_schedule()->set_cron_expression(
      "60 * * * *");
#pragma GCC diagnostic pop
  CHECK(peer.create(r).error_message() ==
        "Invalid cron expression: end of range (60) above maximum (59): 60");

  // No cron, rate or cron schedule: nothing about the schedule is checked, not even an unbound
  // required input or a kickoff argument that names nothing.
  r = peer.lp("v101");
  r.mutable_spec()->mutable_entity_metadata()->mutable_schedule()->set_kickoff_time_input_arg(
      "nope");
  CHECK(peer.create(r).error_message() == "");
  // With a rate, the unbound required input is refused.
  r = peer.lp("v102");
  r.mutable_spec()->mutable_entity_metadata()->mutable_schedule()->mutable_rate()->set_value(5);
  CHECK(peer.create(r).error_message() ==
        "Cannot create a launch plan with a schedule if there is an unbound required input. [n] "
        "is required");
}

// launch_plan_validator.go ValidateLaunchPlan: the launch-condition check is the last one, after
// the inputs and the schedule.
TEST_CASE("emulator fidelity: 'Launch condition must be empty' comes after the input checks",
          "[emulator][fidelity]") {
  LaunchPlanPeer peer({{"n", simple(fc::INTEGER)}});
  auto req = peer.lp();
  google::protobuf::Any condition;
  condition.set_type_url("type.googleapis.com/x.Cond");
  *req.mutable_spec()->mutable_entity_metadata()->mutable_launch_conditions() = condition;
  set_fixed(req, "n", string_literal("x"));
  CHECK(peer.create(req).error_message() ==
        "invalid fixed_input wrong type n, expected simple:INTEGER, got simple:STRING instead");
  set_fixed(req, "n", int_literal(1));
  auto st = peer.create(req);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "Launch condition must be empty, found type_url:\"type.googleapis.com/x.Cond\"");
}

// ---------------------------------------------------------------------------------------------
// Reads and projects

// workflow_manager.go ListWorkflows -> transformers/workflow.go FromWorkflowModels.
TEST_CASE("emulator fidelity: ListWorkflows returns only the interface in the closure",
          "[emulator][fidelity]") {
  LaunchPlanPeer peer({{"n", simple(fc::INTEGER)}});
  fa::ResourceListRequest list;
  list.mutable_id()->set_project("flytesnacks");
  list.mutable_id()->set_domain("development");
  list.set_limit(10);
  fa::WorkflowList out;
  REQUIRE(peer.rpc(&S::ListWorkflows, list, &out).ok());
  REQUIRE(out.workflows_size() == 1);
  const auto& listed = out.workflows(0);
  CHECK(listed.id().name() == "wf");
  CHECK(listed.closure().has_created_at());
  const auto& compiled = listed.closure().compiled_workflow();
  CHECK(compiled.primary().template_().interface().inputs().variables().count("n") == 1);
  CHECK(compiled.primary().template_().nodes_size() == 0);
  CHECK(compiled.tasks_size() == 0);
  CHECK_FALSE(compiled.primary().has_connections());

  // workflow_manager.go ListWorkflows / ListWorkflowIds: the token check names the method.
  list.set_token("-1");
  CHECK(peer.rpc(&S::ListWorkflows, list).error_message() ==
        "invalid pagination token -1 for ListWorkflows");
  fa::NamedEntityIdentifierListRequest ids;
  ids.set_project("flytesnacks");
  ids.set_domain("development");
  ids.set_limit(1);
  ids.set_token("z");
  CHECK(peer.rpc(&S::ListWorkflowIds, ids).error_message() ==
        "invalid pagination token z for ListWorkflowIdentifiers");
  CHECK(peer.rpc(&S::ListLaunchPlanIds, ids).error_message() == "invalid pagination token z");

  fa::ObjectGetRequest get;
  *get.mutable_id() = listed.id();
  fa::Workflow full;
  REQUIRE(peer.rpc(&S::GetWorkflow, get, &full).ok());
  CHECK(full.closure().compiled_workflow().primary().template_().nodes_size() == 1);
}

// project_manager.go ListProjects (alphabeticalSortParam) and GetProject ->
// transformers/project.go FromProjectModel.
TEST_CASE("emulator fidelity: projects list by identifier and read back only their columns",
          "[emulator][fidelity]") {
  EmulatorPeer peer;
  for (const char* id : {"zeta", "alpha", "mid"}) REQUIRE(peer.register_project(id).ok());
  fa::ProjectListRequest list;
  fa::Projects out;
  REQUIRE(peer.rpc(&S::ListProjects, list, &out).ok());
  REQUIRE(out.projects_size() == 3);
  CHECK(out.projects(0).id() == "alpha");
  CHECK(out.projects(1).id() == "mid");
  CHECK(out.projects(2).id() == "zeta");
  // project_manager.go ListProjects: validation.ValidateToken's failure, reworded.
  fa::ProjectListRequest bad_token;
  bad_token.set_token("x");
  CHECK(peer.rpc(&S::ListProjects, bad_token).error_message() ==
        "invalid pagination token x for ListProjects");
  list.mutable_sort_by()->set_key("identifier");
  list.mutable_sort_by()->set_direction(fa::Sort::DESCENDING);
  out.Clear();
  REQUIRE(peer.rpc(&S::ListProjects, list, &out).ok());
  CHECK(out.projects(0).id() == "zeta");

  fa::ProjectRegisterRequest reg;
  auto* p = reg.mutable_project();
  p->set_id("full");
  p->set_name("Full");
  p->set_description("d");
  p->set_org("acme");
  (*p->mutable_labels()->mutable_values())["team"] = "ml";
  REQUIRE(peer.rpc(&S::RegisterProject, reg).ok());
  fa::ProjectGetRequest get;
  get.set_id("full");
  fa::Project back;
  REQUIRE(peer.rpc(&S::GetProject, get, &back).ok());
  CHECK(back.id() == "full");
  CHECK(back.name() == "Full");
  CHECK(back.description() == "d");
  CHECK(back.labels().values().at("team") == "ml");
  CHECK(back.org().empty());  // not a column of the projects table
  CHECK(back.domains_size() == 3);
  CHECK(back.domains(0).id() == "development");
  CHECK(back.domains(0).name() == "development");
}

// validation/project_validator.go ValidateProjectAndDomain -> errors.go NewInactiveProjectError
// (status detail admin.InactiveProject), and ValidateProjectExists ("... exists").
TEST_CASE("emulator fidelity: an inactive project's error carries admin.InactiveProject",
          "[emulator][fidelity]") {
  EmulatorPeer peer;
  REQUIRE(peer.register_project("old").ok());
  fa::Project archive;
  archive.set_id("old");
  archive.set_state(fa::Project::ARCHIVED);
  REQUIRE(peer.rpc(&S::UpdateProject, archive).ok());

  fa::ProjectDomainAttributesUpdateRequest upd;
  upd.mutable_attributes()->set_project("old");
  upd.mutable_attributes()->set_domain("development");
  upd.mutable_attributes()
      ->mutable_matching_attributes()
      ->mutable_execution_queue_attributes()
      ->add_tags("q");
  auto st = peer.rpc(&S::UpdateProjectDomainAttributes, upd);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "project [old] is not active");
  // grpc-status-details-bin is a google.rpc.Status: field 3 holds the Any.
  google::protobuf::UnknownFieldSet status;
  REQUIRE(status.ParseFromString(st.error_details()));
  google::protobuf::Any any;
  for (int i = 0; i < status.field_count(); ++i) {
    if (status.field(i).number() == 3)
      REQUIRE(any.ParseFromString(status.field(i).length_delimited()));
  }
  fa::InactiveProject detail;
  REQUIRE(any.UnpackTo(&detail));
  CHECK(detail.id() == "old");

  // Creates validate the project the same way (CreateWorkflow has its own detail otherwise).
  fa::WorkflowCreateRequest wf;
  wf.mutable_id()->set_resource_type(fc::WORKFLOW);
  wf.mutable_id()->set_project("old");
  wf.mutable_id()->set_domain("development");
  wf.mutable_id()->set_name("wf");
  wf.mutable_id()->set_version("v1");
  *wf.mutable_spec()->mutable_template_()->mutable_id() = wf.id();
  auto wst = peer.rpc(&S::CreateWorkflow, wf);
  CHECK(wst.error_message() == "project [old] is not active");
  CHECK_FALSE(wst.error_details().empty());

  // A later error on the same connection carries no stale detail.
  upd.mutable_attributes()->set_project("ghost");
  st = peer.rpc(&S::UpdateProjectDomainAttributes, upd);
  CHECK(st.error_details().empty());

  fa::ProjectAttributesGetRequest get;
  get.set_project("ghost");
  get.set_resource_type(fa::EXECUTION_QUEUE);
  st = peer.rpc(&S::GetProjectAttributes, get);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "failed to validate that project [ghost] exists, err: [project [ghost] not found]");
}

// validation/project_validator.go ValidateProject -> validation.go validateLabels
// (k8s.io/apimachinery IsQualifiedName with a DNS-1123 subdomain prefix).
TEST_CASE("emulator fidelity: project label errors are Kubernetes' messages",
          "[emulator][fidelity]") {
  EmulatorPeer peer;
  auto with_label = [&](const std::string& key) {
    fa::ProjectRegisterRequest reg;
    reg.mutable_project()->set_id("p");
    reg.mutable_project()->set_name("p");
    (*reg.mutable_project()->mutable_labels()->mutable_values())[key] = "v";
    return peer.rpc(&S::RegisterProject, reg).error_message();
  };
  CHECK(with_label("Example.com/x") ==
        "invalid label key [Example.com/x]: [prefix part a lowercase RFC 1123 subdomain must "
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]");
  CHECK(with_label("a/") ==
        "invalid label key [a/]: [name part must be non-empty name part must consist of "
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]");
  CHECK(with_label("a/b/c") ==
        "invalid label key [a/b/c]: [a qualified name must consist of alphanumeric characters, "
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
        "or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')]");
  CHECK(with_label("example.com/team") == "");
}

// ---------------------------------------------------------------------------------------------
// The project-domain plugin-override merge

// resource_manager.go createOrMergeUpdateProjectDomainAttributes -> gormimpl/resource_repo.go
// GetRaw (GORM struct query: the empty workflow is not in the WHERE; First() = lowest id) ->
// transformers/resource.go MergeUpdatePluginAttributes (merges into, and writes, the row found).
TEST_CASE("emulator fidelity: a project-domain plugin override merges into an older workflow row",
          "[emulator][fidelity]") {
  EmulatorPeer peer;
  REQUIRE(peer.register_project("flytesnacks").ok());
  auto overrides = [](const std::string& type, const std::string& plugin) {
    fa::MatchingAttributes m;
    auto* o = m.mutable_plugin_overrides()->add_overrides();
    o->set_task_type(type);
    o->add_plugin_id(plugin);
    return m;
  };
  fa::WorkflowAttributesUpdateRequest wf;
  wf.mutable_attributes()->set_project("flytesnacks");
  wf.mutable_attributes()->set_domain("development");
  wf.mutable_attributes()->set_workflow("wf");
  *wf.mutable_attributes()->mutable_matching_attributes() = overrides("ray", "ray-wf");
  REQUIRE(peer.rpc(&S::UpdateWorkflowAttributes, wf).ok());

  fa::ProjectDomainAttributesUpdateRequest pd;
  pd.mutable_attributes()->set_project("flytesnacks");
  pd.mutable_attributes()->set_domain("development");
  *pd.mutable_attributes()->mutable_matching_attributes() = overrides("spark", "spark-pd");
  REQUIRE(peer.rpc(&S::UpdateProjectDomainAttributes, pd).ok());

  fa::ListMatchableAttributesRequest list;
  list.set_resource_type(fa::PLUGIN_OVERRIDE);
  fa::ListMatchableAttributesResponse rows;
  REQUIRE(peer.rpc(&S::ListMatchableAttributes, list, &rows).ok());
  // No project-domain row: the update went into the workflow row.
  REQUIRE(rows.configurations_size() == 1);
  CHECK(rows.configurations(0).workflow() == "wf");
  const auto& merged = rows.configurations(0).attributes().plugin_overrides().overrides();
  REQUIRE(merged.size() == 2);
  CHECK(merged[0].task_type() == "ray");
  CHECK(merged[1].task_type() == "spark");

  fa::ProjectDomainAttributesGetRequest get;
  get.set_project("flytesnacks");
  get.set_domain("development");
  get.set_resource_type(fa::PLUGIN_OVERRIDE);
  CHECK(peer.rpc(&S::GetProjectDomainAttributes, get).error_code() == grpc::StatusCode::NOT_FOUND);

  // Another project-domain type is a plain CreateOrUpdate: unaffected.
  fa::ProjectDomainAttributesUpdateRequest queue = pd;
  queue.mutable_attributes()
      ->mutable_matching_attributes()
      ->mutable_execution_queue_attributes()
      ->add_tags("q");
  REQUIRE(peer.rpc(&S::UpdateProjectDomainAttributes, queue).ok());
}

// rpc/adminservice launch_plan.go / workflow.go: GetLaunchPlan, UpdateLaunchPlan and GetWorkflow
// fill in an UNSPECIFIED resource type before the manager validates the identifier.
TEST_CASE("emulator fidelity: Get and Update take an id without resource type",
          "[emulator][issue22]") {
  LaunchPlanPeer peer({});
  REQUIRE(peer.create(peer.lp()).error_message() == "");
  fa::ObjectGetRequest get;
  *get.mutable_id() = ident(fc::WORKFLOW, "wf");
  get.mutable_id()->set_resource_type(fc::UNSPECIFIED);
  fa::Workflow wf;
  CHECK(peer.rpc(&S::GetWorkflow, get, &wf).error_message() == "");
  CHECK(wf.id().name() == "wf");
  *get.mutable_id() = ident(fc::LAUNCH_PLAN, "lp");
  get.mutable_id()->set_resource_type(fc::UNSPECIFIED);
  fa::LaunchPlan lp;
  CHECK(peer.rpc(&S::GetLaunchPlan, get, &lp).error_message() == "");
  CHECK(lp.id().resource_type() == fc::LAUNCH_PLAN);
  fa::LaunchPlanUpdateRequest update;
  *update.mutable_id() = get.id();
  update.set_state(fa::INACTIVE);
  CHECK(peer.rpc(&S::UpdateLaunchPlan, update).error_message() == "");
  // A wrong type is still refused.
  get.mutable_id()->set_resource_type(fc::TASK);
  CHECK_THAT(peer.rpc(&S::GetLaunchPlan, get, &lp).error_message(),
             Catch::StartsWith("unexpected resource type task"));
}

// launch_plan_manager.go ListLaunchPlanIds (no request validation) and the repository's
// gormimpl/common.go ValidateListInput.
TEST_CASE("emulator fidelity: ListLaunchPlanIds without a limit is the repository's error",
          "[emulator][issue22]") {
  LaunchPlanPeer peer({});
  REQUIRE(peer.create(peer.lp()).error_message() == "");
  fa::NamedEntityIdentifierListRequest req;
  req.set_project("flytesnacks");
  req.set_domain("development");
  fa::NamedEntityIdentifierList out;
  CHECK(peer.rpc(&S::ListLaunchPlanIds, req, &out).error_message() ==
        "missing and/or invalid parameters: limit");
  req.set_limit(10);
  req.set_token("x");
  CHECK(peer.rpc(&S::ListLaunchPlanIds, req, &out).error_message() == "invalid pagination token x");
  req.clear_token();
  REQUIRE(peer.rpc(&S::ListLaunchPlanIds, req, &out).error_message() == "");
  REQUIRE(out.entities_size() == 1);
  CHECK(out.entities(0).name() == "lp");
  // Neither project nor domain: no filter at all.
  fa::NamedEntityIdentifierListRequest none;
  none.set_limit(10);
  CHECK(peer.rpc(&S::ListLaunchPlanIds, none, &out).error_message() ==
        "missing and/or invalid parameters: filters");
}

// task_manager.go CreateTask -> workflowengine/impl/compiler.go CompileTask ->
// flytepropeller task_compiler.go validateContainerCommand / validateK8sPod.
TEST_CASE("emulator fidelity: CreateTask runs the task compiler", "[emulator][issue22]") {
  LaunchPlanPeer peer({});
  fa::TaskCreateRequest task;
  *task.mutable_id() = ident(fc::TASK, "io");
  auto* t = task.mutable_spec()->mutable_template_();
  *t->mutable_id() = task.id();
  t->set_type("python-task");
  t->mutable_metadata()->mutable_runtime()->set_version("1.10.0");
  *(*t->mutable_interface()->mutable_inputs()->mutable_variables())["a"].mutable_type() =
      simple(fc::INTEGER);
  t->mutable_container()->set_image("img");
  auto st = peer.rpc(&S::CreateTask, task);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "task failed compilation with Collected Errors: 1\n\tError 0: Code: ValueRequired, Node "
        "Id: container, Description: Value required [command].\n");
  t->mutable_container()->add_args("run");
  CHECK(peer.rpc(&S::CreateTask, task).error_message() == "");

  // A pod task whose container has no name.
  task.mutable_id()->set_name("pod");
  *t->mutable_id() = task.id();
  t->clear_container();
  t->set_type("sidecar");
  auto& fields = *t->mutable_k8s_pod()->mutable_pod_spec()->mutable_fields();
  fields["containers"].mutable_list_value()->add_values()->mutable_struct_value();
  st = peer.rpc(&S::CreateTask, task);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(),
             Catch::StartsWith("task failed compilation with Collected Errors: 1") &&
                 Catch::Contains("Description: Invalid value [k8s pod spec container name]."));
}

}  // namespace FLYTECD_UNITY_ID
