#include "daemon/common/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <utility>

namespace flytecd {

WorkerPool::WorkerPool(size_t threads) {
  m_threads.reserve(threads);
  for (size_t i = 0; i < threads; ++i) m_threads.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() { stop(); }

bool WorkerPool::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(m_mu);
    if (m_stop) return false;
    m_jobs.push_back(std::move(job));
  }
  m_cv.notify_one();
  return true;
}

void WorkerPool::stop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    m_stop = true;
    dropped.swap(m_jobs);  // destroyed outside the lock: a job's captures may be heavy
  }
  m_cv.notify_all();
  std::lock_guard<std::mutex> lock(m_join_mu);
  for (auto& t : m_threads) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(m_mu);
      m_cv.wait(lock, [&] { return m_stop || !m_jobs.empty(); });
      if (m_stop) return;
      job = std::move(m_jobs.front());
      m_jobs.pop_front();
    }
    job();
  }
}

size_t run_jobs(size_t count, int max_threads, const std::function<void(size_t index)>& job,
                const std::function<bool()>& stop) {
  std::atomic<size_t> next{0};
  std::atomic<size_t> ran{0};
  auto worker = [&] {
    while (!(stop && stop())) {
      const size_t i = next.fetch_add(1);
      if (i >= count) return;
      job(i);
      ran.fetch_add(1);
    }
  };
  const size_t n = std::min(count, static_cast<size_t>(std::max(1, max_threads)));
  if (n <= 1) {
    worker();
    return ran.load();
  }
  // Threads are started per call: a pass runs a handful of these, each for seconds, so a
  // long-lived pool would save nothing measurable and would outlive the pass's state.
  WorkerPool pool(n - 1);
  for (size_t t = 1; t < n; ++t) pool.post(worker);
  worker();
  // Every index has been claimed (or `stop` holds), so a worker still queued would find nothing
  // to do: dropping it is safe, and stop() waits for the ones in flight.
  pool.stop();
  return ran.load();
}

}  // namespace flytecd
