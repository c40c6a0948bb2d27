#include "daemon/model/flytectl_attrs.hpp"

#include <catch2/catch.hpp>

#include "tests/unit/daemon/model/test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::model;
using flytecd::test::file;
namespace fc = flytecd::model::flytectl;
namespace admin = flyteidl::admin;

namespace {

struct Parsed {
  std::optional<fc::AttrFile> attr;
  Diagnostics diags;
};

Parsed parse(const std::string& yaml, std::optional<AttributeType> forced = std::nullopt) {
  Parsed p;
  p.attr = fc::parse_attr_file(file("attrs.yaml", yaml), forced, Limits{}, p.diags);
  return p;
}

const Diagnostic* first_error(const Diagnostics& diags, DiagKind kind) {
  for (const auto& d : diags)
    if (d.kind == kind && d.severity == Severity::error) return &d;
  return nullptr;
}

std::string messages(const Diagnostics& diags) {
  std::string out;
  for (const auto& d : diags) out += format(d) + "\n";
  return out;
}

fc::ImportResult import(std::vector<SourceFile> files, Policy policy = {}) {
  return fc::import_files(files, std::nullopt, policy, Limits{});
}

}  // namespace

// The files below are those of flytectl's own tests and docs (flytectl/cmd/update/testdata and
// the `flytectl update … --help` examples), read as flytectl's ReadConfigFromFile reads them.

TEST_CASE("flytectl import: a task-resource file (defaults, limits, unquoted numbers)",
          "[flytectl]") {
  auto p = parse(R"(domain: development
project: flytesnacks
defaults:
  cpu: 1
  memory: 150Mi
  ephemeral_storage: 1Gi
limits:
  cpu: "2"
  memory: 450Mi
)");
  REQUIRE(p.attr);
  INFO(messages(p.diags));
  CHECK(p.attr->type == admin::TASK_RESOURCE);
  CHECK(p.attr->scope.project == "flytesnacks");
  CHECK(p.attr->scope.domain == "development");
  CHECK(p.attr->scope.workflow.empty());
  const auto& tra = p.attr->value.task_resource_attributes();
  CHECK(tra.defaults().cpu() == "1");  // sigs.k8s.io/yaml stringifies a number for a string
  CHECK(tra.defaults().memory() == "150Mi");
  CHECK(tra.defaults().ephemeral_storage() == "1Gi");
  CHECK(tra.limits().cpu() == "2");
  CHECK(tra.limits().memory() == "450Mi");
}

TEST_CASE("flytectl import: a cluster-resource file with capitalised Project/Domain/Workflow",
          "[flytectl]") {
  auto p = parse(R"(Domain: development
Project: flytesnacks
Workflow: core.control_flow.merge_sort.merge_sort
attributes:
  "foo": "bar"
  projectQuotaCpu: 4
)");
  REQUIRE(p.attr);
  CHECK(p.attr->type == admin::CLUSTER_RESOURCE);
  CHECK(p.attr->scope.project == "flytesnacks");
  CHECK(p.attr->scope.domain == "development");
  CHECK(p.attr->scope.workflow == "core.control_flow.merge_sort.merge_sort");
  const auto& attrs = p.attr->value.cluster_resource_attributes().attributes();
  REQUIRE(attrs.size() == 2);
  CHECK(attrs.at("foo") == "bar");
  CHECK(attrs.at("projectQuotaCpu") == "4");
}

TEST_CASE("flytectl import: execution-queue and execution-cluster-label files", "[flytectl]") {
  auto q = parse("project: flytesnacks\ntags:\n  - foo\n  - bar\n");
  REQUIRE(q.attr);
  CHECK(q.attr->type == admin::EXECUTION_QUEUE);
  CHECK(q.attr->scope.domain.empty());
  REQUIRE(q.attr->value.execution_queue_attributes().tags_size() == 2);
  CHECK(q.attr->value.execution_queue_attributes().tags(1) == "bar");

  auto l = parse("domain: development\nproject: flytesnacks\nvalue: foo\n");
  REQUIRE(l.attr);
  CHECK(l.attr->type == admin::EXECUTION_CLUSTER_LABEL);
  CHECK(l.attr->value.execution_cluster_label().value() == "foo");
}

