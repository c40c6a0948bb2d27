#include <catch2/catch.hpp>

#include <algorithm>

#include "daemon/reconcile/review.hpp"
#include "tests/unit/daemon/model/test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

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
  // The blast radius names the scopes whose effective value changes: the project-domain itself
  // and wf.a (wf.b has its own label), then every other workflow of p in development.
  CHECK(label->reaches ==
        std::vector<std::string>{"p/development/wf.a", "every other workflow of p in development"});
  REQUIRE(label->fields.size() == 1);
  CHECK(label->fields[0].path == "value");
  CHECK(label->fields[0].before == "\"old\"");
  CHECK(label->fields[0].after == "\"new\"");
  CHECK(label->fields[0].source == "project-domain (a.yaml:10:3)");
  auto md = reconcile::render_review_markdown(r, "base", "head");
  // A small item is shown open with a field table, not collapsed, and no JSON blob.
  CHECK(md.find("<details>") == std::string::npos);
  CHECK(md.find("#### <code>~ p/development EXECUTION_CLUSTER_LABEL</code>") != std::string::npos);
  CHECK(md.find("| <code>value</code> | <code>\"old\"</code> | <code>\"new\"</code> | "
                "project-domain (a.yaml:10:3) |") != std::string::npos);
  CHECK(md.find("**Reaches:** <code>p/development/wf.a</code>, every other workflow of p in "
                "development") != std::string::npos);
  const auto text = reconcile::render_review_text(r, "base", "head");
  CHECK(text.find("    ~ value: base \"old\", head \"new\"  [project-domain (a.yaml:10:3)]") !=
        std::string::npos);
}

TEST_CASE("review: effective values are field changes, not JSON blobs", "[review]") {
  const char* base_yaml = R"(apiVersion: flytecd/v1
kind: Overrides
project: p
domain: development
spec:
  workflowExecutionConfig:
    maxParallelism: 4
    rawOutputDataConfig: {outputLocationPrefix: "s3://bucket/raw"}
)";
  std::string head_yaml = base_yaml;
  head_yaml.replace(head_yaml.find("maxParallelism: 4"), 17, "maxParallelism: 25");
  auto base = test::load_one(base_yaml);
  auto head = test::load_one(head_yaml);
  REQUIRE(base.ok());
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  REQUIRE(r.changes.size() == 1);
  REQUIRE(r.changes[0].fields.size() == 1);
  CHECK(
      reconcile::change_line(r.changes[0].fields[0]).rfind("~ maxParallelism: live 4, Git 25", 0) ==
      0);
  const auto md = reconcile::render_review_markdown(r, "a", "b");
  CHECK(md.find("| <code>maxParallelism</code> | <code>4</code> | <code>25</code> |") !=
        std::string::npos);
  CHECK(md.find("outputLocationPrefix") == std::string::npos);  // unchanged fields are not shown
  const auto j = reconcile::render_review_json(r, "a", "b");
  CHECK(j["items"][0]["fields"][0]["path"] == "maxParallelism");
  CHECK(j["items"][0]["fields"][0]["before"] == 4);  // JSON values (issue 21)
  CHECK(j["items"][0]["fields"][0]["after"] == 25);
}

TEST_CASE("review: a project-level change names each domain and workflow scope it reaches",
          "[review]") {
  const char* base_yaml = R"(apiVersion: flytecd/v1
kind: Overrides
project: p
spec:
  executionClusterLabel: {value: old}
---
apiVersion: flytecd/v1
kind: Overrides
project: p
domain: production
spec:
  executionClusterLabel: {value: prod-only}
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
domain: staging
workflow: wf.b
spec:
  executionClusterLabel: {value: b-only}
)";
  std::string head_yaml = base_yaml;
  head_yaml.replace(head_yaml.find("value: old"), 10, "value: new");
  auto base = test::load_one(base_yaml);
  auto head = test::load_one(head_yaml);
  REQUIRE(base.ok());
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  REQUIRE(r.changes.size() == 1);
  // production has its own label (not reached); wf.b has its own (not reached).
  CHECK(r.changes[0].reaches == std::vector<std::string>{"p/development", "p/staging",
                                                         "p/development/wf.a",
                                                         "every other workflow of p in development",
                                                         "every other workflow of p in staging"});
  const auto md = reconcile::render_review_markdown(r, "a", "b");
  CHECK(md.find("<code>p/staging</code>") != std::string::npos);
  CHECK(md.find("p/production") == std::string::npos);
}

