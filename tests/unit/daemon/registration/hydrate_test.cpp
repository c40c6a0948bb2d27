#include "daemon/registration/hydrate.hpp"

#include <google/protobuf/util/message_differencer.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include "test_paths.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::registration;
using flyteidl::core::Identifier;

namespace {

std::string fixture_dir() {
  const std::string shared = "/work/shared/fixtures/flyte-packages";
  if (std::filesystem::exists(shared)) return shared;
  return FLYTECD_SOURCE_DIR "/../shared/fixtures/flyte-packages";
}

Package load(const std::string& file) {
  std::ifstream in(fixture_dir() + "/" + file, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  auto pkg = read_package(ss.str(), file);
  REQUIRE(pkg.ok());
  return std::move(*pkg);
}

// A Package owns its memory lease, so it is not copyable: copy what hydration reads.
Package copy_of(const Package& pkg) {
  Package out;
  out.entities = pkg.entities;
  out.fast_source_name = pkg.fast_source_name;
  return out;
}

HydrateParams params() {
  HydrateParams p;
  p.project = "flytesnacks";
  p.domain = "development";
  p.version = "v1.2.3";
  p.remote_package_path = "s3://bucket/fast/VIGDDTFJJNH2HSQJLHG4GFF7U4======/fast.tar.gz";
  return p;
}

Entity& find(Package& pkg, EntityKind kind, const std::string& name) {
  for (auto& e : pkg.entities) {
    if (e.kind == kind && e.id().name() == name) return e;
  }
  FAIL("no " << to_string(kind) << " " << name);
  throw std::logic_error("unreachable");
}

void check_hydrated(const Identifier& id, const std::string& version = "v1.2.3") {
  INFO(id.ShortDebugString());
  CHECK(id.project() == "flytesnacks");
  CHECK(id.domain() == "development");
  CHECK(id.version() == version);
}

void set_placeholders(Identifier* id, flyteidl::core::ResourceType type, const std::string& name) {
  id->set_resource_type(type);
  id->set_project(std::string(k_project_placeholder));
  id->set_domain(std::string(k_domain_placeholder));
  id->set_name(name);
  id->set_version(std::string(k_version_placeholder));
}

Entity task_entity(const std::string& name) {
  Entity e;
  e.kind = EntityKind::task;
  e.file = "0_" + name + "_1.pb";
  set_placeholders(e.task.mutable_template_()->mutable_id(), flyteidl::core::TASK, name);
  return e;
}

Entity workflow_entity(const std::string& name) {
  Entity e;
  e.kind = EntityKind::workflow;
  e.file = "1_" + name + "_2.pb";
  set_placeholders(e.workflow.mutable_template_()->mutable_id(), flyteidl::core::WORKFLOW, name);
  return e;
}

Entity launch_plan_entity(const std::string& name, const std::string& workflow) {
  Entity e;
  e.kind = EntityKind::launch_plan;
  e.file = "2_" + name + "_3.pb";
  set_placeholders(e.launch_plan.mutable_id(), flyteidl::core::LAUNCH_PLAN, name);
  set_placeholders(e.launch_plan.mutable_spec()->mutable_workflow_id(), flyteidl::core::WORKFLOW,
                   workflow);
  return e;
}

}  // namespace

TEST_CASE("hydrate: every fixture is fully hydrated and in a valid registration order",
          "[registration]") {
  for (const char* file : {"valid-register.tgz", "flyte-package.tgz", "flytesnacks-core.tgz",
                           "valid-fast-register.tgz"}) {
    INFO(file);
    Package pkg = load(file);
    REQUIRE_FALSE(unhydrated_references(pkg).empty());
    auto st = hydrate(pkg, params());
    REQUIRE(st.ok());
    auto left = unhydrated_references(pkg);
    for (const auto& l : left) UNSCOPED_INFO(l);
    CHECK(left.empty());
    for (const auto& e : pkg.entities) check_hydrated(e.id());
    auto order = registration_order(pkg);
    REQUIRE(order.ok());
    CHECK(order->size() == pkg.entities.size());
    // Tasks first.
    const size_t tasks = pkg.count(EntityKind::task);
    for (size_t i = 0; i < order->size(); ++i) {
      CHECK((pkg.entities[(*order)[i]].kind == EntityKind::task) == (i < tasks));
    }
    // Hydrating a hydrated package changes nothing.
    Package again = copy_of(pkg);
    REQUIRE(hydrate(again, params()).ok());
    for (size_t i = 0; i < pkg.entities.size(); ++i) {
      using google::protobuf::util::MessageDifferencer;
      CHECK(MessageDifferencer::Equals(again.entities[i].task, pkg.entities[i].task));
      CHECK(MessageDifferencer::Equals(again.entities[i].workflow, pkg.entities[i].workflow));
      CHECK(MessageDifferencer::Equals(again.entities[i].launch_plan, pkg.entities[i].launch_plan));
    }
  }
}

TEST_CASE("hydrate: branch nodes, sub-workflows and launch-plan workflow ids in flytesnacks-core",
          "[registration]") {
  Package pkg = load("flytesnacks-core.tgz");
  REQUIRE(hydrate(pkg, params()).ok());

  auto& merge_sort = find(pkg, EntityKind::workflow, "core.control_flow.run_merge_sort.merge_sort");
  check_hydrated(merge_sort.id());
  const auto& ie = merge_sort.workflow.template_().nodes(0).branch_node().if_else();
  check_hydrated(ie.case_().then_node().task_node().reference_id());
  CHECK(ie.case_().then_node().task_node().reference_id().name() ==
        "core.control_flow.run_merge_sort.sort_locally");
  check_hydrated(ie.else_node().task_node().reference_id());

  auto& nested = find(pkg, EntityKind::workflow, "core.control_flow.subworkflows.nested_parent_wf");
  const auto& spec = nested.workflow;
  REQUIRE(spec.sub_workflows_size() == 2);
  for (const auto& n : spec.template_().nodes()) {
    check_hydrated(n.workflow_node().sub_workflow_ref());
  }
  for (const auto& sub : spec.sub_workflows()) {
    check_hydrated(sub.id());
    for (const auto& n : sub.nodes()) {
      if (n.has_task_node()) check_hydrated(n.task_node().reference_id());
      if (n.has_workflow_node()) check_hydrated(n.workflow_node().sub_workflow_ref());
    }
  }

  for (const auto& e : pkg.entities) {
    if (e.kind == EntityKind::launch_plan) check_hydrated(e.launch_plan.spec().workflow_id());
  }
  // resource_type and name are never touched.
  auto& lp = find(pkg, EntityKind::launch_plan, "default_4_lp");
  CHECK(lp.launch_plan.id().resource_type() == flyteidl::core::LAUNCH_PLAN);
  CHECK(lp.launch_plan.spec().workflow_id().resource_type() == flyteidl::core::WORKFLOW);
}

TEST_CASE("hydrate: pinned references are preserved, force rewrites versions only",
          "[registration]") {
  Package pkg = load("flytesnacks-core.tgz");
  auto& merge_sort = find(pkg, EntityKind::workflow, "core.control_flow.run_merge_sort.merge_sort");
  auto* pinned = merge_sort.workflow.mutable_template_()
                     ->mutable_nodes(0)
                     ->mutable_branch_node()
                     ->mutable_if_else()
                     ->mutable_else_node()
                     ->mutable_task_node()
                     ->mutable_reference_id();
  pinned->set_project("shared-tasks");
  pinned->set_domain("production");
  pinned->set_version("v0.9");
  pinned->set_org("acme");
  Package forced = copy_of(pkg);

  REQUIRE(hydrate(pkg, params()).ok());
  const auto& kept = find(pkg, EntityKind::workflow, "core.control_flow.run_merge_sort.merge_sort")
                         .workflow.template_()
                         .nodes(0)
                         .branch_node()
                         .if_else()
                         .else_node()
                         .task_node()
                         .reference_id();
  CHECK(kept.project() == "shared-tasks");
  CHECK(kept.domain() == "production");
  CHECK(kept.version() == "v0.9");
  CHECK(kept.org() == "acme");

  auto p = params();
  p.force = true;
  REQUIRE(hydrate(forced, p).ok());
  const auto& rewritten =
      find(forced, EntityKind::workflow, "core.control_flow.run_merge_sort.merge_sort")
          .workflow.template_()
          .nodes(0)
          .branch_node()
          .if_else()
          .else_node()
          .task_node()
          .reference_id();
  CHECK(rewritten.project() == "shared-tasks");
  CHECK(rewritten.version() == "v1.2.3");
}

TEST_CASE("hydrate: fast-registration arguments are substituted exactly", "[registration]") {
  Package pkg = load("flyte-package.tgz");
  auto p = params();
  p.destination_dir = "/root";
  REQUIRE(hydrate(pkg, p).ok());
  auto& t = find(pkg, EntityKind::task, "myapp.workflows.example.say_hello");
  const auto& args = t.task.template_().container().args();
  std::vector<std::string> v(args.begin(), args.end());
  auto at = [&v](const std::string& flag) {
    auto it = std::find(v.begin(), v.end(), flag);
    REQUIRE(it != v.end());
    REQUIRE(it + 1 != v.end());
    return *(it + 1);
  };
  CHECK(at("--additional-distribution") == p.remote_package_path);
  CHECK(at("--dest-dir") == "/root");
  // Runtime templates are left for the execution engine.
  CHECK(std::find(v.begin(), v.end(), "{{.input}}") != v.end());

  Package dot = load("flyte-package.tgz");
  REQUIRE(hydrate(dot, params()).ok());
  const auto& dargs = find(dot, EntityKind::task, "myapp.workflows.example.say_hello")
                          .task.template_()
                          .container()
                          .args();
  CHECK(std::find(dargs.begin(), dargs.end(), ".") != dargs.end());

  // No location for the source: an error rather than flytectl's silent "".
  Package missing = load("flyte-package.tgz");
  auto np = params();
  np.remote_package_path.clear();
  auto st = hydrate(missing, np);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error().message, Catch::Contains("0_myapp.workflows.example.say_hello_1.pb"));
  CHECK_THAT(st.error().message, Catch::Contains("remote_package_path"));
}

