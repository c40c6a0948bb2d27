#include <catch2/catch.hpp>

#include "tests/unit/daemon/model/test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::model;
using flytecd::test::file;
using flytecd::test::find;
using flytecd::test::load;
using flytecd::test::load_one;

TEST_CASE("loader: every kind loads into typed documents", "[loader]") {
  auto r = load_one(R"(apiVersion: flytecd/v1
kind: Project
id: flytesnacks
name: Flyte snacks
labels: {team: ml}
---
apiVersion: flytecd/v1
kind: Overrides
project: flytesnacks
domain: development
spec:
  taskResourceAttributes:
    defaults: {cpu: "1", memory: 500Mi}
    limits: {cpu: "3", memory: 2Gi, gpu: "4"}
  execution_queue_attributes:
    tags: [a, b]
---
apiVersion: flytecd/v1
kind: PlatformDefaults
spec:
  qualityOfService: {tier: HIGH}
---
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: core}
project: flytesnacks
domain: development
version: v1.4.2
package: oci://registry.example.com/flyte/core:v1.4.2
activate: all
serviceAccount: runner
---
apiVersion: flyte.backend/v1
kind: FlyteRegistration
metadata: {name: op, namespace: flyte}
spec:
  workflowProject: flytesnacks
  workflowDomain: staging
  workflowVersion: v2
  workflowPackageUri: team/example-workflow
)");
  INFO((r.diagnostics.empty() ? "" : format(r.diagnostics[0])));
  REQUIRE(r.ok());
  CHECK(r.documents.document_count == 5);
  REQUIRE(r.documents.projects.size() == 1);
  CHECK(r.documents.projects[0].labels.at("team") == "ml");
  REQUIRE(r.documents.overrides.size() == 2);
  CHECK(r.documents.overrides[0].type == flyteidl::admin::TASK_RESOURCE);
  CHECK(r.documents.overrides[0].value.get().task_resource_attributes().limits().gpu() == "4");
  CHECK(r.documents.overrides[1].value.get().execution_queue_attributes().tags_size() == 2);
  REQUIRE(r.documents.platform_defaults.size() == 1);
  CHECK(r.documents.platform_defaults[0].type == flyteidl::admin::QUALITY_OF_SERVICE_SPECIFICATION);
  REQUIRE(r.documents.registrations.size() == 2);
  CHECK(r.documents.registrations[0].activate == Activate::all);
  CHECK(r.documents.registrations[0].service_account == "runner");
  CHECK(r.documents.registrations[1].registry_relative);
  CHECK(r.documents.registrations[1].source_kind == "FlyteRegistration");
}

TEST_CASE("loader: camelCase and snake_case field names are both accepted", "[loader]") {
  auto r = load_one(R"(apiVersion: flytecd/v1
kind: Overrides
project: p
spec:
  workflow_execution_config:
    max_parallelism: 7
    securityContext: {run_as: {k8sServiceAccount: sa}}
    interruptible: true
)");
  REQUIRE(r.ok());
  const auto value = r.documents.overrides[0].value.get();  // a decoded copy the reference reads
  const auto& wec = value.workflow_execution_config();
  CHECK(wec.max_parallelism() == 7);
  CHECK(wec.security_context().run_as().k8s_service_account() == "sa");
  CHECK(wec.interruptible().value());
}

TEST_CASE("loader: unknown fields are rejected by name with their position", "[loader]") {
  auto r = load_one(
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nspec:\n  taskResourceAttributes:\n"
      "    defaults: {cpu: \"1\", cpus: 2}\n");
  const auto* d = find(r, DiagKind::unknown_field);
  REQUIRE(d);
  CHECK(d->where.line == 6);
  CHECK(d->path == "spec.taskResourceAttributes.defaults.cpus");
  CHECK(d->message.find("cpus") != std::string::npos);
  CHECK(d->expected.find("ephemeralStorage") != std::string::npos);
  auto top = load_one(
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nprojekt: q\nspec: "
      "{executionClusterLabel: {value: x}}\n");
  REQUIRE(find(top, DiagKind::unknown_field));
  CHECK(find(top, DiagKind::unknown_field)->where.line == 4);
  auto attr =
      load_one("apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nspec:\n  taskResources: {}\n");
  REQUIRE(find(attr, DiagKind::unknown_field));
  CHECK(find(attr, DiagKind::unknown_field)->where.line == 5);
}

