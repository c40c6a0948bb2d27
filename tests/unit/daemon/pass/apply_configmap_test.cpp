// ConfigMap mode through the same reconcile as FlyteAdmin: a routing sink sends projects to
// FlyteAdmin (in memory here) and overrides to the ConfigMap sink (over a fake Kubernetes API);
// plan, drift and the prune guard behave as they do for FlyteAdmin's rows.
#include <catch2/catch.hpp>

#include "daemon/pass/apply.hpp"
#include "daemon/wiring/wiring.hpp"
#include "tests/unit/sinks/configmap/fake_kube_api.hpp"
#include "tests/unit/sinks/memory_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace admin = flyteidl::admin;
using flytecd::pass::ApplyOptions;
using flytecd::reconcile::Action;

namespace {

flytecd::model::Documents documents(const std::string& label) {
  flytecd::model::Documents d;
  flytecd::model::ProjectDoc p;
  p.id = "flytesnacks";
  p.name = "flytesnacks";
  d.projects.push_back(p);
  for (const char* domain : {"development", "staging", "production"}) {
    flytecd::model::Override o;
    o.scope = {"flytesnacks", domain, ""};
    o.type = admin::EXECUTION_CLUSTER_LABEL;
    o.value.edit([&](auto& v) { v.mutable_execution_cluster_label()->set_value(label); });
    d.overrides.push_back(o);
  }
  flytecd::model::PlatformDefault g;
  g.type = admin::TASK_RESOURCE;
  g.value.edit(
      [&](auto& v) { v.mutable_task_resource_attributes()->mutable_defaults()->set_cpu("1"); });
  d.platform_defaults.push_back(g);
  return d;
}

struct ConfigMapMode {
  std::shared_ptr<flytecd::testing::FakeKubeApi> kube =
      std::make_shared<flytecd::testing::FakeKubeApi>();
  flytecd::testing::MemorySink flyteadmin{
      {.projects = true, .overrides = true, .registrations = true}, {}, "flyteadmin"};
  flytecd::sinks::configmap::ConfigMapSink cm{
      kube, {"flyte", "flyte-admin-overrides", "overrides.yaml", "flyteadmin"}};
  std::unique_ptr<flytecd::sinks::RoutingSink> sink;
  std::unique_ptr<flytecd::ledger::Ledger> ledger;

  ConfigMapMode() {
    auto routed = flytecd::wiring::route_by_capabilities({&flyteadmin, &cm});
    REQUIRE(routed);
    sink = std::move(*routed);
    auto l = flytecd::ledger::Ledger::open(":memory:");
    REQUIRE(l);
    ledger = std::move(*l);
  }
  flytecd::pass::ApplyReport apply(const flytecd::model::Documents& docs,
                                   const std::string& revision) {
    ApplyOptions ao;
    ao.revision = revision;
    return flytecd::pass::apply(*sink, *ledger,
                                flytecd::wiring::desired_state(docs, sink->capabilities()), ao);
  }
  std::string document() {
    return kube->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"];
  }
};

}  // namespace

TEST_CASE("configmap mode: one reconcile writes the document, the next one is a no-op",
          "[apply][configmap]") {
  ConfigMapMode m;
  const auto docs = documents("east");
  auto first = m.apply(docs, "r1");
  INFO(first.error);
  REQUIRE(first.ok());
  CHECK(m.document() == flytecd::wiring::configmap_document(docs));
  CHECK(m.kube->count("APPLY") == 1);
  CHECK(first.first_plan.count(Action::create, flytecd::reconcile::ObjectKind::override_attr) ==
        4);  // three project-domain rows and the global default
  CHECK(m.flyteadmin.state().projects.count("flytesnacks") == 1);
  CHECK(m.flyteadmin.state().overrides.empty());  // no override row went to FlyteAdmin

  auto second = m.apply(docs, "r1");
  REQUIRE(second.ok());
  CHECK_FALSE(second.first_plan.has_changes());
  CHECK(m.kube->count("APPLY") == 1);
}

