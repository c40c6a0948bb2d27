#pragma once

#include <cstddef>
#include <functional>

namespace flytecd {

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
