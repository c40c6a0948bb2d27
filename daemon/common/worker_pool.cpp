#include "daemon/common/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace flytecd {

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
  // Threads are started per call: a pass runs a handful of these, each for seconds, so a
  // long-lived pool would save nothing measurable and would outlive the pass's state.
  const size_t n = std::min(count, static_cast<size_t>(std::max(1, max_threads)));
  std::vector<std::thread> threads;
  threads.reserve(n > 0 ? n - 1 : 0);
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return ran.load();
}

}  // namespace flytecd
