// When the daemon offers a targeted pass (daemon/run/targeting): after a Git change that touched
// only projects, for a poll or a webhook, while the periodic whole pass is not due; and what it
// keeps of the last whole pass.
#include "daemon/run/targeting.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using Clock = run::Targeting::Clock;

namespace {

// A revision holding project `id` in `<id>.yaml` with content id `blob`.
wiring::LoadedRevision revision(const std::string& rev, const std::string& blob) {
  wiring::LoadedRevision r;
  r.revision = rev;
  model::ProjectDoc p;
  p.id = "alpha";
  p.where.file = "alpha.yaml";
  r.docs.projects.push_back(p);
  r.files["alpha.yaml"] = blob;
  return r;
}

pass::Report whole_pass() {
  pass::Report r;
  r.observed = true;
  return r;
}

}  // namespace

TEST_CASE("targeting: offered for a poll or webhook after a change, until the scan is due",
          "[targeting]") {
  const config::Config cfg;
  const auto r1 = revision("r1", "a"), r2 = revision("r2", "b");
  const auto t0 = Clock::now();
  run::Targeting t;
  // No whole pass yet: nothing to narrow from.
  CHECK(t.on_revision(&r1, r2, cfg).empty());
  CHECK_FALSE(t.offer("webhook generic", false, 60, t0));

  t.after(whole_pass(), t0);
  CHECK(t.on_revision(&r1, r2, cfg).empty());
  auto o = t.offer("webhook generic", false, 60, t0 + std::chrono::seconds(10));
  REQUIRE(o);
  CHECK(o->base == "r1");
  CHECK(o->projects == std::set<std::string>{"alpha"});
  // Used once: the next pass without a new revision is whole.
  CHECK_FALSE(t.offer("webhook generic", false, 60, t0 + std::chrono::seconds(11)));

  // Whole for a start, a reload, a new leader, an API request, a suspension; and once 0.85 of the
  // drift scan interval has passed since the last whole pass.
  for (const char* reason : {"startup", "reload", "became leader", "api sync"}) {
    t.on_revision(&r1, r2, cfg);
    CHECK_FALSE(t.offer(reason, false, 60, t0 + std::chrono::seconds(10)));
  }
  t.on_revision(&r1, r2, cfg);
  CHECK_FALSE(t.offer("interval", true, 60, t0 + std::chrono::seconds(10)));
  t.on_revision(&r1, r2, cfg);
  CHECK(t.offer("interval", false, 60, t0 + std::chrono::seconds(50)));
  t.on_revision(&r1, r2, cfg);
  CHECK_FALSE(t.offer("interval", false, 60, t0 + std::chrono::seconds(52)));

  // A targeted pass does not restart the scan's clock; a whole one does.
  pass::Report targeted;
  targeted.observed = true;
  targeted.targeted.used = true;
  t.after(targeted, t0 + std::chrono::seconds(55));
  t.on_revision(&r1, r2, cfg);
  CHECK_FALSE(t.offer("interval", false, 60, t0 + std::chrono::seconds(56)));
  t.after(whole_pass(), t0 + std::chrono::seconds(56));
  t.on_revision(&r1, r2, cfg);
  CHECK(t.offer("interval", false, 60, t0 + std::chrono::seconds(57)));

  // A change to what is in no project: whole, and why.
  auto defaults = r2;
  model::PlatformDefault pd;
  pd.where.file = "platform.yaml";
  defaults.docs.platform_defaults.push_back(pd);
  defaults.files["platform.yaml"] = "p";
  CHECK(t.on_revision(&r1, defaults, cfg).find("platform.yaml") != std::string::npos);
  CHECK_FALSE(t.offer("webhook generic", false, 60, t0 + std::chrono::seconds(57)));
}

TEST_CASE("targeting: what is kept of the last whole pass outside the targeted projects",
          "[targeting]") {
  pass::Report r;
  r.targeted.used = true;
  r.targeted.projects = {"beta"};
  const run::AppliedMap before{{"project/alpha", {"r1", 1}},
                               {"project/beta", {"r1", 1}},
                               {"override/beta/development//TASK_RESOURCE", {"r1", 1}}};
  const auto after = run::applied_after(r, &before, {{"project/beta", {"r2", 2}}});
  CHECK(after.size() == 2);  // beta's override is no longer in the ledger
  CHECK(after.at("project/alpha").revision == "r1");
  CHECK(after.at("project/beta").revision == "r2");
  CHECK(run::applied_after(pass::Report{}, &before, {}).empty());  // whole: the ledger's read

  const std::set<std::string> known{"override/alpha/development//TASK_RESOURCE",
                                    "override/beta/development//TASK_RESOURCE"};
  CHECK(run::known_drift_after(r, {}, known) ==
        std::set<std::string>{"override/alpha/development//TASK_RESOURCE"});
  CHECK(run::known_drift_after(pass::Report{}, {}, known).empty());
}

}  // namespace FLYTECD_UNITY_ID
