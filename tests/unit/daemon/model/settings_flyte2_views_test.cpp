// Flyte 2 settings seen from a repository: the effective value of each leaf over the org, domain
// and project records (get settings), and a FlyteAdmin 1.x repository converted to Settings
// documents (convert --to flyte2) — written only where Flyte 2 has the same field, every other
// field listed by file:line and name.
#include <catch2/catch.hpp>

#include "daemon/model/convert_flyte2.hpp"
#include "daemon/model/settings_view.hpp"
#include "daemon/reconcile/review.hpp"
#include "test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using flytecd::test::file;
using flytecd::test::load;
using Json = nlohmann::ordered_json;

const char* k_levels = R"(apiVersion: flytecd/v1
kind: Settings
spec:
  run:
    defaultQueue: {state: SETTING_STATE_VALUE, stringValue: org-queue}
  storage:
    rawDataPath: {state: SETTING_STATE_VALUE, stringValue: s3://org/raw}
  labels: {state: SETTING_STATE_VALUE, mapValue: {entries: {team: platform, cost: shared}}}
---
apiVersion: flytecd/v1
kind: Settings
domain: development
spec:
  run:
    defaultQueue: {state: SETTING_STATE_VALUE, stringValue: dev-queue}
  security:
    serviceAccount: {state: SETTING_STATE_VALUE, stringValue: dev-runner}
---
apiVersion: flytecd/v1
kind: Settings
domain: development
project: ml
spec:
  storage:
    rawDataPath: {state: SETTING_STATE_UNSET}
  taskResource:
    max:
      memory: {state: SETTING_STATE_VALUE, quantityValue: 8Gi}
  labels: {state: SETTING_STATE_VALUE, mapValue: {entries: {team: ml}}}
)";

const Json& leaf(const Json& doc, const std::string& path) {
  for (const auto& l : doc["settings"])
    if (l["path"] == path) return l;
  FAIL("no leaf " << path);
  static const Json none;
  return none;
}

std::vector<model::SettingsLevel> levels_of(const model::Documents& docs, const std::string& domain,
                                            const std::string& project) {
  auto levels = model::settings_levels("", domain, project);
  for (auto& lv : levels)
    for (const auto& o : docs.objects)
      if (o.key == lv.key) {
        lv.record = o.value.get();
        lv.source = model::to_string(o.where);
      }
  return levels;
}

TEST_CASE("get settings: each leaf from the narrowest level that decides it", "[model][settings]") {
  auto r = load({file("settings.yaml", k_levels)});
  REQUIRE(r.ok());
  const Json doc = model::effective_settings(levels_of(r.documents, "development", "ml"));
  REQUIRE(doc["levels"].size() == 3);
  CHECK(doc["levels"][2]["key"] == "settings/flyte/development/ml");
  CHECK(doc["levels"][2]["record"] == true);

  const Json& queue = leaf(doc, "run.defaultQueue");  // the project inherits the domain's
  CHECK(queue["state"] == "value");
  CHECK(queue["value"] == "dev-queue");
  CHECK(queue["level"] == "domain");
  CHECK(queue["source"].get<std::string>().rfind("settings.yaml:10", 0) == 0);

  const Json& raw = leaf(doc, "storage.rawDataPath");  // UNSET at the project hides the org's
  CHECK(raw["state"] == "unset");
  CHECK(raw["value"].is_null());
  CHECK(raw["level"] == "project");

  const Json& mem = leaf(doc, "taskResource.max.memory");
  CHECK(mem["value"] == "8Gi");
  CHECK(mem["level"] == "project");

  const Json& cpu = leaf(doc, "taskResource.min.cpu");  // nobody sets it: the server's default
  CHECK(cpu["state"] == "inherit");
  CHECK(cpu["level"].is_null());

  // A map merges per key: the project's team wins, the org's cost stays.
  const Json& labels = leaf(doc, "labels");
  CHECK(labels["value"] == Json{{"cost", "shared"}, {"team", "ml"}});
  CHECK(labels["entries"]["team"]["level"] == "project");
  CHECK(labels["entries"]["cost"]["level"] == "org");

  // The org alone: its own values.
  const Json org = model::effective_settings(levels_of(r.documents, "", ""));
  CHECK(org["levels"].size() == 1);
  CHECK(leaf(org, "run.defaultQueue")["value"] == "org-queue");
  CHECK(leaf(org, "storage.rawDataPath")["value"] == "s3://org/raw");

  // With the documents' field lines, each leaf names its own line.
  auto with_lines = levels_of(r.documents, "development", "ml");
  for (auto& lv : with_lines)
    for (const auto& o : r.documents.objects)
      if (o.key == lv.key) lv.lines = o.source.get();
  const Json lined = model::effective_settings(with_lines);
  CHECK(leaf(lined, "run.defaultQueue")["source"] == "settings.yaml:15");
  CHECK(leaf(lined, "labels")["entries"]["cost"]["source"] == "settings.yaml:8");

  const std::string text = model::effective_settings_text(doc, "ml");
  CHECK(text.find("run.defaultQueue") != std::string::npos);
  CHECK(text.find("\"dev-queue\"  (domain, settings.yaml:10") != std::string::npos);
  CHECK(text.find("(no level sets it: the server's default)") != std::string::npos);
}

