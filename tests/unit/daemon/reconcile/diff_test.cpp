#include "daemon/reconcile/diff.hpp"

#include <catch2/catch.hpp>
#include <map>

#include "daemon/reconcile/plan.hpp"
#include "daemon/reconcile/render.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::reconcile;
namespace admin = flyteidl::admin;

namespace {
OverrideState quota(const std::string& cpu) {
  OverrideState o;
  o.scope = model::Scope{"flytesnacks", "development", ""};
  o.type = admin::CLUSTER_RESOURCE;
  (*o.value.mutable_cluster_resource_attributes()->mutable_attributes())["projectQuotaCpu"] = cpu;
  (*o.value.mutable_cluster_resource_attributes()->mutable_attributes())["projectQuotaMemory"] =
      "16Gi";
  return o;
}
}  // namespace

TEST_CASE("diff: a changed field is named by its JSON path with both values", "[diff]") {
  auto live = quota("64"), desired = quota("8");
  auto d = diff_messages(&live.value, &desired.value);
  REQUIRE(d.size() == 1);
  CHECK(d[0].path == "clusterResourceAttributes.attributes.projectQuotaCpu");
  CHECK(d[0].before == "\"64\"");
  CHECK(d[0].after == "\"8\"");
  CHECK(change_line(d[0]) ==
        "~ clusterResourceAttributes.attributes.projectQuotaCpu: live \"64\", Git \"8\"");
  CHECK(diff_messages(&live.value, &live.value).empty());
}

TEST_CASE("diff: added and removed fields, and a whole message set or unset", "[diff]") {
  admin::MatchingAttributes a, b;
  a.mutable_workflow_execution_config()->set_max_parallelism(4);
  b.mutable_workflow_execution_config()->set_max_parallelism(25);
  b.mutable_workflow_execution_config()
      ->mutable_security_context()
      ->mutable_run_as()
      ->set_k8s_service_account("sa");
  auto d = diff_messages(&a, &b);
  REQUIRE(d.size() == 2);
  CHECK(change_line(d[0]) == "~ workflowExecutionConfig.maxParallelism: live 4, Git 25");
  CHECK(change_line(d[1]) ==
        "+ workflowExecutionConfig.securityContext.runAs.k8sServiceAccount: live (unset), Git "
        "\"sa\"");
  auto gone = diff_messages(&a, nullptr);
  REQUIRE(gone.size() == 1);
  CHECK(change_line(gone[0]) == "- workflowExecutionConfig.maxParallelism: live 4, Git (unset)");
}

TEST_CASE("diff: a list that differs is one change, long values are elided with a note", "[diff]") {
  admin::MatchingAttributes a, b;
  a.mutable_execution_queue_attributes()->add_tags("cpu");
  b.mutable_execution_queue_attributes()->add_tags("cpu");
  b.mutable_execution_queue_attributes()->add_tags("gpu");
  auto d = diff_messages(&a, &b);
  REQUIRE(d.size() == 1);
  CHECK(d[0].path == "executionQueueAttributes.tags");
  CHECK(d[0].after == "[\"cpu\",\"gpu\"]");
  admin::MatchingAttributes big;
  big.mutable_execution_cluster_label()->set_value(std::string(5000, 'x'));
  auto e = diff_messages(&a, &big, 100);
  bool elided = false;
  for (const auto& c : e) {
    CHECK(c.before.size() <= 104);
    CHECK(c.after.size() <= 104);
    elided |= c.elided;
  }
  CHECK(elided);
}

TEST_CASE("diff: drift carries its values, text, JSON and markdown show them", "[diff]") {
  State desired, live;
  auto want = quota("8"), have = quota("64");
  const auto key = override_key(want.scope, want.type);
  desired.overrides[key] = want;
  live.overrides[key] = have;
  Managed m{{key, {hash_of(want), "r1"}}};
  Policy report_only;
  report_only.self_heal = false;
  auto p = plan(desired, live, m, report_only);
  REQUIRE(p.drift.size() == 1);
  REQUIRE(p.drift[0].changes.size() == 1);
  CHECK(p.drift[0].changes[0].before == "\"64\"");
  const auto text = render_text(p, "t");
  CHECK(
      text.find("~ clusterResourceAttributes.attributes.projectQuotaCpu: live \"64\", Git \"8\"") !=
      std::string::npos);
  auto j = render_json(p, "t");
  CHECK(j["drift"][0]["changes"][0]["live"] == "64");
  CHECK(j["drift"][0]["changes"][0]["git"] == "8");
  // Self-heal on: the reverting step shows the same change.
  auto healed = plan(desired, live, m, Policy{});
  REQUIRE(healed.steps.size() == 1);
  auto sc = step_changes(healed.steps[0]);
  REQUIRE(sc.size() == 1);
  CHECK(sc[0].path == "clusterResourceAttributes.attributes.projectQuotaCpu");
  const auto md = render_markdown(healed, "t");
  CHECK(md.find("projectQuotaCpu: &quot;") == std::string::npos);
  CHECK(md.find("<code>~ clusterResourceAttributes.attributes.projectQuotaCpu: live \"64\", Git "
                "\"8\"</code>") != std::string::npos);
}

