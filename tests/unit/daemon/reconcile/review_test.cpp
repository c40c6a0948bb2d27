#include <catch2/catch.hpp>

#include "daemon/reconcile/review.hpp"
#include "tests/unit/daemon/model/test_util.hpp"

using namespace flytecd;

namespace {
const char* k_base = R"(apiVersion: flytecd/v1
kind: Project
id: p
---
apiVersion: flytecd/v1
kind: Overrides
project: p
domain: development
spec:
  executionClusterLabel: {value: old}
---
apiVersion: flytecd/v1
kind: Overrides
project: p
domain: development
workflow: wf.a
spec:
  executionQueueAttributes: {tags: [a]}
---
apiVersion: flytecd/v1
kind: Overrides
project: p
domain: development
workflow: wf.b
spec:
  executionClusterLabel: {value: b-only}
---
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: core}
project: p
domain: development
version: v1
package: oci://r.example.com/a/core:v1
)";
}  // namespace

TEST_CASE(
    "review: a changed project-domain value shows old and new effective values and who inherits it",
    "[review]") {
  auto base = test::load_one(k_base);
  REQUIRE(base.ok());
  std::string head_yaml = k_base;
  head_yaml.replace(head_yaml.find("value: old"), 10, "value: new");
  head_yaml.replace(head_yaml.find("version: v1\npackage: oci://r.example.com/a/core:v1"), 50,
                    "version: v2\npackage: oci://r.example.com/a/core:v2");
  head_yaml += "---\napiVersion: flytecd/v1\nkind: Project\nid: q\n";
  auto head = test::load_one(head_yaml);
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  CHECK(r.overrides_changed == 1);
  CHECK(r.projects_added == 1);
  CHECK(r.registrations_changed == 1);
  CHECK(r.deactivations == 0);
  CHECK(reconcile::review_summary(r) ==
        "overrides: +0 ~1 -0 · projects: +1 · registrations: +0 ~1 · deactivations: 0");
  const reconcile::ReviewChange* label = nullptr;
  for (const auto& c : r.changes)
    if (c.kind == "override") label = &c;
  REQUIRE(label);
  CHECK(label->old_effective["value"] == "old");
  CHECK(label->new_effective["value"] == "new");
  // wf.a inherits the project-domain label; wf.b has its own.
  CHECK(label->inheriting_workflows == 1);
  REQUIRE(label->inheriting_examples.size() == 1);
  CHECK(label->inheriting_examples[0] == "p/development/wf.a");
  auto md = reconcile::render_review_markdown(r, "base", "head");
  CHECK(md.find("inherited by 1 workflow scope") != std::string::npos);
  CHECK(md.find("<details>") != std::string::npos);
}

TEST_CASE(
    "review: removed registrations count as deactivations, identical revisions have no changes",
    "[review]") {
  auto base = test::load_one(k_base);
  auto same = reconcile::review(base.documents, base.documents);
  CHECK(same.empty());
  CHECK(reconcile::render_review_text(same, "a", "b").find("no changes") != std::string::npos);
  std::string head_yaml = k_base;
  head_yaml.erase(head_yaml.find("---\napiVersion: flytecd/v1\nkind: WorkflowRegistration"));
  auto head = test::load_one(head_yaml);
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  CHECK(r.registrations_removed == 1);
  CHECK(r.deactivations == 1);
}

TEST_CASE("review: markdown is capped at 65,000 characters with a truncation note", "[review]") {
  std::string base_yaml = "apiVersion: flytecd/v1\nkind: Project\nid: p\n";
  std::string head_yaml = base_yaml;
  for (int i = 0; i < 900; ++i)
    head_yaml +=
        "---\napiVersion: flytecd/v1\nkind: Overrides\nproject: p\ndomain: staging\nworkflow: wf." +
        std::to_string(i) + "\nspec:\n  executionQueueAttributes: {tags: [a-long-queue-name-" +
        std::to_string(i) + "]}\n";
  auto base = test::load_one(base_yaml);
  auto head = test::load_one(head_yaml);
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  CHECK(r.overrides_added == 900);
  auto md = reconcile::render_review_markdown(r, "a", "b");
  CHECK(md.size() <= 65000);
  CHECK(md.find("Truncated") != std::string::npos);
  CHECK(md.find("overrides: +900") != std::string::npos);
}