TEST_CASE("flytectl import: a plugin-override file takes the enum as a number (0 FAIL, 1 DEFAULT)",
          "[flytectl]") {
  auto p = parse(R"(domain: development
project: flytesnacks
overrides:
  - task_type: python_task # Task type for which to apply plugin implementation overrides
    plugin_id:
      - plugin_override1
      - plugin_override2
    missing_plugin_behavior: 1 # 0 : FAIL , 1: DEFAULT
  - Task_Type: spark
    plugin_id: [databricks]
    missing_plugin_behavior: 0
  - task_type: ray
    missing_plugin_behavior: USE_DEFAULT
)");
  REQUIRE(p.attr);
  CHECK(p.attr->type == admin::PLUGIN_OVERRIDE);
  const auto& o = p.attr->value.plugin_overrides();
  REQUIRE(o.overrides_size() == 3);
  CHECK(o.overrides(0).task_type() == "python_task");
  CHECK(o.overrides(0).plugin_id_size() == 2);
  CHECK(o.overrides(0).missing_plugin_behavior() == admin::PluginOverride::USE_DEFAULT);
  CHECK(o.overrides(1).task_type() == "spark");
  CHECK(o.overrides(1).missing_plugin_behavior() == admin::PluginOverride::FAIL);
  CHECK(o.overrides(2).missing_plugin_behavior() == admin::PluginOverride::USE_DEFAULT);

  auto bad = parse(
      "project: p\ndomain: development\noverrides:\n  - task_type: x\n"
      "    missing_plugin_behavior: 7\n");
  CHECK_FALSE(bad.attr);
  const auto* d = first_error(bad.diags, DiagKind::invalid_value);
  REQUIRE(d);
  CHECK(d->where.line == 5);
  CHECK(d->path == "overrides[0].missing_plugin_behavior");
  CHECK(d->expected.find("1 (USE_DEFAULT)") != std::string::npos);
}

TEST_CASE("flytectl import: a workflow-execution-config file (snake_case, wrappers as {value})",
          "[flytectl]") {
  auto p = parse(R"(domain: development
project: flytesnacks
workflow: core.control_flow.merge_sort.merge_sort
MAX_PARALLELISM: 5
security_context:
  run_as:
    k8s_service_account: demo
    iam_role: arn:aws:iam::1:role/x
raw_output_data_config:
  output_location_prefix: s3://bucket/raw
labels:
  values: {team: ml}
annotations:
  values: {note: "yes"}
interruptible:
  value: true
overwrite_cache: yes
envs:
  values:
    - key: LOG_LEVEL
      value: debug
)");
  INFO(messages(p.diags));
  REQUIRE(p.attr);
  CHECK(p.attr->type == admin::WORKFLOW_EXECUTION_CONFIG);
  const auto& w = p.attr->value.workflow_execution_config();
  CHECK(w.max_parallelism() == 5);
  CHECK(w.security_context().run_as().k8s_service_account() == "demo");
  CHECK(w.security_context().run_as().iam_role() == "arn:aws:iam::1:role/x");
  CHECK(w.raw_output_data_config().output_location_prefix() == "s3://bucket/raw");
  CHECK(w.labels().values().at("team") == "ml");
  CHECK(w.annotations().values().at("note") == "yes");
  REQUIRE(w.has_interruptible());
  CHECK(w.interruptible().value());
  CHECK(w.overwrite_cache());
  REQUIRE(w.envs().values_size() == 1);
  CHECK(w.envs().values(0).key() == "LOG_LEVEL");

  // {} sets the wrapper: interruptible false is stated, not left to the workflow.
  auto z = parse("project: p\ninterruptible: {}\n");
  REQUIRE(z.attr);
  CHECK(z.attr->value.workflow_execution_config().has_interruptible());
  CHECK_FALSE(z.attr->value.workflow_execution_config().interruptible().value());
}

TEST_CASE("flytectl import: values flytectl refuses are errors at their line", "[flytectl]") {
  // flytectl reads google.protobuf.BoolValue as a Go struct: a bare bool does not unmarshal.
  auto w = parse("project: p\ndomain: development\ninterruptible: true\n");
  CHECK_FALSE(w.attr);
  const auto* d = first_error(w.diags, DiagKind::wrong_type);
  REQUIRE(d);
  CHECK(d->where.line == 3);
  CHECK(d->expected.find("{value: …}") != std::string::npos);

  auto q = parse("project: p\nmax_parallelism: \"5\"\n");
  CHECK_FALSE(q.attr);
  REQUIRE(first_error(q.diags, DiagKind::wrong_type));
  CHECK(first_error(q.diags, DiagKind::wrong_type)->path == "max_parallelism");

  auto t = parse("project: p\ntags: foo\n");
  CHECK_FALSE(t.attr);
  REQUIRE(first_error(t.diags, DiagKind::wrong_type));
}

