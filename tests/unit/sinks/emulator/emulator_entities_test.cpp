// The FlyteAdmin emulator over real gRPC: tasks, workflows and launch plans, lists, and
// persistence across a restart.

#include <google/protobuf/util/message_differencer.h>
#include <catch2/catch.hpp>

#include "tests/unit/sinks/emulator/emulator_test_support.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace emulator_test;

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

// ListLaunchPlans writes the stored launch plans into its answer without decoding them
// (sinks/emulator/wire.hpp): each entry must be the launch plan GetLaunchPlan answers, state and
// update time included, page by page and with a version filter.
TEST_CASE("emulator: ListLaunchPlans answers each launch plan as GetLaunchPlan does",
          "[emulator]") {
  Seeded peer;
  const auto wf_id = ident(fc::WORKFLOW, "wf", "v1");
  REQUIRE(peer.rpc(&S::CreateWorkflow, workflow("wf", "v1", {})).ok());
  for (const char* name : {"b", "a", "c"})
    for (const char* version : {"v1", "v2"}) {
      auto req = launch_plan(name, version, wf_id);
      (*req.mutable_spec()->mutable_labels()->mutable_values())["team"] = name;
      REQUIRE(peer.rpc(&S::CreateLaunchPlan, req).ok());
    }
  auto set_state = [&](const char* name, const char* version, fa::LaunchPlanState state) {
    fa::LaunchPlanUpdateRequest req;
    *req.mutable_id() = ident(fc::LAUNCH_PLAN, name, version);
    req.set_state(state);
    REQUIRE(peer.rpc(&S::UpdateLaunchPlan, req).ok());
  };
  set_state("a", "v2", fa::ACTIVE);
  set_state("c", "v1", fa::ACTIVE);
  set_state("c", "v1", fa::INACTIVE);

  auto all_pages = [&](const std::string& filters) {
    fa::ResourceListRequest req;
    req.mutable_id()->set_project("flytesnacks");
    req.mutable_id()->set_domain("development");
    req.set_limit(4);
    req.set_filters(filters);
    std::vector<fa::LaunchPlan> out;
    std::vector<std::string> tokens;
    do {
      fa::LaunchPlanList page;
      REQUIRE(peer.rpc(&S::ListLaunchPlans, req, &page).ok());
      for (const auto& lp : page.launch_plans()) out.push_back(lp);
      tokens.push_back(page.token());
      req.set_token(page.token());
    } while (!req.token().empty());
    return std::make_pair(out, tokens);
  };
  const auto [every, tokens] = all_pages("");
  CHECK(tokens == std::vector<std::string>{"4", ""});
  REQUIRE(every.size() == 6);
  int active = 0;
  for (const auto& lp : every) {
    CAPTURE(lp.id().name(), lp.id().version());
    fa::ObjectGetRequest get;
    *get.mutable_id() = lp.id();
    fa::LaunchPlan one;
    REQUIRE(peer.rpc(&S::GetLaunchPlan, get, &one).ok());
    CHECK(google::protobuf::util::MessageDifferencer::Equals(lp, one));
    CHECK(lp.spec().labels().values().at("team") == lp.id().name());
    CHECK(lp.closure().has_updated_at());
    if (lp.closure().state() == fa::ACTIVE) {
      ++active;
      CHECK(lp.id().name() == "a");
      CHECK(lp.id().version() == "v2");
    }
  }
  CHECK(active == 1);
  const auto [at_v2, v2_tokens] = all_pages("eq(version,v2)");
  REQUIRE(at_v2.size() == 3);
  for (const auto& lp : at_v2) CHECK(lp.id().version() == "v2");

  fa::ResourceListRequest no_limit;
  no_limit.mutable_id()->set_project("flytesnacks");
  no_limit.mutable_id()->set_domain("development");
  fa::LaunchPlanList none;
  CHECK(peer.rpc(&S::ListLaunchPlans, no_limit, &none).error_message() ==
        "invalid value for limit");
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

// A filter that is exactly eq(version,V) or value_in(version,A;B) is read from the database at
// those versions; any other filter row by row. Both give the same rows, order and pages, and an
// unknown field in a filter is still refused.
TEST_CASE(
    "emulator: eq(version) and value_in(version) list the same rows and pages as filtering "
    "every row",
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
  // Several versions: insertion order across them, as the row-by-row reading gives.
  const auto two = pages("value_in(version,v3;v1)");
  CHECK(two == std::vector<std::string>{"c@v1", "a@v1", "token 2", "b@v1", "c@v3", "token 4",
                                        "a@v3", "b@v3", "token 6", "token "});
  CHECK(pages("value_in(version,v3;v1)+neq(name,zzz)") == two);  // row by row
  CHECK(pages("value_in(version,v1;v3;v9;v1)") == two);
  CHECK(pages("value_in(version,v2)") == fast);
  CHECK(pages("value_in(version,v8;v9)") == std::vector<std::string>{"token "});
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

}  // namespace FLYTECD_UNITY_ID
