#include "daemon/common/worker_pool.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace flytecd;

TEST_CASE("worker pool: every job runs exactly once", "[worker_pool]") {
  for (int threads : {1, 2, 4, 16}) {
    std::vector<std::atomic<int>> runs(100);
    const size_t ran = run_jobs(runs.size(), threads, [&](size_t i) { runs[i]++; });
    CHECK(ran == 100);
    for (auto& r : runs) CHECK(r.load() == 1);
  }
}

TEST_CASE("worker pool: never more than max_threads at once, the caller being one",
          "[worker_pool]") {
  std::atomic<int> in_flight{0}, most{0};
  std::mutex mu;
  std::set<std::thread::id> ids;
  run_jobs(40, 3, [&](size_t) {
    const int now = ++in_flight;
    for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    --in_flight;
  });
  CHECK(most.load() <= 3);
  CHECK(ids.size() <= 3);
  CHECK(ids.size() >= 1);
}

TEST_CASE("worker pool: one thread runs inline, in index order", "[worker_pool]") {
  std::vector<size_t> order;
  const auto caller = std::this_thread::get_id();
  bool same_thread = true;
  run_jobs(5, 1, [&](size_t i) {
    order.push_back(i);
    same_thread = same_thread && std::this_thread::get_id() == caller;
  });
  CHECK(order == std::vector<size_t>{0, 1, 2, 3, 4});
  CHECK(same_thread);
  CHECK(run_jobs(0, 8, [&](size_t) { FAIL("no job expected"); }) == 0);
  CHECK(run_jobs(3, 0, [&](size_t) {}) == 3);  // max_threads <= 0 still runs on the caller
}

TEST_CASE("worker pool: once stop holds, no further job starts", "[worker_pool]") {
  std::atomic<int> ran{0};
  std::atomic<bool> stop{false};
  const size_t n = run_jobs(
      1000, 4,
      [&](size_t) {
        if (++ran >= 10) stop = true;
      },
      [&] { return stop.load(); });
  CHECK(n == static_cast<size_t>(ran.load()));
  CHECK(ran.load() >= 10);
  CHECK(ran.load() < 1000);
  CHECK(ran.load() <= 10 + 3);  // at most the jobs already in flight on the other threads
}