TEST_CASE("loader: wrong types say what was expected", "[loader]") {
  auto r = load_one(R"(apiVersion: flytecd/v1
kind: Overrides
project: p
spec:
  workflowExecutionConfig:
    maxParallelism: abc
    interruptible: maybe
  executionQueueAttributes:
    tags: just-a-string
  pluginOverrides:
    overrides: [{taskType: spark, pluginId: [a], missingPluginBehavior: SOMETIMES}]
)");
  CHECK_FALSE(r.ok());
  int wrong = 0;
  for (const auto& d : r.diagnostics)
    wrong += d.kind == DiagKind::wrong_type || d.kind == DiagKind::invalid_value;
  CHECK(wrong == 4);
  const auto* d = find(r, DiagKind::wrong_type);
  REQUIRE(d);
  CHECK(d->where.line == 6);
  CHECK(d->expected.find("integer") != std::string::npos);
  const auto* e = find(r, DiagKind::invalid_value);
  REQUIRE(e);
  CHECK(e->expected.find("USE_DEFAULT") != std::string::npos);
}

TEST_CASE("loader: enums accept names and numbers", "[loader]") {
  auto r = load_one(R"(apiVersion: flytecd/v1
kind: Overrides
project: p
domain: development
spec:
  pluginOverrides:
    overrides: [{taskType: spark, pluginId: [a], missingPluginBehavior: 1}]
)");
  REQUIRE(r.ok());
  CHECK(r.documents.overrides[0]
            .value.get()
            .plugin_overrides()
            .overrides(0)
            .missing_plugin_behavior() == flyteidl::admin::PluginOverride::USE_DEFAULT);
}

// FlyteAdmin cannot store it: flyteadmin/pkg/manager/impl/resources/resource_manager.go
// createOrMergeUpdateProjectAttributes -> flyteadmin/pkg/repositories/gormimpl/resource_repo.go
// GetRaw (refuses an empty domain).
TEST_CASE(
    "loader: project-scope pluginOverrides are refused with FlyteAdmin's limitation, "
    "project-domain scope, PlatformDefaults and ConfigMap mode accept them",
    "[loader]") {
  const std::string project_scope = R"(apiVersion: flytecd/v1
kind: Overrides
project: p
spec:
  taskResourceAttributes:
    defaults: {cpu: "1"}
  pluginOverrides:
    overrides: [{taskType: spark, pluginId: [a]}]
)";
  auto r = load_one(project_scope);
  CHECK_FALSE(r.ok());
  const auto* d = find(r, DiagKind::unsupported_attribute);
  REQUIRE(d);
  CHECK(d->where.file == "a.yaml");
  CHECK(d->where.line == 7);
  CHECK(d->path == "spec.pluginOverrides");
  CHECK_THAT(d->message, Catch::Contains("cannot be stored by FlyteAdmin") &&
                             Catch::Contains("UpdateProjectAttributes") &&
                             Catch::Contains("GetRaw refuses an empty domain"));
  CHECK_THAT(d->expected, Catch::Contains("project-domain scope"));
  CHECK(r.documents.overrides.size() == 1);  // the task resources are still read
  CHECK(r.diagnostics.size() == 1);

  CHECK(load_one(R"(apiVersion: flytecd/v1
kind: Overrides
project: p
domain: production
spec:
  pluginOverrides:
    overrides: [{taskType: spark, pluginId: [a]}]
)")
            .ok());
  CHECK(load_one(R"(apiVersion: flytecd/v1
kind: PlatformDefaults
spec:
  pluginOverrides:
    overrides: [{taskType: spark, pluginId: [a]}]
)")
            .ok());
  model::Policy configmap;
  configmap.configmap_mode = true;
  CHECK(flytecd::test::load({file("a.yaml", project_scope)}, {}, configmap).ok());
}

TEST_CASE("loader: scope rules", "[loader]") {
  auto no_domain = load_one(
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nworkflow: wf\n"
      "spec: {executionClusterLabel: {value: x}}\n");
  REQUIRE(find(no_domain, DiagKind::workflow_scope_without_domain));
  CHECK(find(no_domain, DiagKind::workflow_scope_without_domain)->where.line == 4);
  auto bad_domain = load_one(
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\ndomain: prod\n"
      "spec: {executionClusterLabel: {value: x}}\n");
  REQUIRE(find(bad_domain, DiagKind::invalid_value));
  CHECK(find(bad_domain, DiagKind::invalid_value)->where.line == 4);
  auto bad_project = load_one(
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: My_Project\n"
      "spec: {executionClusterLabel: {value: x}}\n");
  CHECK(find(bad_project, DiagKind::invalid_value));
}

