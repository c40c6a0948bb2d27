#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "daemon/common/result.hpp"

// The memory that package reading may hold at once, across every registration in flight: a
// counting semaphore of bytes. A reader asks for everything it will hold in one call (so two
// readers can never each hold half and wait for the other), keeps the lease while the decoded
// package is alive, and gives it back when the lease is destroyed.

namespace flytecd::registration {

class MemoryBudget;

// Bytes held from a MemoryBudget; returned on destruction. Move-only. Not thread-safe itself.
class BudgetLease {
 public:
  BudgetLease() = default;
  BudgetLease(BudgetLease&& other) noexcept;
  BudgetLease& operator=(BudgetLease&& other) noexcept;
  BudgetLease(const BudgetLease&) = delete;
  BudgetLease& operator=(const BudgetLease&) = delete;
  ~BudgetLease();

  uint64_t bytes() const { return m_bytes; }
  // Grows the lease by `more` bytes without waiting; false (lease unchanged) if the budget does
  // not have them free now. Always succeeds on a lease without a budget.
  bool try_grow(uint64_t more);
  // Gives back everything above `bytes` (no-op if the lease is not larger).
  void shrink_to(uint64_t bytes);
  void release();

 private:
  friend class MemoryBudget;
  BudgetLease(MemoryBudget* budget, uint64_t bytes) : m_budget(budget), m_bytes(bytes) {}
  MemoryBudget* m_budget = nullptr;
  uint64_t m_bytes = 0;
};

class MemoryBudget {
 public:
  // `capacity` bytes; `key` names the setting that sizes it, for error messages.
  explicit MemoryBudget(uint64_t capacity, std::string key = "packages.memoryBudgetBytes");
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Takes `bytes` for `who`, waiting up to `wait` while other leases hold too much. Errors:
  // invalid_input if `bytes` exceeds the capacity (it can never fit: names who, the figures and
  // the key to change), unavailable on timeout or when `cancel` becomes true. Thread-safe.
  Result<BudgetLease> acquire(uint64_t bytes, const std::string& who,
                              std::chrono::milliseconds wait = std::chrono::minutes(5),
                              const std::atomic<bool>* cancel = nullptr);

  uint64_t capacity() const { return m_capacity; }
  const std::string& key() const { return m_key; }
  uint64_t in_use() const;
  uint64_t peak() const;  // the most ever held at once

 private:
  friend class BudgetLease;
  bool try_take(uint64_t bytes);
  void give_back(uint64_t bytes);

  const uint64_t m_capacity;
  const std::string m_key;
  mutable std::mutex m_mu;
  std::condition_variable m_freed;
  uint64_t m_used = 0;
  uint64_t m_peak = 0;
};

}  // namespace flytecd::registration
