#include "daemon/model/attribute_checks.hpp"

#include <catch2/catch.hpp>

#include "tests/unit/daemon/model/test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::model;
using flytecd::test::find;
using flytecd::test::load_one;

TEST_CASE("attribute checks: cluster-resource quota keys must be Kubernetes quantities",
          "[loader][attribute_checks]") {
  auto r = load_one(R"(apiVersion: flytecd/v1
kind: Overrides
project: p
domain: development
spec:
  clusterResourceAttributes:
    attributes:
      projectQuotaCpu: "4x"
      projectQuotaMemory: 64Gi
      projectQuotaNvidiaGpu: "-1"
      defaultIamRole: "not-a-quantity"
)");
  std::vector<const Diagnostic*> bad;
  for (const auto& d : r.diagnostics)
    if (d.kind == DiagKind::bad_quantity) bad.push_back(&d);
  REQUIRE(bad.size() == 2);  // defaultIamRole is not a quantity key; 64Gi is fine
  CHECK(bad[0]->where.file == "a.yaml");
  CHECK(bad[0]->where.line == 8);
  CHECK(bad[0]->path == "spec.clusterResourceAttributes.attributes.projectQuotaCpu");
  CHECK(bad[0]->message.find("'4x' is not a Kubernetes quantity") != std::string::npos);
  CHECK(bad[0]->message.find("projectQuotaCpu") != std::string::npos);
  CHECK(bad[0]->expected.find("quantity") != std::string::npos);
  CHECK(bad[1]->where.line == 10);
  CHECK(bad[1]->path == "spec.clusterResourceAttributes.attributes.projectQuotaNvidiaGpu");
  CHECK(bad[1]->message.find("negative") != std::string::npos);
  CHECK_FALSE(r.ok());

  // The same keys in a PlatformDefaults document, and valid values everywhere.
  auto platform = load_one(R"(apiVersion: flytecd/v1
kind: PlatformDefaults
spec:
  clusterResourceAttributes:
    attributes: {projectQuotaMemory: 1.5Gb}
)");
  REQUIRE(find(platform, DiagKind::bad_quantity));
  CHECK(find(platform, DiagKind::bad_quantity)->where.line == 5);
  CHECK(load_one("apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nspec:\n"
                 "  clusterResourceAttributes:\n    attributes: {projectQuotaCpu: \"256\", "
                 "projectQuotaMemory: 1Ti, projectQuotaNvidiaGpu: \"0\"}\n")
            .ok());
}

TEST_CASE("attribute checks: a negative maxParallelism is an error", "[loader][attribute_checks]") {
  auto r = load_one(R"(apiVersion: flytecd/v1
kind: Overrides
project: p
domain: staging
spec:
  workflowExecutionConfig:
    maxParallelism: -3
)");
  const auto* d = find(r, DiagKind::invalid_value);
  REQUIRE(d);
  CHECK(d->where.line == 7);
  CHECK(d->path == "spec.workflowExecutionConfig.maxParallelism");
  CHECK(d->message.find("-3 is negative") != std::string::npos);
  CHECK(load_one("apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nspec:\n"
                 "  workflow_execution_config: {max_parallelism: 0}\n")
            .ok());
  CHECK(load_one("apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nspec:\n"
                 "  workflowExecutionConfig: {maxParallelism: 40}\n")
            .ok());
  CHECK_FALSE(load_one("apiVersion: flytecd/v1\nkind: Overrides\nproject: p\nspec:\n"
                       "  workflow_execution_config: {max_parallelism: -1}\n")
                  .ok());
}

TEST_CASE("attribute checks: the well-known quota keys", "[attribute_checks]") {
  CHECK(is_quantity_template_key("projectQuotaCpu"));
  CHECK(is_quantity_template_key("projectQuotaMemory"));
  CHECK(is_quantity_template_key("projectQuotaNvidiaGpu"));
  CHECK_FALSE(is_quantity_template_key("defaultIamRole"));
}

}  // namespace FLYTECD_UNITY_ID
