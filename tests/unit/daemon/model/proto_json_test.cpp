// json_to_message sets the JSON the YAML converter writes directly through reflection; anything
// else goes to protobuf's JSON parser. The direct path must give the very message the parser
// gives, or decline: checked on every override of repo-layout-example, on a value of every
// attribute type, and on the inputs it must decline.
#include <google/protobuf/util/json_util.h>
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "daemon/common/json_dump.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "flyteidl/admin/matchable_resource.pb.h"
#include "test_paths.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

namespace fs = std::filesystem;
namespace admin = flyteidl::admin;
using flytecd::model::canonical_bytes;
using flytecd::model::json_to_message_direct;

// Protobuf's own parser on the JSON's text; "" or its error.
std::string parsed_by_protobuf(const nlohmann::json& j, admin::MatchingAttributes& out) {
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = false;
  auto st = google::protobuf::util::JsonStringToMessage(flytecd::dump_json(j), &out, opts);
  return st.ok() ? "" : std::string(st.message());
}

// The direct path took `j` and gave the parser's message.
void same_as_protobuf(const nlohmann::json& j) {
  INFO(flytecd::dump_json(j));
  admin::MatchingAttributes direct, reference;
  REQUIRE(json_to_message_direct(j, &direct));
  REQUIRE(parsed_by_protobuf(j, reference).empty());
  CHECK(canonical_bytes(direct) == canonical_bytes(reference));
  CHECK(direct.DebugString() == reference.DebugString());
}

// The direct path declined `j`; json_to_message still answers as protobuf's parser does.
void declined(const nlohmann::json& j) {
  INFO(flytecd::dump_json(j));
  admin::MatchingAttributes direct, via_api, reference;
  CHECK_FALSE(json_to_message_direct(j, &direct));
  const std::string err = parsed_by_protobuf(j, reference);
  CHECK(flytecd::model::json_to_message(j, &via_api) == err);
  if (err.empty()) CHECK(canonical_bytes(via_api) == canonical_bytes(reference));
}

// The spec of an Overrides document as kind_overrides converts it: one MatchingAttributes per
// attribute, {jsonName: converted value}.
std::vector<nlohmann::json> converted_specs(const YAML::Node& spec, const std::string& file) {
  std::vector<nlohmann::json> out;
  const auto* d = admin::MatchingAttributes::descriptor();
  for (const auto& kv : spec) {
    const auto* f = d->FindFieldByCamelcaseName(kv.first.Scalar());
    if (!f) f = d->FindFieldByName(kv.first.Scalar());
    if (!f) continue;
    flytecd::model::Diagnostics diags;
    auto json = flytecd::model::yaml_to_proto_json(kv.second, f->message_type(), file,
                                                   kv.first.Scalar(), diags);
    if (!json || !diags.empty()) continue;
    out.push_back(nlohmann::json{{f->json_name(), *json}});
  }
  return out;
}

}  // namespace

TEST_CASE("proto json: the direct path gives protobuf's message for every override of the example",
          "[model][proto_json]") {
  size_t checked = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(fs::path(FLYTECD_SOURCE_DIR) / "repo-layout-example")) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& doc : YAML::LoadAll(text.str())) {
      if (!doc.IsMap() || !doc["spec"] || !doc["spec"].IsMap()) continue;
      const std::string kind = doc["kind"] ? doc["kind"].Scalar() : "";
      if (kind != "Overrides" && kind != "PlatformDefaults") continue;
      for (const auto& j : converted_specs(doc["spec"], entry.path().string())) {
        same_as_protobuf(j);
        ++checked;
      }
    }
  }
  CHECK(checked >= 10);
}