TEST_CASE("hydrate: k8s_pod and task-node pod_template containers' args, not initContainers",
          "[registration]") {
  google::protobuf::Struct pod;
  {
    // Build the Struct by hand (no JSON parser dependency in the test).
    auto* containers = (*pod.mutable_fields())["containers"].mutable_list_value();
    auto* c = containers->add_values()->mutable_struct_value();
    (*c->mutable_fields())["name"].set_string_value("main");
    auto* args = (*c->mutable_fields())["args"].mutable_list_value();
    args->add_values()->set_string_value("{{ .remote_package_path }}");
    args->add_values()->set_string_value("{{ .dest_dir }}");
    args->add_values()->set_string_value("{{.input}}");
    auto* init = (*pod.mutable_fields())["initContainers"].mutable_list_value();
    (*init->add_values()->mutable_struct_value()->mutable_fields())["args"]
        .mutable_list_value()
        ->add_values()
        ->set_string_value("{{ .dest_dir }}");
  }
  Package pkg;
  pkg.fast_source_name = "fastabc.tar.gz";
  pkg.entities.push_back(task_entity("podtask"));
  *pkg.entities[0].task.mutable_template_()->mutable_k8s_pod()->mutable_pod_spec() = pod;
  Entity wf = workflow_entity("wf");
  auto* node = wf.workflow.mutable_template_()->add_nodes();
  node->set_id("n0");
  set_placeholders(node->mutable_task_node()->mutable_reference_id(), flyteidl::core::TASK,
                   "podtask");
  *node->mutable_task_node()->mutable_overrides()->mutable_pod_template()->mutable_pod_spec() = pod;
  pkg.entities.push_back(wf);

  auto before = unhydrated_references(pkg);
  CHECK(std::count_if(before.begin(), before.end(), [](const std::string& s) {
          return s.find("args") != std::string::npos;
        }) == 6);  // 2 in containers + 1 in initContainers, twice
  REQUIRE(hydrate(pkg, params()).ok());
  for (const google::protobuf::Struct* s :
       {&pkg.entities[0].task.template_().k8s_pod().pod_spec(), &pkg.entities[1]
                                                                     .workflow.template_()
                                                                     .nodes(0)
                                                                     .task_node()
                                                                     .overrides()
                                                                     .pod_template()
                                                                     .pod_spec()}) {
    const auto& args = s->fields()
                           .at("containers")
                           .list_value()
                           .values(0)
                           .struct_value()
                           .fields()
                           .at("args")
                           .list_value();
    CHECK(args.values(0).string_value() == params().remote_package_path);
    CHECK(args.values(1).string_value() == ".");
    CHECK(args.values(2).string_value() == "{{.input}}");
    const auto& init = s->fields().at("initContainers").list_value().values(0).struct_value();
    CHECK(init.fields().at("args").list_value().values(0).string_value() == "{{ .dest_dir }}");
  }
  // Only the initContainers' untouched placeholders remain.
  auto left = unhydrated_references(pkg);
  REQUIRE(left.size() == 2);
  CHECK_THAT(left[0],
             Catch::StartsWith("0_podtask_1.pb: template.k8s_pod.pod_spec.fields[initContainers]"));
  CHECK_THAT(left[0], Catch::EndsWith(" = {{ .dest_dir }}"));
}