TEST_CASE("loader: the same (scope, type) in two files names both places", "[loader]") {
  std::string doc =
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\ndomain: staging\n"
      "spec:\n  executionClusterLabel: {value: x}\n";
  auto r = load({file("a.yaml", doc), file("b/c.yaml", "# comment\n" + doc)});
  const auto* d = find(r, DiagKind::duplicate_scope);
  REQUIRE(d);
  CHECK(d->where.file == "b/c.yaml");
  CHECK(d->where.line == 7);
  CHECK(d->related.file == "a.yaml");
  CHECK(d->related.line == 6);
  // Different types at one scope are fine.
  auto ok = load({file("a.yaml", doc),
                  file("b.yaml",
                       "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\n"
                       "domain: staging\nspec: {executionQueueAttributes: {tags: [q]}}\n")});
  CHECK(ok.ok());
}

TEST_CASE("loader: quantities and limits >= defaults", "[loader]") {
  auto r = load_one(R"(apiVersion: flytecd/v1
kind: Overrides
project: p
spec:
  taskResourceAttributes:
    defaults: {cpu: "2", memory: 1Gi, gpu: "1x"}
    limits: {cpu: 1500m, memory: 2Gi}
)");
  const auto* q = find(r, DiagKind::bad_quantity);
  REQUIRE(q);
  CHECK(q->where.line == 6);
  CHECK(q->path == "spec.taskResourceAttributes.defaults.gpu");
  const auto* l = find(r, DiagKind::limits_below_defaults);
  REQUIRE(l);
  CHECK(l->where.line == 7);
  CHECK(l->related.line == 6);
  int below = 0;
  for (const auto& d : r.diagnostics) below += d.kind == DiagKind::limits_below_defaults;
  CHECK(below == 1);  // memory limit 2Gi >= 1Gi is fine
}

