#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

// The tree's one worker pool: WorkerPool (long-lived threads over a FIFO queue, e.g. the HTTP
// listener's handler threads) and run_jobs (a bounded fork-join over indices, built on it).

namespace flytecd {

// A fixed set of threads taking jobs from one FIFO queue. post() and stop() are thread-safe;
// jobs run concurrently with each other (up to size() at once) and must not throw (an exception
// escaping a worker thread terminates the process, as with std::thread).
class WorkerPool {
 public:
  // Starts `threads` threads (none when 0: posted jobs then wait until stop() drops them).
  explicit WorkerPool(size_t threads);
  // stop().
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `job` for the next free thread; jobs start in the order posted. False (and `job` is
  // dropped) once stop() has begun.
  bool post(std::function<void()> job);
  // Lets running jobs finish, drops queued ones, joins the threads. Idempotent; must not be
  // called from one of the pool's own jobs.
  void stop();
  // Number of threads started.
  size_t size() const { return m_threads.size(); }

 private:
  void work();

  std::mutex m_mu;
  std::condition_variable m_cv;
  std::deque<std::function<void()>> m_jobs;
  bool m_stop = false;
  std::mutex m_join_mu;  // serialises concurrent stop() calls around the joins
  std::vector<std::thread> m_threads;
};

// Runs job(0) … job(count - 1) on at most `max_threads` threads, the calling thread being one
// of them (so max_threads <= 1, or a single job, runs everything inline, in index order, with no
// thread started). Jobs are handed out in index order; each runs exactly once unless `stop`
// returns true, which is checked before each job is started: once it holds, jobs not yet started
// are skipped (the ones in flight finish). Returns when every started job has finished; returns
// the number of jobs run. `job` must be safe to call concurrently; it must not throw (an
// exception escaping a worker thread terminates the process, as with std::thread).
size_t run_jobs(size_t count, int max_threads, const std::function<void(size_t index)>& job,
                const std::function<bool()>& stop = {});

}  // namespace flytecd