TEST_CASE("hydrate: every node kind, including array, gate and failure nodes", "[registration]") {
  Package pkg;
  pkg.entities.push_back(task_entity("t"));
  pkg.entities.push_back(launch_plan_entity("child_lp", "child"));
  Entity wf = workflow_entity("wf");
  auto* tmpl = wf.workflow.mutable_template_();
  auto* array = tmpl->add_nodes();
  array->set_id("map");
  set_placeholders(
      array->mutable_array_node()->mutable_node()->mutable_task_node()->mutable_reference_id(),
      flyteidl::core::TASK, "t");
  auto* gate = tmpl->add_nodes();
  gate->set_id("approve");
  gate->mutable_gate_node()->mutable_sleep();
  auto* lp_node = tmpl->add_nodes();
  lp_node->set_id("launch");
  set_placeholders(lp_node->mutable_workflow_node()->mutable_launchplan_ref(),
                   flyteidl::core::LAUNCH_PLAN, "child_lp");
  auto* branch = tmpl->add_nodes();
  branch->set_id("choose");
  auto* ie = branch->mutable_branch_node()->mutable_if_else();
  set_placeholders(
      ie->mutable_case_()->mutable_then_node()->mutable_task_node()->mutable_reference_id(),
      flyteidl::core::TASK, "t");
  set_placeholders(
      ie->add_other()->mutable_then_node()->mutable_task_node()->mutable_reference_id(),
      flyteidl::core::TASK, "t");
  ie->mutable_error()->set_message("no branch taken");
  auto* failure = tmpl->mutable_failure_node();
  failure->set_id("on-failure");
  set_placeholders(failure->mutable_task_node()->mutable_reference_id(), flyteidl::core::TASK, "t");
  pkg.entities.push_back(wf);
  pkg.entities.push_back(launch_plan_entity("wf", "wf"));
  pkg.entities.back().file = "3_wf_3.pb";

  auto p = params();
  p.service_account = "flyte-runner";
  p.raw_output_prefix = "s3://bucket/raw";
  auto* sc = pkg.entities.back().launch_plan.mutable_spec()->mutable_security_context();
  sc->mutable_run_as()->set_execution_identity("someone");
  sc->add_secrets()->set_key("dropped");
  pkg.entities.back().launch_plan.mutable_spec()->mutable_labels();
  (*pkg.entities.back().launch_plan.mutable_spec()->mutable_labels()->mutable_values())["team"] =
      "ml";

  REQUIRE(hydrate(pkg, p).ok());
  CHECK(unhydrated_references(pkg).empty());
  const auto& h = pkg.entities[2].workflow.template_();
  check_hydrated(h.nodes(0).array_node().node().task_node().reference_id());
  check_hydrated(h.nodes(2).workflow_node().launchplan_ref());
  check_hydrated(h.nodes(3).branch_node().if_else().case_().then_node().task_node().reference_id());
  check_hydrated(
      h.nodes(3).branch_node().if_else().other(0).then_node().task_node().reference_id());
  check_hydrated(h.failure_node().task_node().reference_id());

  // Launch plan auth: both fields replaced wholesale, the other one empty; raw output prefix set.
  const auto& spec = pkg.entities[3].launch_plan.spec();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  CHECK(spec.auth_role().kubernetes_service_account() == "flyte-runner");
  CHECK(spec.auth_role().assumable_iam_role().empty());
#pragma GCC diagnostic pop
  CHECK(spec.security_context().run_as().k8s_service_account() == "flyte-runner");
  CHECK(spec.security_context().run_as().iam_role().empty());
  CHECK(spec.security_context().run_as().execution_identity().empty());
  CHECK(spec.security_context().secrets_size() == 0);
  CHECK(spec.raw_output_data_config().output_location_prefix() == "s3://bucket/raw");
  CHECK(spec.labels().values().at("team") == "ml");  // nothing else touched

  // Without SA/role/prefix the launch plan's own settings stay.
  Package plain;
  plain.entities.push_back(launch_plan_entity("lp", "wf"));
  plain.entities[0]
      .launch_plan.mutable_spec()
      ->mutable_security_context()
      ->mutable_run_as()
      ->set_iam_role("arn:aws:iam::1:role/own");
  REQUIRE(hydrate(plain, params()).ok());
  CHECK(plain.entities[0].launch_plan.spec().security_context().run_as().iam_role() ==
        "arn:aws:iam::1:role/own");
  CHECK_FALSE(plain.entities[0].launch_plan.spec().has_raw_output_data_config());

  // An IAM role alone also replaces both.
  auto rp = params();
  rp.iam_role = "arn:aws:iam::1:role/flyte";
  REQUIRE(hydrate(plain, rp).ok());
  CHECK(plain.entities[0].launch_plan.spec().security_context().run_as().iam_role() ==
        "arn:aws:iam::1:role/flyte");
  CHECK(plain.entities[0]
            .launch_plan.spec()
            .security_context()
            .run_as()
            .k8s_service_account()
            .empty());

  auto order = registration_order(pkg);
  REQUIRE(order.ok());
  CHECK(*order == std::vector<size_t>{0, 1, 2, 3});
}

