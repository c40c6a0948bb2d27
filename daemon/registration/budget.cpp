#include "daemon/registration/budget.hpp"

#include <algorithm>
#include <utility>

namespace flytecd::registration {

BudgetLease::BudgetLease(BudgetLease&& other) noexcept
    : m_budget(std::exchange(other.m_budget, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}

BudgetLease& BudgetLease::operator=(BudgetLease&& other) noexcept {
  if (this != &other) {
    release();
    m_budget = std::exchange(other.m_budget, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

BudgetLease::~BudgetLease() { release(); }

bool BudgetLease::try_grow(uint64_t more) {
  if (m_budget != nullptr && !m_budget->try_take(more)) return false;
  m_bytes += more;
  return true;
}

void BudgetLease::shrink_to(uint64_t bytes) {
  if (bytes >= m_bytes) return;
  if (m_budget != nullptr) m_budget->give_back(m_bytes - bytes);
  m_bytes = bytes;
}

void BudgetLease::release() {
  if (m_budget != nullptr && m_bytes > 0) m_budget->give_back(m_bytes);
  m_budget = nullptr;
  m_bytes = 0;
}

MemoryBudget::MemoryBudget(uint64_t capacity, std::string key)
    : m_capacity(capacity), m_key(std::move(key)) {}

bool MemoryBudget::try_take(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(m_mu);
  if (bytes > m_capacity - m_used) return false;
  m_used += bytes;
  m_peak = std::max(m_peak, m_used);
  return true;
}

void MemoryBudget::give_back(uint64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(m_mu);
    m_used -= std::min(bytes, m_used);
  }
  m_freed.notify_all();
}

uint64_t MemoryBudget::in_use() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_used;
}

uint64_t MemoryBudget::peak() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_peak;
}

Result<BudgetLease> MemoryBudget::acquire(uint64_t bytes, const std::string& who,
                                          std::chrono::milliseconds wait,
                                          const std::atomic<bool>* cancel) {
  if (bytes > m_capacity)
    return make_error(ErrorCode::invalid_input,
                      who + ": needs " + std::to_string(bytes) +
                          " bytes of memory to read, more than the package memory budget of " +
                          std::to_string(m_capacity) + " bytes (" + m_key +
                          "); expected a smaller package, or raise " + m_key);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::unique_lock<std::mutex> lock(m_mu);
  // Cancellation is polled: the flag is an atomic nobody notifies us about.
  while (bytes > m_capacity - m_used) {
    if (cancel != nullptr && cancel->load())
      return make_error(ErrorCode::unavailable,
                        who + ": cancelled while waiting for package memory");
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      return make_error(
          ErrorCode::unavailable,
          who + ": waited " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(wait).count()) +
              " s for " + std::to_string(bytes) +
              " bytes of package memory; other registrations hold " + std::to_string(m_used) +
              " of the " + std::to_string(m_capacity) + " bytes of " + m_key +
              " (retried next reconcile)");
    m_freed.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(100)));
  }
  m_used += bytes;
  m_peak = std::max(m_peak, m_used);
  return BudgetLease(this, bytes);
}

}  // namespace flytecd::registration
