#include "daemon/registration/budget.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::registration;
using namespace std::chrono_literals;

TEST_CASE("budget: leases are returned when destroyed, grown only while bytes are free",
          "[registration][memory]") {
  MemoryBudget budget(1000);
  {
    auto a = budget.acquire(600, "a");
    REQUIRE(a.ok());
    CHECK(budget.in_use() == 600);
    CHECK(a->try_grow(400));
    CHECK(a->bytes() == 1000);
    CHECK_FALSE(a->try_grow(1));  // full: unchanged
    CHECK(a->bytes() == 1000);
    a->shrink_to(250);
    CHECK(budget.in_use() == 250);
    BudgetLease moved = std::move(*a);
    CHECK(a->bytes() == 0);
    CHECK(budget.in_use() == 250);
  }
  CHECK(budget.in_use() == 0);
  CHECK(budget.peak() == 1000);
}

TEST_CASE("budget: a request that can never fit is refused naming who, the figures and the key",
          "[registration][memory]") {
  MemoryBudget budget(1000, "packages.memoryBudgetBytes");
  auto r = budget.acquire(1001, "packages/big.tgz");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == flytecd::ErrorCode::invalid_input);
  CHECK_THAT(r.error().message, Catch::StartsWith("packages/big.tgz: needs 1001 bytes"));
  CHECK_THAT(r.error().message, Catch::Contains("1000 bytes (packages.memoryBudgetBytes)"));
  CHECK_THAT(r.error().message, Catch::Contains("raise packages.memoryBudgetBytes"));
  CHECK(budget.peak() == 0);
}

TEST_CASE("budget: a reader waits for bytes another holds, and gives up after its wait",
          "[registration][memory]") {
  MemoryBudget budget(1000);
  auto held = budget.acquire(700, "first");
  REQUIRE(held.ok());

  auto timed_out = budget.acquire(400, "second", 50ms);
  REQUIRE_FALSE(timed_out.ok());
  CHECK(timed_out.error().code == flytecd::ErrorCode::unavailable);
  CHECK(timed_out.error().retryable());
  CHECK_THAT(timed_out.error().message,
             Catch::Contains("other registrations hold 700 of the 1000"));

  std::atomic<bool> cancel{true};
  auto cancelled = budget.acquire(400, "third", 10s, &cancel);
  REQUIRE_FALSE(cancelled.ok());
  CHECK_THAT(cancelled.error().message, Catch::Contains("cancelled"));

  // Released from another thread while we wait: the wait ends with the bytes.
  std::thread releaser([&] {
    std::this_thread::sleep_for(50ms);
    held->release();
  });
  auto later = budget.acquire(400, "fourth", 10s);
  releaser.join();
  REQUIRE(later.ok());
  CHECK(budget.in_use() == 400);
  CHECK(budget.peak() == 700);
}

}  // namespace FLYTECD_UNITY_ID
