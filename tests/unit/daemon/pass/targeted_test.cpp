// A targeted pass (pass.hpp Options::targeted): after a Git change the daemon observes, plans and
// writes only the projects the change touched (pass/scope changed_projects), and converges the
// revision like a whole pass; the periodic whole pass still finds drift elsewhere.
#include <catch2/catch.hpp>

#include "daemon/pass/pass.hpp"
#include "daemon/pass/scope.hpp"
#include "daemon/pass/views.hpp"
#include "tests/unit/daemon/pass/pass_fixtures.hpp"
#include "tests/unit/sinks/memory_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {

// p0..p4 with their labels, each project in a file of its own ("p<i>.yaml").
model::Documents in_files(const std::string& p1_value = "blue") {
  model::Documents d = pass_test::documents(5);
  for (auto& p : d.projects) p.where.file = p.id + ".yaml";
  for (auto& o : d.overrides) {
    o.where.file = o.scope.project + ".yaml";
    if (o.scope.project == "p1")
      o.value.edit([&](auto& v) { v.mutable_execution_cluster_label()->set_value(p1_value); });
  }
  return d;
}

std::map<std::string, std::string> files(std::map<std::string, std::string> changed = {}) {
  std::map<std::string, std::string> f;
  for (int i = 0; i < 5; ++i) f["p" + std::to_string(i) + ".yaml"] = "blob" + std::to_string(i);
  for (auto& [k, v] : changed) f[k] = v;
  return f;
}

std::unique_ptr<ledger::Ledger> open_ledger() {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  return std::move(*l);
}

pass::Report run_at(testing::MemorySink& sink, ledger::Ledger& ledger, const std::string& rev,
                    const model::Documents& docs, const pass::Options& o) {
  pass::Wiring w;
  w.sink = &sink;
  w.ledger = &ledger;
  w.target = "memory";
  return pass::run(pass::Revision{rev, "", &docs, "", 0}, w, o);
}

// A whole pass of r1 (p0..p4) under `policy` that converged; its options, for the next whole pass.
pass::Options converge_r1(testing::MemorySink& sink, ledger::Ledger& ledger,
                          reconcile::Policy policy) {
  auto whole = pass_test::options(pass::Mode::execute);
  whole.policy = policy;
  REQUIRE(run_at(sink, ledger, "r1", in_files(), whole).outcome == pass::Outcome::success);
  REQUIRE(*ledger.converged_revision() == "r1");
  return whole;
}

pass::Options targeted(const std::string& base, std::set<std::string> projects) {
  auto o = pass_test::options(pass::Mode::execute);
  o.policy.self_heal = true;
  o.targeted = pass::Options::Targeted{base, std::move(projects)};
  return o;
}

size_t steps_on(const pass::Report& r, const std::string& project) {
  size_t n = 0;
  for (const auto& s : r.plan.steps)
    n += s.key.find("/" + project + "/") != std::string::npos || s.key == "project/" + project;
  return n;
}

}  // namespace

TEST_CASE("targeted: the projects of the changed files, from both revisions", "[targeted]") {
  const auto before = in_files(), after = in_files("green");
  auto c = pass::changed_projects(before, files(), after, files({{"p1.yaml", "new"}}), false);
  CHECK_FALSE(c.everything);
  CHECK(c.projects == std::set<std::string>{"p1"});

  // No document file changed: no project.
  c = pass::changed_projects(before, files(), before, files(), false);
  CHECK_FALSE(c.everything);
  CHECK(c.projects.empty());

  // A removed file touches what it held; an added one what it holds.
  auto fewer = before;
  std::erase_if(fewer.projects, [](const auto& p) { return p.id == "p3"; });
  std::erase_if(fewer.overrides, [](const auto& o) { return o.scope.project == "p3"; });
  auto without_p3 = files();
  without_p3.erase("p3.yaml");
  CHECK(pass::changed_projects(before, files(), fewer, without_p3, false).projects ==
        std::set<std::string>{"p3"});
  CHECK(pass::changed_projects(fewer, without_p3, before, files(), false).projects ==
        std::set<std::string>{"p3"});

  // Platform defaults are in no project: the pass is whole.
  auto defaults = after;
  model::PlatformDefault pd;
  pd.domain = "development";
  pd.type = flyteidl::admin::EXECUTION_CLUSTER_LABEL;
  pd.where.file = "platform.yaml";
  defaults.platform_defaults.push_back(pd);
  c = pass::changed_projects(before, files(), defaults, files({{"platform.yaml", "x"}}), false);
  CHECK(c.everything);
  CHECK(c.why.find("platform.yaml") != std::string::npos);

  // A registration whose package is a file of the repository: its project is always touched;
  // with a repository key in packages.verify, every registration's project is.
  auto regs = before;
  model::Registration in_repo, in_registry;
  in_repo.project = "p4";
  in_repo.package = "packages/etl.tgz";
  in_repo.where.file = "p4.yaml";
  in_registry.project = "p2";
  in_registry.package = "oci://registry.local/flyte/etl:v1";
  in_registry.where.file = "p2.yaml";
  regs.registrations = {in_repo, in_registry};
  CHECK(pass::changed_projects(regs, files(), regs, files(), false).projects ==
        std::set<std::string>{"p4"});
  CHECK(pass::changed_projects(regs, files(), regs, files(), true).projects ==
        std::set<std::string>{"p2", "p4"});
}