TEST_CASE("configmap mode: a hand edit of the ConfigMap is drift, healed from Git",
          "[apply][configmap]") {
  ConfigMapMode m;
  const auto docs = documents("east");
  REQUIRE(m.apply(docs, "r1").ok());
  const std::string git_doc = m.document();
  m.kube->configmaps["flyte/flyte-admin-overrides"]["overrides.yaml"] =
      flytecd::wiring::configmap_document(documents("edited-by-hand"));
  auto healed = m.apply(docs, "r1");
  REQUIRE(healed.ok());
  CHECK(healed.first_plan.drift.size() == 3);
  CHECK(m.document() == git_doc);
  CHECK(m.kube->count("APPLY") == 2);  // the first write and the heal
}

TEST_CASE("configmap mode: the prune guard refuses deleting every override, nothing is written",
          "[apply][configmap]") {
  ConfigMapMode m;
  REQUIRE(m.apply(documents("east"), "r1").ok());
  const std::string before = m.document();
  auto docs = documents("east");
  docs.overrides.clear();
  docs.platform_defaults.clear();
  auto refused = m.apply(docs, "r2");
  CHECK(refused.refused);
  CHECK(m.document() == before);
  CHECK(m.kube->count("APPLY") == 1);
}

TEST_CASE("apply: commit runs once per round after its steps, and once when nothing is to do",
          "[apply]") {
  flytecd::testing::MemorySink sink;
  auto ledger = flytecd::ledger::Ledger::open(":memory:");
  REQUIRE(ledger);
  ApplyOptions ao;
  ao.revision = "r1";
  const auto desired = flytecd::wiring::desired_state(documents("east"), sink.capabilities());
  auto report = flytecd::pass::apply(sink, **ledger, desired, ao);
  REQUIRE(report.ok());
  // Round 1 executes and commits; round 2 observes nothing left and commits again.
  CHECK(report.rounds == 2);
  CHECK(sink.commits() == std::vector<std::string>{"r1", "r1"});
}

TEST_CASE("apply: a failed commit fails the pass with the sink's error", "[apply]") {
  flytecd::testing::MemorySink sink;
  sink.fail_commit(flytecd::Error{flytecd::ErrorCode::permission_denied, "cm: forbidden"});
  auto ledger = flytecd::ledger::Ledger::open(":memory:");
  REQUIRE(ledger);
  ApplyOptions ao;
  ao.revision = "r1";
  auto report = flytecd::pass::apply(
      sink, **ledger, flytecd::wiring::desired_state(documents("east"), sink.capabilities()), ao);
  CHECK_FALSE(report.ok());
  CHECK(report.error == "cm: forbidden");
  CHECK(report.error_code == flytecd::ErrorCode::permission_denied);
  CHECK(sink.commits().size() == 1);
}

TEST_CASE("apply: a refused or cancelled pass commits nothing", "[apply]") {
  auto ledger = flytecd::ledger::Ledger::open(":memory:");
  REQUIRE(ledger);
  {
    flytecd::testing::MemorySink sink;
    std::atomic<bool> cancel{true};
    ApplyOptions ao;
    ao.revision = "r1";
    ao.cancel = &cancel;
    auto report = flytecd::pass::apply(
        sink, **ledger, flytecd::wiring::desired_state(documents("east"), sink.capabilities()), ao);
    CHECK_FALSE(report.ok());
    CHECK(sink.commits().empty());
  }
  {
    // Everything managed, then a revision deleting all of it: the prune guard refuses.
    flytecd::testing::MemorySink sink;
    ApplyOptions ao;
    ao.revision = "r1";
    const auto docs = documents("east");
    REQUIRE(flytecd::pass::apply(sink, **ledger,
                                 flytecd::wiring::desired_state(docs, sink.capabilities()), ao)
                .ok());
    const size_t commits = sink.commits().size();
    auto empty = docs;
    empty.overrides.clear();
    ao.revision = "r2";
    auto report = flytecd::pass::apply(
        sink, **ledger, flytecd::wiring::desired_state(empty, sink.capabilities()), ao);
    CHECK(report.refused);
    CHECK(sink.commits().size() == commits);
  }
}

}  // namespace FLYTECD_UNITY_ID
