// Document kind Settings (Flyte 2's flyteidl2.settings.Settings through the pinned npm package's
// descriptors): the key, the JSON mapping, INHERIT / UNSET / VALUE, and what is refused with
// file, line, field and what was expected.
#include <catch2/catch.hpp>

#include "daemon/model/proto_yaml.hpp"
#include "flyteidl2/settings/settings_definition.pb.h"
#include "test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using flytecd::test::file;
using flytecd::test::find;
using flytecd::test::load;
using flytecd::test::load_one;

const char* k_valid = R"(apiVersion: flytecd/v1
kind: Settings
domain: development
project: flytesnacks
spec:
  run:
    defaultQueue: {state: SETTING_STATE_VALUE, stringValue: gpu}
  security:
    service_account: {state: SETTING_STATE_UNSET}
  taskResource:
    min:
      cpu: {state: SETTING_STATE_VALUE, quantityValue: 500m}
    max:
      cpu: {state: SETTING_STATE_VALUE, quantityValue: "2"}
      memory: {state: SETTING_STATE_INHERIT}
  labels:
    state: SETTING_STATE_VALUE
    mapValue: {entries: {team: ml}}
)";

const flyteidl2::settings::Settings& settings_of(const model::ObjectDoc& o) {
  return dynamic_cast<const flyteidl2::settings::Settings&>(*o.value);
}

TEST_CASE("Settings: one object per scope, keyed by org (default flyte), domain and project",
          "[model][settings]") {
  auto r = load_one(k_valid);
  REQUIRE(r.ok());
  REQUIRE(r.documents.objects.size() == 1);
  const auto& o = r.documents.objects[0];
  CHECK(o.kind == "settings");
  CHECK(o.key == "settings/flyte/development/flytesnacks");
  const auto& s = settings_of(o);
  CHECK(s.run().default_queue().state() == flyteidl2::settings::SETTING_STATE_VALUE);
  CHECK(s.run().default_queue().string_value() == "gpu");
  CHECK(s.security().service_account().state() == flyteidl2::settings::SETTING_STATE_UNSET);
  // INHERIT written out is kept: the leaf is present with the default state.
  CHECK(s.task_resource().max().has_memory());
  CHECK(s.task_resource().max().memory().state() == flyteidl2::settings::SETTING_STATE_INHERIT);
  CHECK(s.labels().map_value().entries().at("team") == "ml");
  // Field lines for the plan's "(file:line)".
  REQUIRE(o.source);
  CHECK(o.source->file == "a.yaml");
  CHECK(o.source->fields.find("run.defaultQueue") == 7);
  CHECK(o.source->fields.find("taskResource.max.cpu") == 14);

  auto org = load_one(
      "apiVersion: flytecd/v1\nkind: Settings\norg: acme\ndomain: production\n"
      "spec: {run: {defaultQueue: {state: SETTING_STATE_UNSET}}}\n");
  REQUIRE(org.ok());
  CHECK(org.documents.objects.at(0).key == "settings/acme/production/");
  auto top = load_one(
      "apiVersion: flytecd/v1\nkind: Settings\n"
      "spec: {run: {defaultQueue: {state: SETTING_STATE_UNSET}}}\n");
  REQUIRE(top.ok());
  CHECK(top.documents.objects.at(0).key == "settings/flyte//");
}

TEST_CASE("Settings: an unknown field is refused by name, with the fields there are",
          "[model][settings]") {
  auto r = load_one(
      "apiVersion: flytecd/v1\nkind: Settings\ndomain: development\nspec:\n"
      "  run:\n    podTemplateName: {state: SETTING_STATE_VALUE}\n");
  CHECK_FALSE(r.ok());
  CHECK(r.documents.objects.empty());
  const auto* d = find(r, model::DiagKind::unknown_field);
  REQUIRE(d);
  CHECK(d->where.line == 6);
  CHECK(d->path == "spec.run.podTemplateName");
  CHECK(d->expected.find("defaultQueue") != std::string::npos);
}

TEST_CASE(
    "Settings: a project without a domain, a bad quantity, max below min, a value "
    "without SETTING_STATE_VALUE, scopeLevel, an empty spec",
    "[model][settings]") {
  const std::string head = "apiVersion: flytecd/v1\nkind: Settings\n";
  auto no_domain =
      load_one(head + "project: p\nspec: {run: {defaultQueue: {state: SETTING_STATE_UNSET}}}\n");
  const auto* d = find(no_domain, model::DiagKind::missing_field);
  REQUIRE(d);
  CHECK(d->path == "domain");
  CHECK(d->where.line == 3);
  CHECK(d->expected.find("InvalidArgument") != std::string::npos);

  auto quantity = load_one(head +
                           "domain: development\nspec:\n  taskResource:\n    min:\n"
                           "      cpu: {state: SETTING_STATE_VALUE, quantityValue: lots}\n");
  d = find(quantity, model::DiagKind::bad_quantity);
  REQUIRE(d);
  CHECK(d->path == "spec.taskResource.min.cpu.quantityValue");
  CHECK(d->where.line == 7);

  auto bounds = load_one(head +
                         "domain: development\nspec:\n  taskResource:\n"
                         "    min: {memory: {state: SETTING_STATE_VALUE, quantityValue: 2Gi}}\n"
                         "    max: {memory: {state: SETTING_STATE_VALUE, "
                         "quantityValue: 512Mi}}\n");
  d = find(bounds, model::DiagKind::limits_below_defaults);
  REQUIRE(d);
  CHECK(d->path == "spec.taskResource.max.memory");
  CHECK(d->message == "max 512Mi is below min 2Gi");
  CHECK(d->where.line == 7);

  auto stateless = load_one(head +
                            "domain: development\nspec:\n  run:\n"
                            "    defaultQueue: {stringValue: gpu}\n");
  d = find(stateless, model::DiagKind::invalid_value);
  REQUIRE(d);
  CHECK(d->path == "spec.run.defaultQueue.stringValue");
  CHECK(d->message.find("not SETTING_STATE_VALUE") != std::string::npos);

  auto level = load_one(head +
                        "domain: development\nspec:\n  run:\n"
                        "    defaultQueue: {state: SETTING_STATE_UNSET, scopeLevel: 2}\n");
  d = find(level, model::DiagKind::invalid_value);
  REQUIRE(d);
  CHECK(d->path == "spec.run.defaultQueue.scopeLevel");

  auto empty = load_one(head + "domain: development\nspec: {}\n");
  d = find(empty, model::DiagKind::wrong_type);
  REQUIRE(d);
  CHECK(d->path == "spec");
  for (const auto* r : {&no_domain, &quantity, &bounds, &stateless, &level, &empty})
    CHECK(r->documents.objects.empty());
}

TEST_CASE("Settings: one document per key (org empty and org flyte are the same key)",
          "[model][settings]") {
  const std::string doc =
      "apiVersion: flytecd/v1\nkind: Settings\n{ORG}domain: development\n"
      "spec: {run: {defaultQueue: {state: SETTING_STATE_UNSET}}}\n";
  std::string a = doc, b = doc;
  a.replace(a.find("{ORG}"), 5, "");
  b.replace(b.find("{ORG}"), 5, "org: flyte\n");
  auto r = load({file("a.yaml", a), file("b.yaml", b)});
  CHECK_FALSE(r.ok());
  const auto* d = find(r, model::DiagKind::duplicate_scope);
  REQUIRE(d);
  CHECK(d->message == "settings for flyte/development/ are declared twice");
  CHECK(d->related.file == "a.yaml");
  CHECK(d->where.file == "b.yaml");
}

}  // namespace FLYTECD_UNITY_ID
