// --project/--domain (daemon/pass/scope): a pure filter over the pass's inputs, and the pass run
// with it: other projects' drift and deletes are left alone, the guard counts only the scope.
#include "daemon/pass/scope.hpp"

#include <catch2/catch.hpp>

#include "daemon/pass/pass.hpp"
#include "tests/unit/daemon/pass/pass_fixtures.hpp"
#include "tests/unit/sinks/memory_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace admin = flyteidl::admin;

namespace {

using pass_test::documents;

reconcile::State state_of(std::initializer_list<model::Scope> scopes) {
  reconcile::State s;
  for (const auto& sc : scopes) {
    if (!sc.project.empty())
      s.projects[sc.project] = reconcile::ProjectState{sc.project, sc.project, "", {}, false};
    s.overrides[reconcile::override_key(sc, admin::EXECUTION_CLUSTER_LABEL)] =
        pass_test::label_state(sc, "blue");
  }
  return s;
}

size_t managed_of(const reconcile::GuardInput& in, const std::string& kind) {
  for (const auto& k : in.kinds)
    if (k.name == kind) return k.managed;
  return 0;
}

std::vector<std::string> keys(const reconcile::State& s) {
  std::vector<std::string> out;
  for (const auto& [id, p] : s.projects) out.push_back(reconcile::project_key(id));
  for (const auto& [k, o] : s.overrides) out.push_back(k);
  return out;
}

}  // namespace

TEST_CASE("scope: keys of the project, its domains and workflows are in, others are out",
          "[scope]") {
  const pass::PassScope p{"data-eng", ""};
  CHECK(pass::key_in_scope(p, "project/data-eng"));
  CHECK(pass::key_in_scope(p, "override/data-eng///TASK_RESOURCE"));
  CHECK(pass::key_in_scope(p, "override/data-eng/production/wf.a/TASK_RESOURCE"));
  CHECK(pass::key_in_scope(p, "registration/data-eng/development/etl"));
  CHECK_FALSE(pass::key_in_scope(p, "project/data-eng-2"));
  CHECK_FALSE(pass::key_in_scope(p, "override/data-engineering///TASK_RESOURCE"));
  CHECK_FALSE(pass::key_in_scope(p, "override//production//TASK_RESOURCE"));  // platform default
  CHECK_FALSE(pass::key_in_scope(p, "registration/ml/development/etl"));

  const pass::PassScope pd{"data-eng", "production"};
  CHECK_FALSE(pass::key_in_scope(pd, "project/data-eng"));  // the project object is project-level
  CHECK_FALSE(pass::key_in_scope(pd, "override/data-eng///TASK_RESOURCE"));
  CHECK(pass::key_in_scope(pd, "override/data-eng/production//TASK_RESOURCE"));
  CHECK(pass::key_in_scope(pd, "override/data-eng/production/wf.a/TASK_RESOURCE"));
  CHECK_FALSE(pass::key_in_scope(pd, "override/data-eng/development//TASK_RESOURCE"));
  CHECK(pass::key_in_scope(pd, "registration/data-eng/production/etl"));
  CHECK_FALSE(pass::key_in_scope(pd, "registration/data-eng/staging/etl"));

  CHECK(pass::key_in_scope(pass::PassScope{}, "override//production//TASK_RESOURCE"));
  CHECK(pass::PassScope{"a", "b"}.describe() == "project a, domain b");
}

TEST_CASE("scope: state, managed records and registrations are narrowed alike", "[scope]") {
  const model::Scope a{"a", "", ""}, a_dev{"a", "development", ""}, a_wf{"a", "development", "wf"},
      b{"b", "", ""}, platform{"", "development", ""};
  auto st = state_of({a, a_dev, a_wf, b, platform});
  pass::narrow(pass::PassScope{"a", ""}, st);
  CHECK(keys(st) == std::vector<std::string>{
                        "project/a", reconcile::override_key(a, admin::EXECUTION_CLUSTER_LABEL),
                        reconcile::override_key(a_dev, admin::EXECUTION_CLUSTER_LABEL),
                        reconcile::override_key(a_wf, admin::EXECUTION_CLUSTER_LABEL)});
  auto st2 = pass::narrowed(pass::PassScope{"a", "development"}, state_of({a, a_dev, a_wf, b}));
  CHECK(keys(st2) ==
        std::vector<std::string>{reconcile::override_key(a_dev, admin::EXECUTION_CLUSTER_LABEL),
                                 reconcile::override_key(a_wf, admin::EXECUTION_CLUSTER_LABEL)});
  auto whole = state_of({a, b, platform});
  pass::narrow(pass::PassScope{}, whole);
  CHECK(keys(whole).size() == 5);

  reconcile::Managed managed{{"project/a", {}}, {"project/b", {}}, {"override/b///X", {}}};
  pass::narrow(pass::PassScope{"a", ""}, managed);
  CHECK(managed.size() == 1);
  CHECK(managed.count("project/a"));

  std::map<std::string, ledger::RegistrationRecord> records;
  records["registration/a/development/x"].project = "a";
  records["registration/a/development/x"].domain = "development";
  records["registration/b/development/x"].project = "b";
  records["registration/b/development/x"].domain = "development";
  pass::narrow(pass::PassScope{"a", ""}, records);
  CHECK(records.size() == 1);

  std::vector<model::Registration> declared(2);
  declared[0].project = "a";
  declared[0].domain = "production";
  declared[1].project = "b";
  declared[1].domain = "production";
  CHECK(pass::narrowed(pass::PassScope{"a", "production"}, declared).size() == 1);
  CHECK(pass::narrowed(pass::PassScope{"a", "development"}, declared).empty());
}

