#include "daemon/common/breaker.hpp"

namespace flytecd {

CircuitBreaker::CircuitBreaker(int threshold) : m_threshold(threshold) {}

bool CircuitBreaker::is_unreachable(const Error& e) {
  return e.code == ErrorCode::unavailable || e.code == ErrorCode::timeout;
}

void CircuitBreaker::record(const Status& outcome) {
  if (outcome)
    record_success();
  else
    record(outcome.error());
}

void CircuitBreaker::record(const Error& error) {
  std::lock_guard<std::mutex> lock(m_mu);
  if (m_open) return;
  if (!is_unreachable(error)) {
    m_consecutive = 0;  // the target answered, if only with an error
    return;
  }
  ++m_consecutive;
  if (m_threshold > 0 && m_consecutive >= m_threshold) {
    m_open = true;
    m_last = error.message;
  }
}

void CircuitBreaker::trip(const Error& error) {
  std::lock_guard<std::mutex> lock(m_mu);
  if (m_open || !is_unreachable(error)) return;
  ++m_consecutive;
  m_open = true;
  m_last = error.message;
}

void CircuitBreaker::record_success() {
  std::lock_guard<std::mutex> lock(m_mu);
  if (!m_open) m_consecutive = 0;
}

bool CircuitBreaker::open() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_open;
}

std::optional<Error> CircuitBreaker::error() const {
  std::lock_guard<std::mutex> lock(m_mu);
  if (!m_open) return std::nullopt;
  if (m_consecutive <= 1) return Error{ErrorCode::unavailable, "target unreachable: " + m_last};
  return Error{ErrorCode::unavailable, "target unreachable (" + std::to_string(m_consecutive) +
                                           " consecutive calls failed): " + m_last};
}

}  // namespace flytecd