TEST_CASE("review: pipes, backticks, '<' and newlines in values do not break the table row",
          "[review]") {
  const char* base_yaml = R"(apiVersion: flytecd/v1
kind: Overrides
project: p
domain: development
spec:
  executionClusterLabel: {value: plain}
)";
  std::string head_yaml = base_yaml;
  head_yaml.replace(head_yaml.find("value: plain"), 12, "value: \"a|b `c` <i>d\\ne|\"");
  auto base = test::load_one(base_yaml);
  auto head = test::load_one(head_yaml);
  REQUIRE(base.ok());
  INFO((head.diagnostics.empty() ? "" : model::format(head.diagnostics[0])));
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  const auto md = reconcile::render_review_markdown(r, "a", "b");
  const auto at = md.find("| <code>value</code>");
  REQUIRE(at != std::string::npos);
  const std::string row = md.substr(at, md.find('\n', at) - at);
  // One line with exactly the five cell separators of a four-column row.
  CHECK(std::count(row.begin(), row.end(), '|') == 5);
  CHECK(row.find('`') == std::string::npos);
  CHECK(row.find("<i>") == std::string::npos);
  CHECK(row.find("a&#124;b &#96;c&#96; &lt;i&gt;d\\ne&#124;") != std::string::npos);
  // The next line is the blast radius or the end of the item, not the rest of the value.
  CHECK(md.substr(md.find('\n', at) + 1, 1) == "\n");
}

