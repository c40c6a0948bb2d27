#include <catch2/catch.hpp>

#include "daemon/model/resolve.hpp"
#include "tests/unit/daemon/model/test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::model;
namespace admin = flyteidl::admin;

namespace {
const char* k_repo = R"(apiVersion: flytecd/v1
kind: PlatformDefaults
spec:
  taskResourceAttributes: {defaults: {cpu: "2", memory: 200Mi}, limits: {cpu: "2", memory: 1Gi}}
  workflowExecutionConfig: {maxParallelism: 25, overwriteCache: true}
  clusterResourceAttributes: {attributes: {projectQuotaCpu: "100", projectQuotaMemory: 1Ti}}
---
apiVersion: flytecd/v1
kind: PlatformDefaults
domain: production
spec:
  executionQueueAttributes: {tags: [prod-queue]}
---
apiVersion: flytecd/v1
kind: Overrides
project: p
spec:
  workflowExecutionConfig:
    annotations: {values: {owner: team}}
    maxParallelism: 3
  executionClusterLabel: {value: project-cluster}
---
apiVersion: flytecd/v1
kind: Overrides
project: p
domain: development
spec:
  workflowExecutionConfig:
    labels: {values: {env: dev}}
  taskResourceAttributes: {defaults: {cpu: "1"}, limits: {cpu: "4"}}
  clusterResourceAttributes: {attributes: {projectQuotaCpu: "8"}}
---
apiVersion: flytecd/v1
kind: Overrides
project: p
domain: development
workflow: wf
spec:
  workflowExecutionConfig:
    interruptible: true
  executionClusterLabel: {value: wf-cluster}
)";

const EffectiveAttribute* get(const std::vector<EffectiveAttribute>& v, AttributeType t) {
  for (const auto& a : v)
    if (a.type == t) return &a;
  return nullptr;
}
}  // namespace

TEST_CASE("resolve: the most specific row wins whole", "[resolve]") {
  auto r = flytecd::test::load_one(k_repo);
  REQUIRE(r.ok());
  Hierarchy h(r.documents);
  auto wf = h.resolve(Scope{"p", "development", "wf"});
  const auto* label = get(wf, admin::EXECUTION_CLUSTER_LABEL);
  REQUIRE(label);
  CHECK(label->value.execution_cluster_label().value() == "wf-cluster");
  CHECK(label->origin.level == Level::workflow);
  auto other = h.resolve(Scope{"p", "development", "other"});
  CHECK(get(other, admin::EXECUTION_CLUSTER_LABEL)->value.execution_cluster_label().value() ==
        "project-cluster");
  CHECK(get(other, admin::EXECUTION_CLUSTER_LABEL)->origin.level == Level::project);
  // TASK_RESOURCE: project-domain row replaces the platform default whole (no per-field merge).
  const auto* tr = get(other, admin::TASK_RESOURCE);
  CHECK(tr->origin.level == Level::project_domain);
  CHECK(tr->value.task_resource_attributes().defaults().memory().empty());
}

TEST_CASE("resolve: platform defaults apply per domain, then globally", "[resolve]") {
  auto r = flytecd::test::load_one(k_repo);
  Hierarchy h(r.documents);
  auto prod = h.resolve(Scope{"p", "production", ""});
  const auto* q = get(prod, admin::EXECUTION_QUEUE);
  REQUIRE(q);
  CHECK(q->origin.level == Level::platform_domain);
  CHECK(get(h.resolve(Scope{"p", "staging", ""}), admin::EXECUTION_QUEUE) == nullptr);
  const auto* tr = get(prod, admin::TASK_RESOURCE);
  CHECK(tr->origin.level == Level::platform_global);
}

TEST_CASE("resolve: WORKFLOW_EXECUTION_CONFIG fills from the project row, skipping project-domain",
          "[resolve]") {
  auto r = flytecd::test::load_one(k_repo);
  Hierarchy h(r.documents);
  auto wf = h.resolve(Scope{"p", "development", "wf"});
  const auto* wec = get(wf, admin::WORKFLOW_EXECUTION_CONFIG);
  REQUIRE(wec);
  const auto& v = wec->value.workflow_execution_config();
  CHECK(v.interruptible().value());                       // workflow row
  CHECK(v.max_parallelism() == 3);                        // project row fills
  CHECK(v.annotations().values().at("owner") == "team");  // project row fills
  CHECK(v.labels().values().empty());                     // project-domain row is not consulted
  CHECK(v.overwrite_cache());                             // platform default fills
  CHECK(wec->parts.at("interruptible").level == Level::workflow);
  CHECK(wec->parts.at("maxParallelism").level == Level::project);
  CHECK(wec->parts.at("overwriteCache").level == Level::platform_global);
  // At project-domain level the project-domain row is the most specific one.
  auto pd = h.resolve(Scope{"p", "development", ""});
  const auto& pv = get(pd, admin::WORKFLOW_EXECUTION_CONFIG)->value.workflow_execution_config();
  CHECK(pv.labels().values().at("env") == "dev");
  CHECK(pv.max_parallelism() == 3);
}

TEST_CASE("resolve: CLUSTER_RESOURCE overlays row keys on the platform map", "[resolve]") {
  auto r = flytecd::test::load_one(k_repo);
  Hierarchy h(r.documents);
  auto pd = h.resolve(Scope{"p", "development", ""});
  const auto* cr = get(pd, admin::CLUSTER_RESOURCE);
  REQUIRE(cr);
  const auto& attrs = cr->value.cluster_resource_attributes().attributes();
  CHECK(attrs.at("projectQuotaCpu") == "8");
  CHECK(attrs.at("projectQuotaMemory") == "1Ti");
  CHECK(cr->parts.at("projectQuotaCpu").level == Level::project_domain);
  CHECK(cr->parts.at("projectQuotaMemory").level == Level::platform_global);
}

TEST_CASE("collate: attributes are marked inherited with their source", "[collate]") {
  auto r = flytecd::test::load_one(k_repo);
  Hierarchy h(r.documents);
  Scope at{"p", "development", "wf"};
  auto doc = collate(at, h.resolve(at));
  CHECK(doc["level"] == "workflow");
  const auto& label = doc["attributes"]["executionClusterLabel"];
  CHECK(label["inherited"] == false);
  CHECK(label["source"]["level"] == "workflow");
  CHECK(label["value"]["value"] == "wf-cluster");
  const auto& tr = doc["attributes"]["taskResourceAttributes"];
  CHECK(tr["inherited"] == true);
  CHECK(tr["source"]["level"] == "project-domain");
  CHECK(tr["source"]["file"] == "a.yaml:30:3");
  const auto& wec = doc["attributes"]["workflowExecutionConfig"];
  CHECK(wec["fields"]["maxParallelism"]["inherited"] == true);
  CHECK(wec["fields"]["interruptible"]["inherited"] == false);
}

TEST_CASE("resolve: workflow scopes under a project-domain are listed", "[resolve]") {
  auto r = flytecd::test::load_one(k_repo);
  Hierarchy h(r.documents);
  auto s = h.workflow_scopes("p", "development");
  REQUIRE(s.size() == 1);
  CHECK(s[0].workflow == "wf");
}

}  // namespace FLYTECD_UNITY_ID
