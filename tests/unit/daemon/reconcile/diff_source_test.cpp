// Issue 13: every field change names the file:line of the desired value in Git (the YAML node's
// mark), through loader -> desired state -> plan -> text, JSON and markdown.
#include <catch2/catch.hpp>

#include "daemon/reconcile/diff.hpp"
#include "daemon/reconcile/plan.hpp"
#include "daemon/reconcile/render.hpp"
#include "tests/unit/daemon/model/test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace admin = flyteidl::admin;

namespace {

const char* k_project_yaml = R"(apiVersion: flytecd/v1
kind: Project
id: data-eng
name: Data engineering
---
apiVersion: flytecd/v1
kind: Overrides
project: data-eng
domain: production
spec:
  clusterResourceAttributes:
    attributes:
      projectQuotaCpu: "8"
      projectQuotaMemory: 16Gi
  workflow_execution_config:
    max_parallelism: 25
)";

reconcile::State desired() {
  auto r = test::load({test::file("projects/data-eng/project.yaml", k_project_yaml)});
  INFO((r.diagnostics.empty() ? "" : model::format(r.diagnostics[0])));
  REQUIRE(r.ok());
  return reconcile::desired_state(r.documents);
}

}  // namespace

TEST_CASE("diff source: a drifted field names the line of its desired value", "[diff]") {
  const auto want = desired();
  reconcile::State live = want;
  reconcile::Managed managed;
  for (auto& [key, o] : live.overrides) {
    managed[key] = {reconcile::hash_of(o), "rev"};
    o.source = nullptr;  // what a sink observes has no source
    if (o.type == admin::CLUSTER_RESOURCE)
      (*o.value.mutable_cluster_resource_attributes()->mutable_attributes())["projectQuotaCpu"] =
          "64";
    else
      o.value.mutable_workflow_execution_config()->set_max_parallelism(4);
  }
  for (const auto& [id, p] : live.projects)
    managed[reconcile::project_key(id)] = {reconcile::hash_of(p), "rev"};
  const auto plan = reconcile::plan(want, live, managed, {});
  REQUIRE(plan.drift.size() == 2);
  std::vector<std::string> lines;
  for (const auto& d : plan.drift)
    for (const auto& c : d.changes) lines.push_back(reconcile::change_line(c));
  CHECK(lines ==
        std::vector<std::string>{
            "~ clusterResourceAttributes.attributes.projectQuotaCpu: live \"64\", Git \"8\" "
            "(projects/data-eng/project.yaml:13)",
            "~ workflowExecutionConfig.maxParallelism: live 4, Git 25 "
            "(projects/data-eng/project.yaml:16)"});
  // The steps that revert the drift carry the same locations, in text, JSON and markdown.
  const auto text = reconcile::render_text(plan, "t");
  CHECK(text.find("live \"64\", Git \"8\" (projects/data-eng/project.yaml:13)") !=
        std::string::npos);
  const auto json = reconcile::render_json(plan, "t");
  CHECK(json["drift"][0]["changes"][0]["source"] == "projects/data-eng/project.yaml:13");
  CHECK(json["steps"][0]["changes"][0]["source"] == "projects/data-eng/project.yaml:13");
  const auto md = reconcile::render_markdown(plan, "t");
  CHECK(md.find("projects/data-eng/project.yaml:16") != std::string::npos);
}

TEST_CASE("diff source: a field Git adds falls back to its closest declared parent", "[diff]") {
  std::vector<reconcile::FieldChange> changes{
      {"a.b.c", "", "1", false, ""}, {"x.y", "1", "2", false, ""}, {"a", "1", "", false, ""}};
  flytecd::sinks::FieldLines lines;
  lines.set("a.b", 7);
  lines.set("a", 6);
  reconcile::locate(changes, "f.yaml", 3, lines);
  CHECK(changes[0].source == "f.yaml:7");
  CHECK(changes[1].source == "f.yaml:3");  // the spec key
  CHECK(changes[2].source == "f.yaml:6");
  std::vector<reconcile::FieldChange> none{{"a", "1", "2", false, ""}};
  reconcile::locate(none, "", 3, {});
  CHECK(none[0].source.empty());
  CHECK(reconcile::change_line(none[0]) == "~ a: live 1, Git 2");
}

}  // namespace FLYTECD_UNITY_ID