// Issue 13: a value containing | and backticks broke the GFM table row.
TEST_CASE("diff: markdown cells escape pipes, backticks and HTML", "[diff]") {
  State desired, live;
  OverrideState want;
  want.scope = model::Scope{"p", "", ""};
  want.type = admin::EXECUTION_CLUSTER_LABEL;
  want.value.mutable_execution_cluster_label()->set_value("a|b`c<d>");
  OverrideState have = want;
  have.value.mutable_execution_cluster_label()->set_value("old");
  const auto key = override_key(want.scope, want.type);
  desired.overrides[key] = want;
  live.overrides[key] = have;
  auto md = render_markdown(plan(desired, live, {}, Policy{}), "t");
  CHECK(md.find("a&#124;b&#96;c&lt;d&gt;") != std::string::npos);
  // Every table row still has exactly four cell separators.
  size_t rows = 0, pos = 0;
  while ((pos = md.find("\n| ~ update", pos)) != std::string::npos) {
    auto end = md.find('\n', pos + 1);
    auto row = md.substr(pos + 1, end - pos - 1);
    CHECK(std::count(row.begin(), row.end(), '|') == 4);
    ++rows;
    pos = end;
  }
  CHECK(rows == 1);
}

TEST_CASE("diff: JSON holds typed values and reads the older history shape back", "[diff]") {
  // Issue 21: `"live": "\"777\""` was JSON text inside a string; jq's `.live == "777"` never
  // matched. Strings, numbers, objects and unset sides are JSON values now.
  const auto changes = diff_json(
      nlohmann::json{{"cpu", "777"}, {"n", 4}, {"obj", {{"k", nlohmann::json::array({1})}}}},
      nlohmann::json{{"cpu", "16"}, {"gone", true}});
  REQUIRE(changes.size() == 4);
  std::map<std::string, nlohmann::ordered_json> by_path;
  for (const auto& c : changes) by_path[c.path] = change_json(c);
  CHECK(by_path["cpu"]["live"] == "777");
  CHECK(by_path["cpu"]["git"] == "16");
  CHECK(by_path["n"]["live"] == 4);
  CHECK(by_path["n"]["git"].is_null());
  CHECK(by_path["obj.k"]["live"] == nlohmann::ordered_json::array({1}));
  CHECK(by_path["gone"]["live"].is_null());
  CHECK(by_path["gone"]["git"] == true);
  CHECK(change_line(changes[0]) == "~ cpu: live \"777\", Git \"16\"");
  for (const auto& c : changes) {
    const auto back = change_from_json(change_json(c));
    CHECK(back.before == c.before);
    CHECK(back.after == c.after);
    CHECK(change_line(back) == change_line(c));
  }
  CHECK(change_line(changes[1], k_base_head) == "- n: base 4, head (unset)");
  // The ledger's rows written before: "desired", values as JSON text in strings.
  const auto old =
      change_from_json(nlohmann::json::parse(R"({"path":"a","live":"\"64\"","desired":null})"));
  CHECK(change_line(old) == "- a: live \"64\", Git (unset)");
  // A value over the bound is cut: it stays text and says so.
  const auto cut =
      diff_json(nlohmann::json{{"s", std::string(300, 'x')}}, nlohmann::json{{"s", "y"}});
  REQUIRE(cut.size() == 1);
  const auto cj = change_json(cut[0]);
  CHECK(cj["elided"] == true);
  CHECK(cj["live"].is_string());
  CHECK(cj["git"] == "y");
  CHECK(change_from_json(cj).before == cut[0].before);
  CHECK(change_from_json(cj).after == "\"y\"");
}

}  // namespace FLYTECD_UNITY_ID