TEST_CASE("review: only long items are collapsed", "[review]") {
  std::string base_yaml =
      "apiVersion: flytecd/v1\nkind: Overrides\nproject: p\ndomain: development\nspec:\n"
      "  clusterResourceAttributes:\n    attributes:\n";
  std::string head_yaml = base_yaml;
  for (int i = 0; i < 12; ++i) {
    base_yaml += "      k" + std::to_string(i) + ": \"1\"\n";
    head_yaml += "      k" + std::to_string(i) + ": \"2\"\n";
  }
  auto base = test::load_one(base_yaml);
  auto head = test::load_one(head_yaml);
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  REQUIRE(r.changes.size() == 1);
  CHECK(r.changes[0].fields.size() == 12);
  const auto md = reconcile::render_review_markdown(r, "a", "b");
  CHECK(md.find("<details><summary><code>~ p/development CLUSTER_RESOURCE</code> — 12 field(s)") !=
        std::string::npos);
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

TEST_CASE("review: a registration's signer policy is shown, and a change of it called out",
          "[review][signature]") {
  auto base = test::load_one(std::string(k_base) + "verify: {key: keys/cosign.pub}\n");
  REQUIRE(base.ok());
  std::string identity = std::string(k_base) +
                         "verify:\n  matchOIDCIdentity:\n    - {issuer: ^https://issuer$, "
                         "subject: ^ci@example\\.com$}\n";
  auto head = test::load_one(identity);
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  REQUIRE(r.registrations_changed == 1);
  const std::string text = reconcile::render_review_text(r, "a", "b");
  CHECK(text.find("SIGNER POLICY CHANGES: key keys/cosign.pub -> identity ^ci@example\\.com$ "
                  "via ^https://issuer$") != std::string::npos);
  // Dropping the policy is called out too; adding a registration shows its signer.
  auto none = test::load_one(k_base);
  CHECK(reconcile::render_review_text(reconcile::review(base.documents, none.documents), "a", "b")
            .find("none (the package is no longer verified)") != std::string::npos);
  std::string empty = k_base;
  empty.erase(empty.find("---\napiVersion: flytecd/v1\nkind: WorkflowRegistration"));
  auto added = reconcile::review(test::load_one(empty).documents, base.documents);
  CHECK(
      reconcile::render_review_markdown(added, "a", "b").find("signed with key keys/cosign.pub") !=
      std::string::npos);
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

TEST_CASE("review: a rollup row per project touched comes before the per-item details",
          "[review]") {
  auto base = test::load_one(k_base);
  REQUIRE(base.ok());
  std::string head_yaml = k_base;
  head_yaml.replace(head_yaml.find("value: old"), 10, "value: new");
  // wf.b loses its own label: it now inherits the project-domain one.
  const auto wf_b = head_yaml.find(
      "---\napiVersion: flytecd/v1\nkind: Overrides\nproject: p\n"
      "domain: development\nworkflow: wf.b");
  head_yaml.erase(wf_b, head_yaml.find("---", wf_b + 3) - wf_b);
  head_yaml.replace(head_yaml.find("version: v1"), 11, "version: v2");
  head_yaml += "---\napiVersion: flytecd/v1\nkind: Project\nid: q\n";
  auto head = test::load_one(head_yaml);
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  REQUIRE(r.rollup.size() == 2);
  const auto& p = r.rollup[0];
  CHECK(p.project == "p");
  CHECK(p.overrides_created == 0);
  CHECK(p.overrides_changed == 1);
  CHECK(p.overrides_deleted == 1);
  CHECK_FALSE(p.project_added);
  CHECK(p.registrations_changed == 1);
  CHECK(p.scopes ==
        std::vector<std::string>{"p/development", "p/development/wf.a", "p/development/wf.b"});
  const auto& q = r.rollup[1];
  CHECK(q.project == "q");
  CHECK(q.project_added);
  CHECK(q.overrides_changed == 0);
  CHECK(q.scopes.empty());

  const auto md = reconcile::render_review_markdown(r, "a", "b");
  const auto table = md.find("| project | overrides | project record | registrations |");
  REQUIRE(table != std::string::npos);
  CHECK(table < md.find("#### "));
  CHECK(md.find("| <code>p</code> | +0 ~1 -1 | — | 1 | <code>p/development</code>, "
                "<code>p/development/wf.a</code>, <code>p/development/wf.b</code> |\n") !=
        std::string::npos);
  CHECK(md.find("| <code>q</code> | +0 ~0 -0 | added | 0 | — |\n") != std::string::npos);

  const auto j = reconcile::render_review_json(r, "a", "b");
  REQUIRE(j["rollup"].size() == 2);
  CHECK(j["rollup"][0]["project"] == "p");
  CHECK(j["rollup"][0]["overridesDeleted"] == 1);
  CHECK(j["rollup"][0]["scopes"].size() == 3);
  CHECK(j["rollup"][1]["projectAdded"] == true);
}

TEST_CASE("review: text, markdown and JSON name the commit each revision name resolved to",
          "[review]") {
  auto base = test::load_one(k_base);
  auto same = reconcile::review(base.documents, base.documents);
  const reconcile::ReviewRevision b{"origin/main", "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"};
  const reconcile::ReviewRevision h{"HEAD", "5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e"};
  const auto text = reconcile::render_review_text(same, b, h);
  CHECK(text.rfind("base origin/main = 1a2b3c4d5e6f\nhead HEAD = 5d6e7f8a9b0c\n", 0) == 0);
  const auto md = reconcile::render_review_markdown(same, b, h);
  CHECK(md.find("base <code>origin/main</code> = <code>1a2b3c4d5e6f</code> → head "
                "<code>HEAD</code> = <code>5d6e7f8a9b0c</code>") != std::string::npos);
  const auto j = reconcile::render_review_json(same, b, h);
  CHECK(j["base"]["name"] == "origin/main");
  CHECK(j["base"]["commit"] == b.commit);
  CHECK(j["head"]["name"] == "HEAD");
  CHECK(j["head"]["commit"] == h.commit);
  // A name with markup is escaped in the markdown header.
  const auto odd = reconcile::render_review_markdown(same, {"a|b<c>", b.commit}, h);
  CHECK(odd.find("a|b<c>") == std::string::npos);
}

// Issue 21: a retired project's PR comment listed one "effective value" table per override
// (13 for a real project, several empty), and CLUSTER_RESOURCE (applied per project-domain
// namespace) was shown reaching workflows.
TEST_CASE("review: a retired project lists its overrides once, cluster resources reach domains",
          "[review]") {
  std::string base_yaml = k_base;
  base_yaml +=
      "---\napiVersion: flytecd/v1\nkind: Overrides\nproject: p\ndomain: development\n"
      "spec:\n  clusterResourceAttributes: {attributes: {projectQuotaCpu: \"8\"}}\n";
  auto base = test::load_one(base_yaml);
  REQUIRE(base.ok());
  // Head: project p is gone with everything it declared; q is new.
  auto head = test::load_one("apiVersion: flytecd/v1\nkind: Project\nid: q\n");
  REQUIRE(head.ok());
  auto r = reconcile::review(base.documents, head.documents);
  CHECK(r.overrides_removed == 4);
  CHECK(r.projects_removed == 1);
  for (const auto& c : r.changes) CHECK_FALSE(c.kind == "override");  // no table per override
  const reconcile::ReviewChange* p = nullptr;
  for (const auto& c : r.changes)
    if (c.kind == "project" && c.action == '-') p = &c;
  REQUIRE(p);
  CHECK(p->retired_overrides.size() == 4);
  CHECK_THAT(p->detail, Catch::Contains("its 4 override(s) are removed with it"));
  const auto md = reconcile::render_review_markdown(r, {"base", ""}, {"head", ""});
  CHECK(md.find("| field | before | after |") == std::string::npos);
  CHECK(md.find("<code>p/development CLUSTER_RESOURCE</code>") != std::string::npos);
  const auto j = reconcile::render_review_json(r, {"base", ""}, {"head", ""});
  bool listed = false;
  for (const auto& i : j["items"])
    if (i.contains("retiredOverrides")) listed = i["retiredOverrides"].size() == 4;
  CHECK(listed);
  for (const auto& row : j["rollup"])
    if (row["project"] == "p") CHECK(row["overridesDeleted"] == 4);

  // A changed CLUSTER_RESOURCE of a live project reaches its project-domain, not wf.a / wf.b.
  std::string changed = base_yaml;
  changed.replace(changed.find("projectQuotaCpu: \"8\""), 20, "projectQuotaCpu: \"9\"");
  auto head2 = test::load_one(changed);
  REQUIRE(head2.ok());
  auto r2 = reconcile::review(base.documents, head2.documents);
  REQUIRE(r2.changes.size() == 1);
  CHECK(r2.changes[0].reaches == std::vector<std::string>{"p/development"});
  CHECK(r2.changes[0].inheriting_workflows == 0);
}

}  // namespace FLYTECD_UNITY_ID
