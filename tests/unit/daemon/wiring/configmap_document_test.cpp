// ConfigMap mode (RFC 3749): rendering the overrides document is pure and deterministic.
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <algorithm>

#include "daemon/wiring/wiring.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace admin = flyteidl::admin;
using flytecd::model::Documents;

namespace {

Documents sample() {
  Documents d;
  flytecd::model::Override wf;
  wf.scope = {"flytesnacks", "development", "core.hello"};
  wf.type = admin::EXECUTION_QUEUE;
  wf.value.edit([&](auto& v) { v.mutable_execution_queue_attributes()->add_tags("gpu"); });
  d.overrides.push_back(wf);
  flytecd::model::Override pd;
  pd.scope = {"flytesnacks", "development", ""};
  pd.type = admin::TASK_RESOURCE;
  pd.value.edit(
      [&](auto& v) { v.mutable_task_resource_attributes()->mutable_defaults()->set_cpu("1"); });
  pd.value.edit(
      [&](auto& v) { v.mutable_task_resource_attributes()->mutable_limits()->set_memory("2Gi"); });
  d.overrides.push_back(pd);
  flytecd::model::Override pd2;
  pd2.scope = {"flytesnacks", "development", ""};
  pd2.type = admin::EXECUTION_CLUSTER_LABEL;
  pd2.value.edit([&](auto& v) { v.mutable_execution_cluster_label()->set_value("east"); });
  d.overrides.push_back(pd2);
  flytecd::model::PlatformDefault dom;
  dom.domain = "production";
  dom.type = admin::EXECUTION_CLUSTER_LABEL;
  dom.value.edit([&](auto& v) { v.mutable_execution_cluster_label()->set_value("prod-cluster"); });
  d.platform_defaults.push_back(dom);
  flytecd::model::PlatformDefault global;
  global.type = admin::TASK_RESOURCE;
  global.value.edit([&](auto& v) {
    v.mutable_task_resource_attributes()->mutable_defaults()->set_memory("500Mi");
  });
  d.platform_defaults.push_back(global);
  return d;
}

}  // namespace

TEST_CASE("configmap: overrides render as RFC 3749 entries, most general scope first", "[k8s]") {
  const std::string doc = flytecd::wiring::configmap_document(sample());
  INFO(doc);
  YAML::Node list = YAML::Load(doc);
  REQUIRE(list.IsSequence());
  REQUIRE(list.size() == 4);
  // Global platform defaults: no scope keys.
  CHECK_FALSE(list[0]["domain"]);
  CHECK(list[0]["overrides"]["taskResourceAttributes"]["defaults"]["memory"].as<std::string>() ==
        "500Mi");
  CHECK(list[1]["domain"].as<std::string>() == "production");
  CHECK_FALSE(list[1]["project"]);
  // Two attribute types of one scope share one entry.
  CHECK(list[2]["project"].as<std::string>() == "flytesnacks");
  CHECK(list[2]["domain"].as<std::string>() == "development");
  CHECK_FALSE(list[2]["workflow"]);
  CHECK(list[2]["overrides"]["taskResourceAttributes"]["limits"]["memory"].as<std::string>() ==
        "2Gi");
  CHECK(list[2]["overrides"]["executionClusterLabel"]["value"].as<std::string>() == "east");
  CHECK(list[3]["workflow"].as<std::string>() == "core.hello");
  CHECK(list[3]["overrides"]["executionQueueAttributes"]["tags"][0].as<std::string>() == "gpu");
}

TEST_CASE("configmap: the document does not depend on document order", "[k8s]") {
  Documents a = sample();
  Documents b = sample();
  std::reverse(b.overrides.begin(), b.overrides.end());
  std::reverse(b.platform_defaults.begin(), b.platform_defaults.end());
  CHECK(flytecd::wiring::configmap_document(a) == flytecd::wiring::configmap_document(b));
  CHECK(YAML::Load(flytecd::wiring::configmap_document(Documents{})).size() == 0);
}

}  // namespace FLYTECD_UNITY_ID
