#include "daemon/common/worker_pool.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

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

namespace {

// Waits (bounded) until `done` holds; false on timeout.
template <typename Pred>
bool wait_for(std::mutex& mu, std::condition_variable& cv, Pred done) {
  std::unique_lock<std::mutex> lock(mu);
  return cv.wait_for(lock, std::chrono::seconds(10), done);
}

}  // namespace

TEST_CASE("worker pool: posted jobs all run, on the pool's threads, at most size() at once",
          "[worker_pool]") {
  WorkerPool pool(3);
  CHECK(pool.size() == 3);
  std::mutex mu;
  std::condition_variable cv;
  int finished = 0;
  std::atomic<int> in_flight{0}, most{0};
  std::set<std::thread::id> ids;
  for (int i = 0; i < 50; ++i) {
    REQUIRE(pool.post([&] {
      const int now = ++in_flight;
      for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      --in_flight;
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
      ++finished;
      cv.notify_all();
    }));
  }
  REQUIRE(wait_for(mu, cv, [&] { return finished == 50; }));
  CHECK(most.load() <= 3);
  CHECK(ids.size() <= 3);
  CHECK(ids.count(std::this_thread::get_id()) == 0);
}

TEST_CASE("worker pool: one thread starts jobs in the order posted", "[worker_pool]") {
  WorkerPool pool(1);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> order;
  for (int i = 0; i < 20; ++i) {
    pool.post([&, i] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
      cv.notify_all();
    });
  }
  REQUIRE(wait_for(mu, cv, [&] { return order.size() == 20; }));
  for (int i = 0; i < 20; ++i) CHECK(order[static_cast<size_t>(i)] == i);
}

TEST_CASE("worker pool: stop lets the running job finish, drops queued ones, refuses new ones",
          "[worker_pool]") {
  WorkerPool pool(1);
  std::mutex mu;
  std::condition_variable cv;
  bool started = false, release = false, first_done = false;
  std::atomic<int> queued_ran{0};
  pool.post([&] {
    std::unique_lock<std::mutex> lock(mu);
    started = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    first_done = true;
  });
  for (int i = 0; i < 5; ++i) pool.post([&] { ++queued_ran; });
  REQUIRE(wait_for(mu, cv, [&] { return started; }));

  std::thread stopper([&] { pool.stop(); });
  // stop() has begun once post() refuses; the running job still holds its thread.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool.post([&] { ++queued_ran; }) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  CHECK_FALSE(pool.post([&] { ++queued_ran; }));
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK_FALSE(first_done);
    release = true;
  }
  cv.notify_all();
  stopper.join();
  CHECK(first_done);
  CHECK(queued_ran.load() == 0);
  pool.stop();  // idempotent
  CHECK_FALSE(pool.post([] {}));
}

TEST_CASE("worker pool: a pool without threads runs nothing and stops at once", "[worker_pool]") {
  WorkerPool pool(0);
  bool ran = false;
  CHECK(pool.post([&] { ran = true; }));
  pool.stop();
  CHECK_FALSE(ran);
}

}  // namespace FLYTECD_UNITY_ID