TEST_CASE("targeted: a scope of projects, and how it reads", "[targeted]") {
  pass::PassScope s;
  s.projects = std::set<std::string>{"a", "b"};
  CHECK_FALSE(s.empty());
  CHECK(s.describe() == "2 projects (a, b)");
  CHECK(pass::key_in_scope(s, "project/a"));
  CHECK(pass::key_in_scope(s, "override/b/production/wf/TASK_RESOURCE"));
  CHECK_FALSE(pass::key_in_scope(s, "override/c///TASK_RESOURCE"));
  CHECK_FALSE(pass::key_in_scope(s, "override//production//TASK_RESOURCE"));
  s.projects->clear();
  CHECK_FALSE(s.empty());  // a targeted pass with nothing touched covers nothing, not everything
  CHECK(s.describe() == "no project");
  CHECK_FALSE(pass::key_in_scope(s, "project/a"));
}

TEST_CASE("targeted: only the changed project is observed and written, and the revision converges",
          "[targeted]") {
  testing::MemorySink sink;
  auto ledger = open_ledger();
  reconcile::Policy heal;
  heal.self_heal = true;
  const auto whole = converge_r1(sink, *ledger, heal);

  // Out of band, in a project the next commit does not touch.
  auto live = sink.state();
  live.overrides.begin()->second.value.mutable_execution_cluster_label()->set_value("red");
  const std::string drifted_key = live.overrides.begin()->first;
  REQUIRE(drifted_key.find("/p0/") != std::string::npos);
  sink.set_state(live);

  const auto r2 = in_files("green");
  const int full_reads = sink.observes();
  auto t = run_at(sink, *ledger, "r2", r2, targeted("r1", {"p1"}));
  CHECK(t.outcome == pass::Outcome::success);
  CHECK(t.targeted.used);
  CHECK(sink.observes() == full_reads);  // nothing read everything
  REQUIRE_FALSE(sink.scoped_observes().empty());
  CHECK(sink.scoped_observes().front().projects == std::set<std::string>{"p1"});
  CHECK(sink.scoped_observes().front().override_keys.size() == 1);
  CHECK(steps_on(t, "p1") == 1);
  CHECK(t.plan.steps.size() == 1);
  CHECK(t.plan.drift.empty());  // p0's drift is outside the pass
  CHECK(pass::summary(t).find("targeted: 1 project (p1) changed since r1") != std::string::npos);
  CHECK(*ledger->converged_revision() == "r2");

  // The next whole pass (the drift scan) finds p0's drift and reverts it.
  auto w = run_at(sink, *ledger, "r2", r2, whole);
  REQUIRE(w.plan.drift.size() == 1);
  CHECK(w.plan.drift.front().key == drifted_key);
  CHECK(w.outcome == pass::Outcome::success);
  CHECK(sink.state().overrides.at(drifted_key).value.execution_cluster_label().value() == "blue");

  // Both views agree once converged: a targeted pass with no change plans nothing.
  auto again = run_at(sink, *ledger, "r3", r2, targeted("r2", {"p1"}));
  CHECK(again.targeted.used);
  CHECK(again.plan.steps.empty());
  CHECK(again.plan.in_sync == 2);  // p1's project and its label
}

