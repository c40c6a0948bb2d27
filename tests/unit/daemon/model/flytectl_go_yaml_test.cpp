#include "daemon/model/flytectl_go_yaml.hpp"

#include <catch2/catch.hpp>

#include "flyteidl/admin/matchable_resource.pb.h"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::model;
using namespace flytecd::model::flytectl;
namespace admin = flyteidl::admin;

namespace {

std::optional<nlohmann::json> read(const std::string& yaml, const google::protobuf::Descriptor* d,
                                   const std::string& field, Diagnostics& diags) {
  Origins origins;
  return read_go_field(YAML::Load(yaml), d->FindFieldByName(field), "f.yaml", field, field, diags,
                       origins);
}

}  // namespace

TEST_CASE("flytectl yaml: keys are protobuf names in any case, oneof members are no keys",
          "[flytectl]") {
  CHECK(fold_equal("MAX_Parallelism", "max_parallelism"));
  CHECK_FALSE(fold_equal("maxParallelism", "max_parallelism"));
  const auto* wec = admin::WorkflowExecutionConfig::descriptor();
  REQUIRE(go_field(wec, "Max_Parallelism"));
  CHECK(go_field(wec, "Max_Parallelism")->name() == "max_parallelism");
  CHECK_FALSE(go_field(wec, "maxParallelism"));
  // Every MatchingAttributes field is a member of the oneof `target`: a Go interface.
  CHECK_FALSE(go_field(admin::MatchingAttributes::descriptor(), "task_resource_attributes"));
  CHECK(go_field_names(admin::TaskResourceAttributes::descriptor()) == "defaults, limits");
}

TEST_CASE("flytectl yaml: scalars headed for strings are stringified as sigs.k8s.io/yaml does",
          "[flytectl]") {
  CHECK(go_string(YAML::Load("yes")) == "true");
  CHECK(go_string(YAML::Load("Off")) == "false");
  CHECK(go_string(YAML::Load("\"yes\"")) == "yes");
  CHECK(is_null(YAML::Load("~")));
  CHECK_FALSE(is_null(YAML::Load("\"~\"")));

  Diagnostics diags;
  auto attrs = read("{a: 4, b: ~, c: on}", admin::ClusterResourceAttributes::descriptor(),
                    "attributes", diags);
  REQUIRE(attrs);
  CHECK(*attrs == nlohmann::json({{"a", "4"}, {"b", ""}, {"c", "true"}}));
}

TEST_CASE("flytectl yaml: enums as numbers, wrappers as {value}, integers unquoted", "[flytectl]") {
  Diagnostics diags;
  auto po = read("[{task_type: x, missing_plugin_behavior: 1}]",
                 admin::PluginOverrides::descriptor(), "overrides", diags);
  REQUIRE(po);
  CHECK((*po)[0]["missingPluginBehavior"] == "USE_DEFAULT");
  CHECK((*po)[0]["taskType"] == "x");

  const auto* wec = admin::WorkflowExecutionConfig::descriptor();
  auto w = read("{value: yes}", wec, "interruptible", diags);
  REQUIRE(w);
  CHECK(*w == true);
  CHECK(diags.empty());

  CHECK_FALSE(read("true", wec, "interruptible", diags));
  CHECK_FALSE(read("\"5\"", wec, "max_parallelism", diags));
  CHECK_FALSE(read("3000000000", wec, "max_parallelism", diags));
  REQUIRE(diags.size() == 3);
  for (const auto& d : diags) CHECK(d.kind == DiagKind::wrong_type);
  CHECK(diags[0].where.file == "f.yaml");
}

}  // namespace FLYTECD_UNITY_ID