TEST_CASE("get settings: an UNSET map clears what broader levels set", "[model][settings]") {
  auto r = load({file("s.yaml", R"(apiVersion: flytecd/v1
kind: Settings
spec:
  annotations: {state: SETTING_STATE_VALUE, mapValue: {entries: {a: "1"}}}
---
apiVersion: flytecd/v1
kind: Settings
domain: production
spec:
  annotations: {state: SETTING_STATE_UNSET}
)")});
  REQUIRE(r.ok());
  const Json doc = model::effective_settings(levels_of(r.documents, "production", ""));
  const Json& a = leaf(doc, "annotations");
  CHECK(a["state"] == "unset");
  CHECK(a["entries"].empty());
  CHECK(a["level"] == "domain");
}

const char* k_flyte1 = R"(apiVersion: flytecd/v1
kind: Project
id: ml
name: Machine learning
---
apiVersion: flytecd/v1
kind: PlatformDefaults
spec:
  taskResourceAttributes:
    defaults: {cpu: 500m, memory: 1Gi}
  workflowExecutionConfig:
    labels: {values: {cost: shared}}
---
apiVersion: flytecd/v1
kind: Overrides
project: ml
spec:
  taskResourceAttributes:
    defaults: {cpu: "2", storage: 1Gi}
    limits: {cpu: "8", memory: 32Gi, ephemeralStorage: 20Gi}
  workflowExecutionConfig:
    maxParallelism: 30
    securityContext: {runAs: {k8sServiceAccount: ml-runner}}
    labels: {values: {team: ml}}
    envs: {values: [{key: STAGE, value: any}]}
  executionQueueAttributes: {tags: [gpu]}
---
apiVersion: flytecd/v1
kind: Overrides
project: ml
domain: production
spec:
  workflowExecutionConfig:
    rawOutputDataConfig: {outputLocationPrefix: s3://ml-prod/raw}
---
apiVersion: flytecd/v1
kind: Overrides
project: ml
domain: development
workflow: train.wf
spec:
  taskResourceAttributes:
    limits: {gpu: "1"}
)";

TEST_CASE("convert --to flyte2: same-meaning fields written, every other one listed by name",
          "[model][settings]") {
  auto r = load({file("repo.yaml", k_flyte1)});
  INFO(r.diagnostics.size());
  REQUIRE(r.ok());
  const auto c = model::convert_to_flyte2(r.documents, {"development", "production"});

  // The converted files load as a valid repository.
  std::vector<model::SourceFile> files;
  for (const auto& f : c.files) files.push_back(file(f.path, f.text));
  auto again = load(files);
  for (const auto& d : again.diagnostics) INFO(model::format(d));
  REQUIRE(again.ok());
  CHECK(again.documents.projects.size() == 1);
  CHECK(c.project_documents == 1);
  CHECK(c.settings_documents == 3);  // the org, ml/development, ml/production

  auto resolve = [&](const std::string& domain) {
    return model::effective_settings(levels_of(again.documents, domain, "ml"));
  };
  const Json dev = resolve("development");
  CHECK(leaf(dev, "taskResource.min.cpu")["value"] == "2");  // the project's row
  CHECK(leaf(dev, "taskResource.min.cpu")["level"] == "project");
  // FlyteAdmin takes the project's task-resource row whole: the platform's memory default does
  // not fill it, so the project record says UNSET rather than inherit the org's 1Gi.
  CHECK(leaf(dev, "taskResource.min.memory")["state"] == "unset");
  CHECK(leaf(dev, "taskResource.min.memory")["level"] == "project");
  const Json other = model::effective_settings(levels_of(again.documents, "development", "etl"));
  CHECK(leaf(other, "taskResource.min.memory")["value"] == "1Gi");  // no row: the platform's
  CHECK(leaf(other, "taskResource.min.memory")["level"] == "org");
  CHECK(leaf(dev, "taskResource.max.storage")["value"] == "20Gi");  // ephemeralStorage
  CHECK(leaf(dev, "security.serviceAccount")["value"] == "ml-runner");
  CHECK(leaf(dev, "environmentVariables")["value"] == Json{{"STAGE", "any"}});
  CHECK(leaf(dev, "storage.rawDataPath")["state"] == "inherit");
  CHECK(leaf(dev, "taskResource.max.gpu")["state"] == "inherit");  // workflow level: not written
  const Json prod = resolve("production");
  CHECK(leaf(prod, "storage.rawDataPath")["value"] == "s3://ml-prod/raw");
  // FlyteAdmin fills the production row's unset execution-config fields from the project row.
  CHECK(leaf(prod, "security.serviceAccount")["value"] == "ml-runner");

  auto listed = [&](const std::string& field, const std::string& why) {
    for (const auto& u : c.unconverted)
      if (u.field == field && u.reason.find(why) != std::string::npos) return true;
    return false;
  };
  CHECK(listed("taskResourceAttributes.defaults.storage", "never reads"));
  CHECK(listed("workflowExecutionConfig.maxParallelism", "no Flyte 2 setting"));
  CHECK(listed("executionQueueAttributes.tags", "queue"));
  CHECK(listed("taskResourceAttributes.limits.gpu", "no workflow level"));
  for (const auto& u : c.unconverted) {
    CHECK(u.where.file == "repo.yaml");
    CHECK(u.where.line > 0);
  }
  // Labels: FlyteAdmin takes the project's map whole, Flyte 2 adds the org's cost key.
  REQUIRE(c.notes.size() == 2);  // development and production
  CHECK(c.notes[0].find("labels") != std::string::npos);
  CHECK(c.notes[0].find("cost") != std::string::npos);
}

TEST_CASE("plan --git: a Settings change is reviewed field by field with the head's line",
          "[model][settings][review]") {
  auto base = load({file("settings.yaml", k_levels)});
  std::string changed = k_levels;
  changed.replace(changed.find("dev-queue"), 9, "gpu-queue");
  changed = changed.substr(0, changed.rfind("---"));  // the project's record removed
  auto head = load({file("settings.yaml", changed)});
  REQUIRE(base.ok());
  REQUIRE(head.ok());
  const auto r = reconcile::review(base.documents, head.documents);
  CHECK(r.objects.at("settings").changed == 1);
  CHECK(r.objects.at("settings").removed == 1);
  CHECK(r.objects.at("settings").added == 0);
  CHECK(reconcile::review_summary(r).find("settings: +0 ~1 -1") != std::string::npos);
  const reconcile::ReviewChange* domain = nullptr;
  for (const auto& c : r.changes)
    if (c.key == "settings/flyte/development/") domain = &c;
  REQUIRE(domain != nullptr);
  CHECK(domain->action == '~');
  CHECK(domain->object == "settings flyte/development/");
  CHECK(domain->scope == "development");
  REQUIRE(domain->fields.size() == 1);
  CHECK(domain->fields[0].path == "run.defaultQueue.stringValue");
  CHECK(domain->fields[0].before == "\"dev-queue\"");
  CHECK(domain->fields[0].after == "\"gpu-queue\"");
  CHECK(domain->fields[0].source == "settings.yaml:15");
  // Nothing changed: nothing to review.
  CHECK(reconcile::review(base.documents, base.documents).empty());
}

}  // namespace FLYTECD_UNITY_ID