TEST_CASE("flytectl import: unknown keys are errors naming each with file:line", "[flytectl]") {
  // flytectl's own invalid_attribute.yaml.
  auto p = parse(R"(InvalidDomain: development
InvalidProject: flytesnacks
InvalidWorkflow: ""
cpu: "1"
memory: 150Mi)");
  CHECK_FALSE(p.attr);
  std::vector<std::pair<std::string, int>> unknown;
  for (const auto& d : p.diags)
    if (d.kind == DiagKind::unknown_field) unknown.emplace_back(d.path, d.where.line);
  CHECK(unknown == std::vector<std::pair<std::string, int>>{{"InvalidDomain", 1},
                                                            {"InvalidProject", 2},
                                                            {"InvalidWorkflow", 3},
                                                            {"cpu", 4},
                                                            {"memory", 5}});
  CHECK(format(p.diags[0]).rfind("attrs.yaml:1:1:", 0) == 0);

  // A typo next to known keys names the type's keys.
  auto typo =
      parse("project: p\ndomain: development\ndefaults: {cpu: \"1\"}\nlimit: {cpu: \"2\"}\n");
  CHECK_FALSE(typo.attr);
  const auto* d = first_error(typo.diags, DiagKind::unknown_field);
  REQUIRE(d);
  CHECK(d->path == "limit");
  CHECK(d->where.line == 4);
  CHECK(d->expected.find("defaults, limits") != std::string::npos);

  // protobuf's camelCase JSON name is not a key flytectl reads.
  auto top = parse("project: p\ndomain: development\nmaxParallelism: 3\n");
  CHECK_FALSE(top.attr);
  d = first_error(top.diags, DiagKind::unknown_field);
  REQUIRE(d);
  CHECK(d->where.line == 3);
  CHECK(d->expected.find("'max_parallelism' (workflow-execution-config") != std::string::npos);

  auto camel = parse("project: p\ndefaults:\n  ephemeralStorage: 1Gi\n");
  CHECK_FALSE(camel.attr);
  d = first_error(camel.diags, DiagKind::unknown_field);
  REQUIRE(d);
  CHECK(d->path == "defaults.ephemeralStorage");
  CHECK(d->where.line == 3);
  CHECK(d->expected.find("'ephemeral_storage'") != std::string::npos);
}

TEST_CASE("flytectl import: the type is inferred from the keys, or forced with --type",
          "[flytectl]") {
  auto two = parse("project: p\ndomain: development\ntags: [a]\nvalue: x\n");
  CHECK_FALSE(two.attr);
  const auto* d = first_error(two.diags, DiagKind::invalid_value);
  REQUIRE(d);
  CHECK(d->message.find("tags (execution-queue)") != std::string::npos);
  CHECK(d->message.find("value (execution-cluster-label)") != std::string::npos);

  auto none = parse("project: p\ndomain: development\n");
  CHECK_FALSE(none.attr);
  REQUIRE(first_error(none.diags, DiagKind::missing_field));
  CHECK(first_error(none.diags, DiagKind::missing_field)->expected.find("--type") !=
        std::string::npos);

  // Forced: an empty file is an empty value of that type; another type's key is unknown.
  auto forced = parse("project: p\ndomain: development\n", admin::EXECUTION_QUEUE);
  REQUIRE(forced.attr);
  CHECK(forced.attr->type == admin::EXECUTION_QUEUE);
  CHECK(forced.attr->value.has_execution_queue_attributes());
  auto wrong = parse("project: p\ntags: [a]\n", admin::TASK_RESOURCE);
  CHECK_FALSE(wrong.attr);
  d = first_error(wrong.diags, DiagKind::unknown_field);
  REQUIRE(d);
  CHECK(d->path == "tags");
  CHECK(d->expected.find("'tags' is a execution-queue key") != std::string::npos);

  CHECK(fc::type_from_name("task-resource-attribute") == admin::TASK_RESOURCE);
  CHECK(fc::type_from_name("plugin-override") == admin::PLUGIN_OVERRIDE);
  CHECK_FALSE(fc::type_from_name("quality-of-service"));
  CHECK(fc::type_names().size() == 6);
}