namespace {

pass::Report run(testing::MemorySink& sink, ledger::Ledger& ledger, const model::Documents& docs,
                 pass::Mode mode, pass::PassScope scope = {}) {
  auto o = pass_test::options(mode);
  o.scope = std::move(scope);
  return pass_test::run_pass(sink, ledger, docs, o);
}

}  // namespace

TEST_CASE("scope: a pass for one project leaves other projects' drift and deletes alone",
          "[scope][pass]") {
  testing::MemorySink sink;
  auto ledger = ledger::Ledger::open(":memory:");
  REQUIRE(ledger);
  REQUIRE(run(sink, **ledger, documents({"a", "b", "c"}, "blue"), pass::Mode::execute).outcome ==
          pass::Outcome::success);
  // Out of band: b's label changed. In Git: c removed, a changed.
  auto live = sink.state();
  live.overrides
      .at(reconcile::override_key(model::Scope{"b", "development", ""},
                                  admin::EXECUTION_CLUSTER_LABEL))
      .value.mutable_execution_cluster_label()
      ->set_value("red");
  sink.set_state(live);
  auto docs = documents({"a", "b"}, "blue");
  docs.overrides[0].value.edit(
      [&](auto& v) { v.mutable_execution_cluster_label()->set_value("green"); });

  auto r = run(sink, **ledger, docs, pass::Mode::execute, pass::PassScope{"a", ""});
  CHECK(r.outcome == pass::Outcome::success);
  CHECK(r.plan.drift.empty());  // b's drift is out of scope
  REQUIRE(r.plan.steps.size() == 1);
  CHECK(r.plan.steps[0].key == reconcile::override_key(model::Scope{"a", "development", ""},
                                                       admin::EXECUTION_CLUSTER_LABEL));
  CHECK(r.plan.managed_count == 2);  // a's project and override: the guard's denominator
  CHECK(managed_of(r.guard_input, "overrides") == 1);
  const auto after = sink.state();
  CHECK(after.projects.count("c"));  // c's archive and delete wait for a pass over c
  CHECK(after.overrides.size() == 3);
  CHECK(after.overrides
            .at(reconcile::override_key(model::Scope{"b", "development", ""},
                                        admin::EXECUTION_CLUSTER_LABEL))
            .value.execution_cluster_label()
            .value() == "red");
  auto managed = (*ledger)->managed();
  REQUIRE(managed);
  CHECK(managed->size() == 6);  // nothing of b or c forgotten
}

TEST_CASE("scope: the guard's share is computed over the scope only", "[scope][pass]") {
  testing::MemorySink sink;
  auto ledger = ledger::Ledger::open(":memory:");
  REQUIRE(ledger);
  model::Documents docs = documents({"a", "b", "c", "d"}, "blue");
  // a also has a second override; Git removes it: 1 of a's 3 managed objects.
  model::Override extra;
  extra.scope = model::Scope{"a", "production", ""};
  extra.type = admin::EXECUTION_QUEUE;
  extra.value.edit([&](auto& v) { v.mutable_execution_queue_attributes()->add_tags("gpu"); });
  docs.overrides.push_back(extra);
  REQUIRE(run(sink, **ledger, docs, pass::Mode::execute).outcome == pass::Outcome::success);
  docs.overrides.pop_back();
  // Git removes one of a's two overrides: allowed (1 of 2 is not more than half). With both gone
  // the pass over a is refused (every override of a), although over every project 2 of 5
  // overrides (2 of 9 objects) would pass.
  auto ok = run(sink, **ledger, docs, pass::Mode::plan, pass::PassScope{"a", ""});
  CHECK(ok.outcome == pass::Outcome::success);
  CHECK(managed_of(ok.guard_input, "overrides") == 2);
  docs.overrides.erase(docs.overrides.begin());
  auto whole = run(sink, **ledger, docs, pass::Mode::plan);
  CHECK(whole.outcome == pass::Outcome::success);
  auto scoped = run(sink, **ledger, docs, pass::Mode::execute, pass::PassScope{"a", ""});
  CHECK(scoped.outcome == pass::Outcome::refused);
  CHECK(scoped.guard.reason.find("overrides") != std::string::npos);
  CHECK(managed_of(scoped.guard_input, "overrides") == 2);
  CHECK(managed_of(whole.guard_input, "overrides") == 5);
  CHECK(sink.state().overrides.size() == 5);
}

}  // namespace FLYTECD_UNITY_ID