TEST_CASE("loader: QUALITY_OF_SERVICE cannot be an override but can be a platform default",
          "[loader]") {
  auto r = load_one(
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nspec:\n  qualityOfService: {tier: "
      "HIGH}\n");
  const auto* d = find(r, DiagKind::unsupported_attribute);
  REQUIRE(d);
  CHECK(d->where.line == 5);
  CHECK(d->message.find("QUALITY_OF_SERVICE") != std::string::npos);
  CHECK(load_one("apiVersion: flytecd/v1\nkind: PlatformDefaults\nspec:\n  qualityOfService: "
                 "{tier: HIGH}\n")
            .ok());
}

TEST_CASE("loader: registrations check version, package and activation", "[loader]") {
  auto reg = [](const std::string& version, const std::string& package,
                const std::string& extra = "") {
    return load_one(
        "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: r}\nproject: p\n"
        "domain: development\nversion: " +
        version + "\npackage: " + package + "\n" + extra);
  };
  CHECK(reg("v1", "oci://r.example.com/a/b:v1").ok());
  CHECK(find(reg("\"\"", "oci://r.example.com/a/b:v1"), DiagKind::missing_field));
  CHECK(find(reg("v 1", "oci://r.example.com/a/b:v1"), DiagKind::bad_version));
  CHECK(find(reg("v1/2", "oci://r.example.com/a/b:v1"), DiagKind::bad_version));
  auto bad_pkg = reg("v1", "http://r.example.com/a.tgz");
  REQUIRE(find(bad_pkg, DiagKind::bad_package_uri));
  CHECK(find(bad_pkg, DiagKind::bad_package_uri)->where.line == 7);
  CHECK(find(reg("v1", "oci://r.example.com/a/b:v1", "activate: sometimes\n"),
             DiagKind::invalid_value));
  model::Policy strict;
  strict.require_digest_pins = true;
  auto unpinned =
      load({file("a.yaml",
                 "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: r}\n"
                 "project: p\ndomain: development\nversion: v1\npackage: oci://h/a:v1\n")},
           {}, strict);
  CHECK(find(unpinned, DiagKind::policy_violation));
}

TEST_CASE("loader: a registration's verify: policy, with file:line of what is wrong",
          "[loader][signature]") {
  auto reg = [](const std::string& package, const std::string& verify) {
    return load_one(
        "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: r}\nproject: p\n"
        "domain: development\nversion: v1\npackage: " +
        package + "\nverify:\n" + verify);
  };
  const std::string oci = "oci://r.example.com/a/b:v1";
  auto keyed = reg(oci, "  provider: cosign\n  key: keys/cosign.pub\n");
  REQUIRE(keyed.ok());
  REQUIRE(keyed.documents.registrations.at(0).verify);
  CHECK(keyed.documents.registrations[0].verify->key == "keys/cosign.pub");
  CHECK(keyed.documents.registrations[0].verify->where == "a.yaml:9");
  auto keyless = reg(oci,
                     "  matchOIDCIdentity:\n"
                     "    - issuer: ^https://token\\.actions\\.githubusercontent\\.com$\n"
                     "      subject: ^https://github\\.com/acme/flows/.*$\n");
  REQUIRE(keyless.ok());
  CHECK(keyless.documents.registrations.at(0).verify->identities.size() == 1);
  // A regexp that does not compile: the line of the pattern, RE2's reason.
  auto bad_re = reg(oci,
                    "  matchOIDCIdentity:\n"
                    "    - issuer: ^https://issuer$\n"
                    "      subject: ^(unclosed$\n");
  const auto* d = find(bad_re, DiagKind::invalid_value);
  REQUIRE(d);
  CHECK(d->where.line == 11);
  CHECK(d->path == "verify.matchOIDCIdentity[0].subject");
  CHECK(d->message.find("is not an RE2 expression") != std::string::npos);
  CHECK(find(reg(oci, "  key: k.pub\n  keyFile: /etc/k.pub\n"), DiagKind::invalid_value));
  CHECK(find(reg(oci, "  provider: notation\n  key: k.pub\n"), DiagKind::invalid_value));
  CHECK(find(reg(oci, "  keys: k.pub\n"), DiagKind::invalid_value));
  CHECK(find(reg(oci, "  key: ../outside.pub\n"), DiagKind::invalid_value));
  // Signatures live next to OCI artifacts only.
  auto https = reg("https://example.com/p.tgz", "  key: k.pub\n");
  REQUIRE(find(https, DiagKind::invalid_value));
  CHECK(find(https, DiagKind::invalid_value)->message.find("not an OCI artifact") !=
        std::string::npos);
}

TEST_CASE("loader: kind and apiVersion problems", "[loader]") {
  CHECK(find(load_one("apiVersion: flytecd/v2\nkind: Overrides\n"), DiagKind::unknown_api_version));
  CHECK(find(load_one("apiVersion: flytecd/v1\nkind: Override\n"), DiagKind::unknown_kind));
  CHECK(find(load_one("apiVersion: flytecd/v1\nproject: p\n"), DiagKind::missing_field));
  CHECK(find(load_one("- a\n- b\n"), DiagKind::not_a_mapping));
  CHECK(find(
      load_one("apiVersion: flytecd/v1\nkind: FlyteRegistration\nmetadata: {name: x}\nspec: {}\n"),
      DiagKind::unknown_api_version));
}

TEST_CASE("loader: duplicate projects and registrations", "[loader]") {
  auto r = load_one(
      "apiVersion: flytecd/v1\nkind: Project\nid: p\n---\napiVersion: flytecd/v1\nkind: "
      "Project\nid: p\n");
  REQUIRE(find(r, DiagKind::duplicate_object));
  CHECK(find(r, DiagKind::duplicate_object)->where.line == 5);
}

TEST_CASE("loader: one pass reports errors from every file", "[loader]") {
  auto r = load({file("a.yaml", "apiVersion: flytecd/v1\nkind: Bogus\n"),
                 file("b.yaml", "a: [unclosed\n"),
                 file("c.yaml",
                      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nworkflow: w\nspec: "
                      "{executionClusterLabel: {value: x}}\n")});
  CHECK(find(r, DiagKind::unknown_kind));
  CHECK(find(r, DiagKind::yaml_syntax));
  CHECK(find(r, DiagKind::workflow_scope_without_domain));
}

TEST_CASE("loader: total document bound", "[loader]") {
  model::Limits limits;
  limits.max_documents = 2;
  auto r = load({file("a.yaml",
                      "apiVersion: flytecd/v1\nkind: Project\nid: a\n---\napiVersion: "
                      "flytecd/v1\nkind: Project\nid: b\n"),
                 file("b.yaml", "apiVersion: flytecd/v1\nkind: Project\nid: c\n")},
                limits);
  CHECK(find(r, DiagKind::too_many_documents));
}

// Issue 10.1: each of these overflowed the stack in std::regex (validate exited 139).
TEST_CASE("loader: very long version, host and URL are errors, not crashes", "[loader][hostile]") {
  const std::string huge_version(30'000, 'v');
  auto r = load_one(
      "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: x}\n"
      "project: p\ndomain: development\nversion: \"" +
      huge_version + " \"\npackage: oci://r.example/flyte/core:v1\n");
  const Diagnostic* d = find(r, DiagKind::bad_version);
  REQUIRE(d != nullptr);
  CHECK(d->where.line == 6);
  CHECK(d->message.size() < 400);  // the value is elided, not echoed whole

  auto op = load_one(
      "apiVersion: flyte.backend/v1\nkind: FlyteRegistration\nmetadata: {name: op}\n"
      "spec:\n  workflowProject: p\n  workflowDomain: development\n"
      "  workflowVersion: \"" +
      huge_version + "!\"\n  workflowPackageUri: team/wf\n");
  CHECK(find(op, DiagKind::bad_version) != nullptr);

  const std::string host(60'000, 'h');
  auto oci = load_one(
      "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: x}\n"
      "project: p\ndomain: development\nversion: v1\npackage: oci://" +
      host + "/flyte/core:v1\n");
  d = find(oci, DiagKind::bad_package_uri);
  REQUIRE(d != nullptr);
  CHECK(d->message.find("60000 characters") != std::string::npos);

  auto https = load_one(
      "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: x}\n"
      "project: p\ndomain: development\nversion: v1\npackage: https://" +
      host + "/pkg.tgz\n");
  CHECK(find(https, DiagKind::bad_package_uri) != nullptr);
}

// Issue 10.8: FlyteAdmin's ValidateProject refuses these at apply; validate must say so first.
TEST_CASE("loader: project labels, name and description FlyteAdmin refuses are invalid",
          "[loader][hostile]") {
  auto r = load_one(
      "apiVersion: flytecd/v1\nkind: Project\nid: p1\nlabels:\n  \"a b/c\": x\n"
      "  team: \"" +
      std::string(60'000, 'v') + "\"\n");
  REQUIRE_FALSE(r.ok());
  int labels = 0;
  for (const auto& d : r.diagnostics)
    if (d.path.rfind("labels.", 0) == 0) ++labels;
  CHECK(labels == 2);
  const Diagnostic* d = find(r, DiagKind::invalid_value);
  REQUIRE(d != nullptr);
  CHECK(d->message.size() < 400);

  auto many =
      load_one("apiVersion: flytecd/v1\nkind: Project\nid: p1\nname: \"" + std::string(65, 'n') +
               "\"\ndescription: \"" + std::string(301, 'd') + "\"\n");
  CHECK(many.diagnostics.size() == 2);

  auto fine = load_one(
      "apiVersion: flytecd/v1\nkind: Project\nid: p1\nlabels: {example.com/team: ml, t: \"\"}\n");
  CHECK(fine.ok());
}

TEST_CASE("loader: newlines and escape characters in values are escaped in messages",
          "[loader][hostile]") {
  auto r = load_one(
      "apiVersion: flytecd/v1\nkind: Project\nid: \"p1\\nINFO applied 0 steps\\u001b[0m\"\n");
  const Diagnostic* d = find(r, DiagKind::invalid_value);
  REQUIRE(d != nullptr);
  CHECK(d->message.find('\n') == std::string::npos);
  CHECK(d->message.find('\x1b') == std::string::npos);
  CHECK(d->message.find("p1\\nINFO") != std::string::npos);
}

TEST_CASE("loader: limits below defaults are found exactly, beyond long double precision",
          "[loader][hostile]") {
  auto r = load_one(
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\ndomain: development\nspec:\n"
      "  taskResourceAttributes:\n    defaults: {memory: \"10000000000000000000000000000001\"}\n"
      "    limits: {memory: \"1e31\"}\n");
  CHECK(find(r, DiagKind::limits_below_defaults) != nullptr);
}

TEST_CASE("loader: a YAML merge key is refused as unsupported, not as an unknown field '<<'",
          "[loader][hostile]") {
  auto merged = load_one(
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\ndomain: development\nspec:\n"
      "  workflowExecutionConfig:\n    <<: {maxParallelism: 4}\n"
      "---\napiVersion: flytecd/v1\nkind: Project\nid: p\n<<: {name: x}\n");
  int merge_errors = 0;
  for (const auto& d : merged.diagnostics)
    if (d.message.find("merge keys ('<<') are not supported") != std::string::npos) ++merge_errors;
  CHECK(merge_errors == 2);
}

// Found by the documents fuzz target: a long id without a name threw yaml-cpp's InvalidNode.
TEST_CASE("loader: a project id over 64 characters without a name is an error, not a crash",
          "[loader][hostile]") {
  auto r = load_one("apiVersion: flytecd/v1\nkind: Project\nid: " + std::string(70, 'a') + "\n");
  REQUIRE_FALSE(r.ok());
  const Diagnostic* d = find(r, DiagKind::invalid_value);
  REQUIRE(d != nullptr);
  CHECK(d->where.line == 3);
}

}  // namespace FLYTECD_UNITY_ID