TEST_CASE("flytectl import: project is required, and keys count once whatever their case",
          "[flytectl]") {
  auto p = parse("domain: development\ntags: [a]\n");
  CHECK_FALSE(p.attr);
  REQUIRE(first_error(p.diags, DiagKind::missing_field));
  CHECK(first_error(p.diags, DiagKind::missing_field)->message == "project is required");

  auto dup = parse("project: a\nProject: b\ntags: [x]\n");
  CHECK_FALSE(dup.attr);
  const auto* d = first_error(dup.diags, DiagKind::duplicate_key);
  REQUIRE(d);
  CHECK(d->where.line == 2);
  CHECK(d->related.line == 1);

  auto docs = parse("project: a\ntags: [x]\n---\nproject: b\ntags: [y]\n");
  CHECK_FALSE(docs.attr);
  REQUIRE(first_error(docs.diags, DiagKind::not_a_mapping));
}

TEST_CASE("flytectl import: files of one scope merge into one document in the recommended layout",
          "[flytectl]") {
  auto r = import({
      file("tra.yaml", "project: flytesnacks\ndomain: development\ndefaults: {cpu: \"1\"}\n"),
      file("eq.yaml", "Project: flytesnacks\nDomain: development\ntags: [gpu]\n"),
      file("proj.yaml", "project: flytesnacks\nvalue: big\n"),
      file("wf-dev.yaml",
           "project: flytesnacks\ndomain: development\nworkflow: my.wf\nmax_parallelism: 3\n"),
      file("wf-prod.yaml",
           "project: flytesnacks\ndomain: production\nworkflow: my.wf\nmax_parallelism: 9\n"),
  });
  INFO([&] {
    std::string m;
    for (const auto& f : r.files) m += messages(f.diagnostics);
    return m + messages(r.output_diagnostics);
  }());
  CHECK_FALSE(r.any_invalid());
  CHECK(r.output_diagnostics.empty());
  for (const auto& f : r.files) CHECK(f.outcome == fc::Outcome::imported);
  REQUIRE(r.outputs.size() == 3);
  CHECK(r.outputs[0].path == "projects/flytesnacks/development.yaml");
  CHECK(r.outputs[0].documents == 1);
  CHECK(r.outputs[1].path == "projects/flytesnacks/overrides.yaml");
  CHECK(r.outputs[2].path == "projects/flytesnacks/workflows/my.wf.yaml");
  CHECK(r.outputs[2].documents == 2);
  CHECK(r.outputs[0].text.find("tra.yaml (task-resource)") != std::string::npos);
  CHECK(r.outputs[0].text.find("eq.yaml (execution-queue)") != std::string::npos);

  // The written repository loads, with every value where the flytectl files put it.
  std::vector<SourceFile> written;
  for (const auto& o : r.outputs) written.push_back(file(o.path, o.text));
  auto loaded = test::load(written);
  INFO(messages(loaded.diagnostics));
  REQUIRE(loaded.ok());
  REQUIRE(loaded.documents.overrides.size() == 5);
  std::map<std::pair<std::string, int>, const Override*> by;
  for (const auto& o : loaded.documents.overrides)
    by[{o.scope.domain + "/" + o.scope.workflow, static_cast<int>(o.type)}] = &o;
  CHECK(by.at({"development/", admin::TASK_RESOURCE})
            ->value.get()
            .task_resource_attributes()
            .defaults()
            .cpu() == "1");
  CHECK(by.at({"development/", admin::EXECUTION_QUEUE})
            ->value.get()
            .execution_queue_attributes()
            .tags(0) == "gpu");
  CHECK(
      by.at({"/", admin::EXECUTION_CLUSTER_LABEL})->value.get().execution_cluster_label().value() ==
      "big");
  CHECK(by.at({"production/my.wf", admin::WORKFLOW_EXECUTION_CONFIG})
            ->value.get()
            .workflow_execution_config()
            .max_parallelism() == 9);
}

TEST_CASE("flytectl import: one (scope, type) in two files is an error naming both", "[flytectl]") {
  auto r = import({file("a.yaml", "project: p\ndomain: staging\ntags: [a]\n"),
                   file("b.yaml", "project: p\ndomain: staging\ntags: [b]\n")});
  CHECK(r.files[0].outcome == fc::Outcome::imported);
  CHECK(r.files[1].outcome == fc::Outcome::invalid);
  CHECK(r.any_invalid());
  const auto* d = first_error(r.files[1].diagnostics, DiagKind::duplicate_scope);
  REQUIRE(d);
  CHECK(d->where.file == "b.yaml");
  CHECK(d->related.file == "a.yaml");
  CHECK(d->message.find("a.yaml") != std::string::npos);
  REQUIRE(r.outputs.size() == 1);  // the caller refuses to write unless --skip-invalid
  CHECK(r.outputs[0].text.find("- a") != std::string::npos);
  CHECK(r.outputs[0].text.find("- b") == std::string::npos);
}