TEST_CASE("hydrate: unknown node types and bad parameters are errors naming the place",
          "[registration]") {
  Package pkg;
  Entity wf = workflow_entity("wf");
  wf.workflow.mutable_template_()->add_nodes()->set_id("n0");  // no target
  pkg.entities.push_back(wf);
  auto st = hydrate(pkg, params());
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error().message,
             Catch::StartsWith("1_wf_2.pb: workflow wf: node n0: unknown type"));

  Package sub;
  Entity wf2 = workflow_entity("wf2");
  auto* s = wf2.workflow.add_sub_workflows();
  set_placeholders(s->mutable_id(), flyteidl::core::WORKFLOW, "inner");
  auto* x = s->add_nodes();
  x->set_id("x");
  x->mutable_workflow_node();  // neither sub_workflow_ref nor launchplan_ref
  sub.entities.push_back(wf2);
  st = hydrate(sub, params());
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error().message, Catch::Contains("sub-workflow inner / x: unknown type"));

  Package fine;
  fine.entities.push_back(task_entity("t"));
  auto p = params();
  p.version.clear();
  st = hydrate(fine, p);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error().message, Catch::Contains("empty version"));
}

TEST_CASE("registration order: a launch plan before its workflow is reported", "[registration]") {
  Package pkg;
  pkg.entities.push_back(task_entity("t"));
  pkg.entities.push_back(launch_plan_entity("wf", "wf"));
  pkg.entities.push_back(workflow_entity("wf"));
  pkg.entities[1].file = "1_wf_3.pb";
  pkg.entities[2].file = "2_wf_2.pb";
  Entity parent = workflow_entity("parent");
  parent.file = "3_parent_2.pb";
  auto* n = parent.workflow.mutable_template_()->add_nodes();
  n->set_id("n0");
  set_placeholders(n->mutable_workflow_node()->mutable_launchplan_ref(),
                   flyteidl::core::LAUNCH_PLAN, "late_lp");
  pkg.entities.push_back(parent);
  pkg.entities.push_back(launch_plan_entity("late_lp", "wf"));
  pkg.entities.back().file = "4_late_lp_3.pb";
  // A launch plan for a workflow outside the package is the server's business.
  pkg.entities.push_back(launch_plan_entity("external", "elsewhere"));
  REQUIRE(hydrate(pkg, params()).ok());
  auto order = registration_order(pkg);
  REQUIRE_FALSE(order.ok());
  const auto& msg = order.error().message;
  CHECK_THAT(msg,
             Catch::Contains("1_wf_3.pb: launch plan wf references workflow "
                             "flytesnacks/development/wf@v1.2.3, which comes later (2_wf_2.pb)"));
  CHECK_THAT(msg, Catch::Contains("3_parent_2.pb: workflow parent references launch plan"));
  CHECK_THAT(msg, Catch::Contains("(4_late_lp_3.pb)"));
  CHECK_THAT(msg, !Catch::Contains("external"));
}

}  // namespace FLYTECD_UNITY_ID
