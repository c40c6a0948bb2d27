// The ConfigMap document as a Sink, against a fake Kubernetes API: observe parses the live
// document, execute stages, commit renders and server-side applies once per new document.
#include "sinks/configmap/configmap_sink.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "daemon/model/loader.hpp"
#include "daemon/wiring/wiring.hpp"
#include "sources/local/directory_reader.hpp"
#include "test_paths.hpp"
#include "tests/unit/sinks/configmap/fake_kube_api.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace admin = flyteidl::admin;
using flytecd::ErrorCode;
using flytecd::Result;
using flytecd::Status;
using flytecd::sinks::Action;
using flytecd::sinks::ObjectKind;
using flytecd::sinks::OverrideState;
using flytecd::sinks::State;
using flytecd::sinks::Step;
using flytecd::sinks::configmap::ConfigMapSink;
using flytecd::sinks::configmap::KubeApi;
using flytecd::testing::FakeKubeApi;

namespace {

flytecd::sinks::configmap::Settings settings(std::string restart = "flyteadmin") {
  return {"flyte", "flyte-admin-overrides", "overrides.yaml", std::move(restart)};
}

OverrideState cpu_row(const std::string& project, const std::string& domain,
                      const std::string& cpu) {
  OverrideState o;
  o.scope = {project, domain, ""};
  o.type = admin::TASK_RESOURCE;
  o.value.mutable_task_resource_attributes()->mutable_defaults()->set_cpu(cpu);
  return o;
}

OverrideState label_row(const std::string& project, const std::string& domain,
                        const std::string& value) {
  OverrideState o;
  o.scope = {project, domain, ""};
  o.type = admin::EXECUTION_CLUSTER_LABEL;
  o.value.mutable_execution_cluster_label()->set_value(value);
  return o;
}

std::string key_of(const OverrideState& o) { return flytecd::sinks::override_key(o.scope, o.type); }

State rows(std::initializer_list<OverrideState> list) {
  State s;
  for (const auto& o : list) s.overrides[key_of(o)] = o;
  return s;
}

Step write_step(const OverrideState& o, Action a = Action::create) {
  Step s;
  s.action = a;
  s.kind = ObjectKind::override_attr;
  s.key = key_of(o);
  s.desired = flytecd::sinks::share(o);
  return s;
}

Step remove_step(const OverrideState& o) {
  Step s;
  s.action = Action::remove;
  s.kind = ObjectKind::override_attr;
  s.key = key_of(o);
  s.live = flytecd::sinks::share(o);
  return s;
}

bool same_rows(const State& a, const State& b) {
  if (a.overrides.size() != b.overrides.size()) return false;
  for (const auto& [k, o] : a.overrides) {
    auto it = b.overrides.find(k);
    if (it == b.overrides.end() || it->second.scope != o.scope || it->second.type != o.type ||
        it->second.value.SerializeAsString() != o.value.SerializeAsString())
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE("configmap sink: holds overrides and platform defaults, registers nothing",
          "[sinks][configmap]") {
  ConfigMapSink sink(std::make_shared<FakeKubeApi>(), settings());
  CHECK(sink.capabilities() ==
        flytecd::sinks::Capabilities{.overrides = true, .platform_defaults = true});
  CHECK(sink.entities() == nullptr);
  CHECK(sink.describe() == "configmap flyte/flyte-admin-overrides (overrides.yaml)");
}

TEST_CASE("configmap sink: an absent ConfigMap holds no overrides", "[sinks][configmap]") {
  auto api = std::make_shared<FakeKubeApi>();
  ConfigMapSink sink(api, settings());
  auto live = sink.observe();
  REQUIRE(live);
  CHECK(live->overrides.empty());
  CHECK(live->projects.empty());
}

TEST_CASE("configmap sink: observe parses the document back into the rows it was rendered from",
          "[sinks][configmap]") {
  State want = rows({cpu_row("", "", "500m"), label_row("", "production", "prod"),
                     cpu_row("flytesnacks", "development", "1"),
                     label_row("flytesnacks", "development", "east")});
  auto api = std::make_shared<FakeKubeApi>();
  api->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"] =
      flytecd::sinks::configmap::render_document(want);
  ConfigMapSink sink(api, settings());
  auto live = sink.observe();
  REQUIRE(live);
  CHECK(same_rows(*live, want));
  // And a round trip renders the same bytes.
  CHECK(flytecd::sinks::configmap::render_document(*live) ==
        api->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"]);
}

TEST_CASE("configmap sink: execute stages, commit writes the expected document once",
          "[sinks][configmap]") {
  auto api = std::make_shared<FakeKubeApi>();
  const auto old_row = label_row("flytesnacks", "development", "west");
  api->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"] =
      flytecd::sinks::configmap::render_document(rows({old_row}));
  ConfigMapSink sink(api, settings());
  REQUIRE(sink.observe());
  const auto global = cpu_row("", "", "500m");
  const auto project = cpu_row("flytesnacks", "development", "1");
  REQUIRE(sink.execute(write_step(global)));
  REQUIRE(sink.execute(write_step(project)));
  REQUIRE(sink.execute(remove_step(old_row)));
  CHECK(api->count("APPLY") == 0);  // staged only

  REQUIRE(sink.commit("rev-1"));
  const std::string expected = flytecd::sinks::configmap::render_document(rows({global, project}));
  CHECK(api->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"] == expected);
  CHECK(api->count("APPLY flyte/flyte-admin-overrides") == 1);
  CHECK(api->last_manifest["metadata"]["annotations"]["flytecd.io/revision"] == "rev-1");
  CHECK(api->last_manifest["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "flytecd");
  const std::string sha =
      api->last_manifest["metadata"]["annotations"]["flytecd.io/overrides-sha256"];
  CHECK(sha.size() == 64);
  CHECK(api->annotations["flyte/flyteadmin/flytecd.io/overrides-sha256"] == sha);
  REQUIRE(sink.last_commit());
  CHECK(sink.last_commit()->changed);
  CHECK(sink.last_commit()->restart_requested);

  // The next round observes what was written: nothing to do, and re-committing writes nothing.
  auto live = sink.observe();
  REQUIRE(live);
  CHECK(same_rows(*live, rows({global, project})));
  REQUIRE(sink.commit("rev-1"));
  CHECK(api->count("APPLY") == 1);
  CHECK_FALSE(sink.last_commit()->changed);
  CHECK(api->annotations["flyte/flyteadmin/flytecd.io/overrides-sha256"] == sha);  // no rollout
}

TEST_CASE("configmap sink: a remove does not cascade to narrower scopes", "[sinks][configmap]") {
  auto api = std::make_shared<FakeKubeApi>();
  const auto project_level = cpu_row("flytesnacks", "", "2");
  const auto domain_level = cpu_row("flytesnacks", "development", "1");
  api->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"] =
      flytecd::sinks::configmap::render_document(rows({project_level, domain_level}));
  ConfigMapSink sink(api, settings(""));
  REQUIRE(sink.observe());
  REQUIRE(sink.execute(remove_step(project_level)));
  REQUIRE(sink.commit("r"));
  auto live = sink.observe();
  REQUIRE(live);
  CHECK(same_rows(*live, rows({domain_level})));
  CHECK(api->count("ANNOTATE") == 0);  // no restartDeployment configured
}

TEST_CASE("configmap sink: execute before observe starts from the live document",
          "[sinks][configmap]") {
  auto api = std::make_shared<FakeKubeApi>();
  const auto kept = label_row("a", "development", "x");
  api->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"] =
      flytecd::sinks::configmap::render_document(rows({kept}));
  ConfigMapSink sink(api, settings());
  const auto added = cpu_row("b", "development", "1");
  REQUIRE(sink.execute(write_step(added)));
  REQUIRE(sink.commit("r"));
  CHECK(api->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"] ==
        flytecd::sinks::configmap::render_document(rows({kept, added})));
}

TEST_CASE("configmap sink: commit with nothing observed or staged makes no call",
          "[sinks][configmap]") {
  auto api = std::make_shared<FakeKubeApi>();
  ConfigMapSink sink(api, settings());
  REQUIRE(sink.commit("r"));
  CHECK(api->calls.empty());
}

TEST_CASE("configmap sink: a project step is refused", "[sinks][configmap]") {
  ConfigMapSink sink(std::make_shared<FakeKubeApi>(), settings());
  Step s;
  s.kind = ObjectKind::project;
  s.key = "project/p";
  s.project = flytecd::sinks::share(flytecd::sinks::ProjectState{"p", "p", "", {}, false});
  auto st = sink.execute(s);
  REQUIRE_FALSE(st);
  CHECK(st.error().code == ErrorCode::invalid_input);
}

TEST_CASE("configmap sink: a document it cannot parse is an error naming the ConfigMap",
          "[sinks][configmap]") {
  const char* bad[] = {
      "key: [unclosed",                                       // not YAML
      "overrides: {}\n",                                      // not a list
      "- project: p\n  overrides: {noSuchAttributes: {}}\n",  // unknown field
      "- project: p\n  colour: blue\n  overrides: {}\n",      // unknown key
      "- project: p\n  workflow: w\n  overrides: {}\n",       // workflow, no domain
      "- project: p\n  overrides: {taskResourceAttributes: {defaults: 7}}\n",  // wrong type
      ("- project: p\n  overrides: {executionQueueAttributes: {tags: [a]}}\n"
       "- project: p\n  overrides: {executionQueueAttributes: {tags: [b]}}\n"),  // given twice
  };
  for (const char* doc : bad) {
    INFO(doc);
    auto api = std::make_shared<FakeKubeApi>();
    api->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"] = doc;
    ConfigMapSink sink(api, settings());
    auto live = sink.observe();
    REQUIRE_FALSE(live);
    CHECK(live.error().code == ErrorCode::invalid_input);
    CHECK(live.error().message.find("configmap flyte/flyte-admin-overrides (overrides.yaml)") !=
          std::string::npos);
    // Nothing is written over a document flytecd could not read.
    CHECK(sink.execute(write_step(cpu_row("p", "d", "1"))).ok() == false);
    CHECK(api->count("APPLY") == 0);
  }
}

TEST_CASE("configmap sink: API errors keep their category and name the ConfigMap",
          "[sinks][configmap]") {
  auto api = std::make_shared<FakeKubeApi>();
  api->fail_get = flytecd::Error{ErrorCode::permission_denied, "get: forbidden"};
  ConfigMapSink sink(api, settings());
  auto live = sink.observe();
  REQUIRE_FALSE(live);
  CHECK(live.error().code == ErrorCode::permission_denied);
  CHECK(live.error().message ==
        "configmap flyte/flyte-admin-overrides (overrides.yaml): get: forbidden");

  api->fail_get.reset();
  api->fail_apply = flytecd::Error{ErrorCode::unavailable, "apply: 503"};
  REQUIRE(sink.observe());
  REQUIRE(sink.execute(write_step(cpu_row("p", "d", "1"))));
  auto st = sink.commit("r");
  REQUIRE_FALSE(st);
  CHECK(st.error().retryable());
}

TEST_CASE("configmap sink: an empty document and an empty list hold nothing",
          "[sinks][configmap]") {
  for (const char* doc : {"", "# only a comment\n", "[]\n"}) {
    auto parsed = flytecd::sinks::configmap::parse_document(doc);
    REQUIRE(parsed);
    CHECK(parsed->overrides.empty());
  }
  CHECK(flytecd::sinks::configmap::render_document(State{}).find("[]\n") != std::string::npos);
}

TEST_CASE("configmap sink: the example repository's document parses back to the same bytes",
          "[sinks][configmap]") {
  auto files = flytecd::sources::local::read_yaml_tree(
      std::string(FLYTECD_SOURCE_DIR) + "/repo-layout-example", 4u << 20);
  REQUIRE(files);
  auto loaded = flytecd::model::load_documents(*files, {}, {});
  REQUIRE(loaded.ok());
  const std::string doc = flytecd::wiring::configmap_document(loaded.documents);
  auto parsed = flytecd::sinks::configmap::parse_document(doc);
  REQUIRE(parsed);
  CHECK(parsed->overrides.size() ==
        loaded.documents.overrides.size() + loaded.documents.platform_defaults.size());
  CHECK(flytecd::sinks::configmap::render_document(*parsed) == doc);
}

}  // namespace FLYTECD_UNITY_ID