TEST_CASE("proto json: the direct path gives protobuf's message for every attribute type",
          "[model][proto_json]") {
  const char* yaml = R"(
taskResourceAttributes: {defaults: {cpu: "1", memory: 1Gi, gpu: "0"}, limits: {cpu: 4}}
clusterResourceAttributes: {attributes: {projectQuotaCpu: "16", "ünïcode key": "välue"}}
executionQueueAttributes: {tags: [gpu, critical, ""]}
executionClusterLabel: {value: east}
qualityOfService: {tier: HIGH}
pluginOverrides:
  overrides:
    - {taskType: python, pluginId: [a, b], missingPluginBehavior: USE_DEFAULT}
    - {task_type: spark, plugin_id: [c]}
workflowExecutionConfig:
  maxParallelism: 25
  securityContext: {runAs: {k8sServiceAccount: sa, iamRole: role}, secrets: [{group: g, key: k}]}
  rawOutputDataConfig: {outputLocationPrefix: "s3://bucket/x"}
  labels: {values: {team: ml, env: ""}}
  annotations: {values: {a: b}}
  interruptible: true
  overwriteCache: false
  envs: {values: [{key: A, value: "1"}]}
clusterAssignment: {clusterPoolName: pool-a}
)";
  const YAML::Node spec = YAML::Load(yaml);
  const auto specs = converted_specs(spec, "inline.yaml");
  CHECK(specs.size() == 8);
  for (const auto& j : specs) same_as_protobuf(j);
  // Integers as protobuf prints 64-bit ones (strings), negative and at the edges of int32.
  same_as_protobuf({{"workflowExecutionConfig", {{"maxParallelism", "2147483647"}}}});
  same_as_protobuf({{"workflowExecutionConfig", {{"maxParallelism", -2147483648LL}}}});
  same_as_protobuf({{"workflowExecutionConfig", {{"maxParallelism", "-7"}}}});
  same_as_protobuf({{"workflowExecutionConfig", {{"max_parallelism", 3}}}});
  same_as_protobuf({{"workflowExecutionConfig", nlohmann::json::object()}});
}

TEST_CASE("proto json: the direct path declines what only protobuf's parser decides",
          "[model][proto_json]") {
  using J = nlohmann::json;
  declined({{"noSuchAttributes", J::object()}});                                 // unknown
  declined({{"executionClusterLabel", {{"value", nullptr}}}});                   // null
  declined({{"executionClusterLabel", nullptr}});                                // null message
  declined({{"workflowExecutionConfig", {{"maxParallelism", 2147483648LL}}}});   // over int32
  declined({{"workflowExecutionConfig", {{"maxParallelism", "2147483648"}}}});   // same, text
  declined({{"workflowExecutionConfig", {{"maxParallelism", "-2147483649"}}}});  // under
  declined({{"workflowExecutionConfig", {{"maxParallelism", "007"}}}});          // leading 0
  declined({{"workflowExecutionConfig", {{"maxParallelism", "-0"}}}});           // "-0"
  declined({{"workflowExecutionConfig", {{"maxParallelism", 1.5}}}});            // not whole
  declined({{"workflowExecutionConfig", {{"maxParallelism", true}}}});           // wrong kind
  declined({{"qualityOfService", {{"tier", "NO_SUCH_TIER"}}}});                  // enum name
  declined({{"qualityOfService", {{"tier", 2}}}});                               // enum number
  declined({{"executionQueueAttributes", {{"tags", {"a", nullptr}}}}});          // null item
  declined({{"executionQueueAttributes", {{"tags", "a"}}}});                     // not a list
  declined({{"executionClusterLabel", {{"value", "\xff\xfe"}}}});                // not UTF-8
  declined({{"workflowExecutionConfig", {{"interruptible", "yes"}}}});           // wrapper kind
  declined({{"taskResourceAttributes", J::array()}});                            // not a mapping
  // Both names of one field, and two members of the oneof: protobuf's parser decides.
  declined({{"workflowExecutionConfig", {{"maxParallelism", 1}, {"max_parallelism", 2}}}});
  declined(
      {{"executionClusterLabel", {{"value", "a"}}}, {"executionQueueAttributes", J::object()}});
}

}  // namespace FLYTECD_UNITY_ID
