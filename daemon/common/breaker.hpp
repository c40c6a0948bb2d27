#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "daemon/common/result.hpp"

namespace flytecd {

// A circuit breaker for one reconcile pass against one target (FlyteAdmin). It counts
// consecutive outcomes that say the target is unreachable (unavailable, timeout: each already
// retried with backoff by the transport) across the steps of the pass, and opens at `threshold`.
// Any other outcome, a success or an error the target answered with, resets the count. Once
// open it stays open for the pass: callers stop starting new work, let the work in flight
// finish, and report the target down; the next pass uses a new breaker and so retries.
// Thread-safe.
class CircuitBreaker {
 public:
  static constexpr int k_default_threshold = 5;
  // threshold <= 0 disables the breaker (it never opens).
  explicit CircuitBreaker(int threshold = k_default_threshold);

  // Records one outcome of a call to the target.
  void record(const Status& outcome);
  void record(const Error& error);
  void record_success();
  // Opens at once if `error` says the target is unreachable: for a failure that is already
  // conclusive on its own (e.g. the pass's observation of every object failed so).
  void trip(const Error& error);

  bool open() const;
  // Why it is open: ErrorCode::unavailable, naming the number of consecutive failures and the
  // last of them; nullopt while closed.
  std::optional<Error> error() const;
  // Whether an error means the target could not be reached (what the breaker counts).
  static bool is_unreachable(const Error& e);

 private:
  const int m_threshold;
  mutable std::mutex m_mu;
  int m_consecutive = 0;
  bool m_open = false;
  std::string m_last;  // message of the failure that opened it
};

}  // namespace flytecd