TEST_CASE("targeted: declined (whole) unless the change's base converged", "[targeted]") {
  testing::MemorySink sink;
  auto ledger = open_ledger();
  converge_r1(sink, *ledger, {});
  auto t = run_at(sink, *ledger, "r9", in_files("green"), targeted("r0", {"p1"}));
  CHECK_FALSE(t.targeted.used);
  CHECK(t.targeted.asked);
  CHECK(t.targeted.whole_because.find("converged revision is not r0") != std::string::npos);
  CHECK(t.plan.in_sync == 9);  // whole: every project and label but p1's observed
  CHECK(pass::scope_json(t)["targetedDeclined"].get<std::string>() == t.targeted.whole_because);

  // --project wins over a targeted offer.
  auto scoped = targeted("r9", {"p1"});
  scoped.scope = pass::PassScope{"p2", ""};
  auto s = run_at(sink, *ledger, "r10", in_files("green"), scoped);
  CHECK_FALSE(s.targeted.used);
}

TEST_CASE("targeted: the guard counts against everything managed, as a whole pass does",
          "[targeted]") {
  testing::MemorySink sink;
  auto ledger = open_ledger();
  reconcile::Policy prune;
  prune.prune = true;
  converge_r1(sink, *ledger, prune);
  // p1 leaves Git: in its scope nothing is declared and everything would go, which a guard over
  // the scope alone refuses ("declares no projects", "all of them").
  auto gone = in_files();
  std::erase_if(gone.projects, [](const auto& p) { return p.id == "p1"; });
  std::erase_if(gone.overrides, [](const auto& o) { return o.scope.project == "p1"; });
  gone.document_count = gone.projects.size() + gone.overrides.size();
  auto o = targeted("r1", {"p1"});
  o.policy.prune = true;
  o.policy.max_prune_share = 0.5;
  auto t = run_at(sink, *ledger, "r2", gone, o);
  CHECK(t.targeted.used);
  CHECK_FALSE(t.guard.refused);
  CHECK(t.outcome == pass::Outcome::success);
  for (const auto& k : t.guard_input.kinds) {
    if (k.name == "projects") CHECK((k.managed == 5 && k.desired == 4 && k.destroyed == 1));
    if (k.name == "overrides") CHECK((k.managed == 5 && k.desired == 4 && k.destroyed == 1));
  }
  CHECK(sink.state().projects.at("p1").archived);
}

TEST_CASE("targeted: the daemon's view keeps the last whole pass outside the projects",
          "[targeted]") {
  pass::Report whole, t;
  whole.applied.objects = {
      {"override/p0/development//EXECUTION_CLUSTER_LABEL", pass::ObjectState::drifted, "left"},
      {"override/p1/development//EXECUTION_CLUSTER_LABEL", pass::ObjectState::synced, ""}};
  whole.plan.unmanaged = {"override/p0/production//TASK_RESOURCE",
                          "override/p1/production//TASK_RESOURCE"};
  whole.plan.drift.push_back({reconcile::ObjectKind::override_attr,
                              "override/p0/development//EXECUTION_CLUSTER_LABEL",
                              "",
                              false,
                              {}});
  t.targeted.used = true;
  t.targeted.projects = {"p1"};
  t.applied.objects = {
      {"override/p1/development//EXECUTION_CLUSTER_LABEL", pass::ObjectState::pending, "x"}};
  const auto v = pass::merged_view(whole, t);
  REQUIRE(v.applied.objects.size() == 2);
  CHECK(v.applied.objects[0].state == pass::ObjectState::drifted);  // p0: from the whole pass
  CHECK(v.applied.objects[1].state == pass::ObjectState::pending);  // p1: from the targeted one
  CHECK(v.plan.unmanaged == std::vector<std::string>{"override/p0/production//TASK_RESOURCE"});
  CHECK(v.plan.drift.size() == 1);
  // A whole pass is its own view.
  CHECK(pass::merged_view(t, whole).applied.objects.size() == 2);
}

}  // namespace FLYTECD_UNITY_ID