TEST_CASE("flytectl import: a project-scope plugin override is skipped with validate's message",
          "[flytectl]") {
  auto r = import({file("po.yaml", R"(project: flytesnacks
overrides:
  - task_type: python_task
    plugin_id: [plugin_override1]
    missing_plugin_behavior: 1
)"),
                   file("eq.yaml", "project: flytesnacks\ntags: [a]\n")});
  REQUIRE(r.files.size() == 2);
  CHECK(r.files[0].outcome == fc::Outcome::skipped);
  CHECK(r.files[1].outcome == fc::Outcome::imported);
  CHECK_FALSE(r.any_invalid());
  const auto* d = first_error(r.files[0].diagnostics, DiagKind::unsupported_attribute);
  REQUIRE(d);
  CHECK(d->where.file == "po.yaml");
  CHECK(d->where.line == 2);
  CHECK(d->path == "overrides");

  // The same text as `flytecd validate` on the equivalent Overrides document.
  auto v = test::load_one(R"(apiVersion: flytecd/v1
kind: Overrides
project: flytesnacks
spec:
  pluginOverrides:
    overrides: [{taskType: python_task, pluginId: [plugin_override1]}]
)");
  const auto* vd = test::find(v, DiagKind::unsupported_attribute);
  REQUIRE(vd);
  CHECK(d->message == vd->message);
  CHECK(d->expected == vd->expected);
  REQUIRE(r.outputs.size() == 1);
  CHECK(r.outputs[0].text.find("pluginOverrides") == std::string::npos);

  // In ConfigMap mode FlyteAdmin's RPC limit does not apply, so the file is imported.
  Policy cm;
  cm.configmap_mode = true;
  auto c = import({file("po.yaml", "project: p\noverrides: [{task_type: x}]\n")}, cm);
  CHECK(c.files[0].outcome == fc::Outcome::imported);
}

TEST_CASE("flytectl import: validate's checks are reported at the flytectl file's line",
          "[flytectl]") {
  auto r = import({file("tra.yaml", R"(project: p
domain: development
defaults:
  cpu: 4x
  memory: 1Gi
limits:
  memory: 512Mi
)"),
                   file("dom.yaml", "project: p\ndomain: qa\ntags: [a]\n"),
                   file("wf.yaml", "project: p\nworkflow: w\ntags: [a]\n"),
                   file("id.yaml", "project: Not_A_Label\ntags: [a]\n")});
  for (const auto& f : r.files) CHECK(f.outcome == fc::Outcome::invalid);
  CHECK(r.outputs.empty());
  const auto* q = first_error(r.files[0].diagnostics, DiagKind::bad_quantity);
  REQUIRE(q);
  CHECK(q->where.file == "tra.yaml");
  CHECK(q->where.line == 4);
  CHECK(q->path == "defaults.cpu");
  const auto* l = first_error(r.files[0].diagnostics, DiagKind::limits_below_defaults);
  REQUIRE(l);
  CHECK(l->where.line == 7);
  CHECK(l->path == "limits.memory");
  const auto* dom = first_error(r.files[1].diagnostics, DiagKind::invalid_value);
  REQUIRE(dom);
  CHECK(dom->where.line == 2);
  CHECK(dom->path == "domain");
  REQUIRE(first_error(r.files[2].diagnostics, DiagKind::workflow_scope_without_domain));
  CHECK(first_error(r.files[2].diagnostics, DiagKind::workflow_scope_without_domain)->where.line ==
        2);
  REQUIRE(first_error(r.files[3].diagnostics, DiagKind::invalid_value));

  // A domain FlyteAdmin is configured with is accepted.
  Policy qa;
  qa.domains = {"qa"};
  auto ok = import({file("dom.yaml", "project: p\ndomain: qa\ntags: [a]\n")}, qa);
  CHECK(ok.files[0].outcome == fc::Outcome::imported);
  REQUIRE(ok.outputs.size() == 1);
  CHECK(ok.outputs[0].path == "projects/p/qa.yaml");
}

TEST_CASE("flytectl import: a workflow name becomes one safe file name", "[flytectl]") {
  auto r = import({file("a.yaml", "project: p\ndomain: staging\nworkflow: ../x/y\ntags: [a]\n")});
  REQUIRE(r.outputs.size() == 1);
  CHECK(r.outputs[0].path == "projects/p/workflows/_.._x_y.yaml");
  CHECK(r.outputs[0].text.find("workflow: ../x/y") != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
