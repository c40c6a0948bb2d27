#include "daemon/reconcile/guard.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::reconcile;

namespace {
GuardInput counts(size_t documents, std::vector<GuardKind> kinds) {
  GuardInput in;
  in.documents = documents;
  in.kinds = std::move(kinds);
  return in;
}
}  // namespace

TEST_CASE("guard: a revision with zero documents is refused unless allowEmpty", "[guard]") {
  Policy policy;
  auto v = guard_pass(counts(0, {{"projects", 0, 0, 0}}), policy);
  CHECK(v.refused);
  CHECK_THAT(v.reason, Catch::Contains("zero documents"));
  CHECK_THAT(v.reason, Catch::Contains("--allow-empty"));
  policy.allow_empty = true;
  CHECK_FALSE(guard_pass(counts(0, {{"projects", 0, 0, 0}}), policy).refused);
}

TEST_CASE("guard: none left of a managed kind is refused unless allowEmpty", "[guard]") {
  Policy policy;
  policy.allow_mass_prune = true;  // the empty rule stands on its own
  auto v = guard_pass(counts(40, {{"overrides", 49, 49, 0}, {"registrations", 6, 0, 6}}), policy);
  CHECK(v.refused);
  CHECK_THAT(v.reason, Catch::Contains("declares no registrations while flytecd manages 6"));
  policy.allow_empty = true;
  CHECK_FALSE(guard_pass(counts(40, {{"overrides", 49, 49, 0}, {"registrations", 6, 0, 6}}), policy)
                  .refused);
}

// Issue 11: the registration part deactivated all 24 launch plans of a removed registration
// while the overrides part of the same reconcile was refused.
TEST_CASE("guard: the share rule applies per kind and to the total", "[guard]") {
  Policy policy;  // 50%
  // Registrations: 4 of 6 removed (67%) is refused though overrides lose nothing.
  auto per_kind =
      guard_pass(counts(60, {{"overrides", 50, 50, 0}, {"registrations", 6, 2, 4}}), policy);
  CHECK(per_kind.refused);
  CHECK_THAT(per_kind.reason, Catch::Contains("4 of 6 managed registrations"));
  // All of a kind, even a kind of one.
  CHECK(guard_pass(counts(9, {{"projects", 1, 0, 1}, {"overrides", 9, 9, 0}}), policy).refused);
  // Each kind under the share but the total over it.
  policy.max_prune_share = 0.4;
  auto total = guard_pass(
      counts(9, {{"projects", 10, 6, 4}, {"overrides", 10, 6, 4}, {"registrations", 2, 1, 1}}),
      policy);
  CHECK(total.refused);
  CHECK_THAT(total.reason, Catch::Contains("managed registrations"));
  auto fine = guard_pass(counts(9, {{"projects", 10, 7, 3}, {"overrides", 10, 7, 3}}), policy);
  CHECK_FALSE(fine.refused);
  policy.allow_mass_prune = true;
  CHECK_FALSE(guard_pass(counts(9, {{"projects", 2, 1, 1}}), policy).refused);
}

TEST_CASE("guard: counts come from the ledger and the revision, prune off destroys nothing",
          "[guard]") {
  State desired;
  desired.projects["p1"] = ProjectState{"p1", "p1", "", {}, false};
  Managed managed{{"project/p1", {}}, {"project/p2", {}}, {"override/p1/d//TASK_RESOURCE", {}}};
  auto in = guard_input(desired, {"registration/p1/d/a"}, 3, managed,
                        {"registration/p1/d/a", "registration/p1/d/b"}, true);
  REQUIRE(in.kinds.size() == 3);
  CHECK(in.kinds[0].managed == 2);
  CHECK(in.kinds[0].destroyed == 1);
  CHECK(in.kinds[1].managed == 1);
  CHECK(in.kinds[1].destroyed == 1);
  CHECK(in.kinds[1].desired == 0);
  CHECK(in.kinds[2].destroyed == 1);
  auto off = guard_input(desired, {}, 3, managed, {"registration/p1/d/a"}, false);
  for (const auto& k : off.kinds) CHECK(k.destroyed == 0);
}

}  // namespace FLYTECD_UNITY_ID
