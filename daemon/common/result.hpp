#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace flytecd {

// Error categories shared by every module. retryable() is derived from the code only.
enum class ErrorCode {
  invalid_input,
  not_found,
  conflict,
  already_exists,
  unauthenticated,
  permission_denied,
  unavailable,
  timeout,
  resource_exhausted,
  // A conditional write refused because the object changed since it was observed (Flyte 2's
  // FailedPrecondition on a stale version): not retried as sent — the caller observes and plans
  // again, so what changed is seen (and reported as drift) before anything is written.
  stale,
  internal,
};

std::string_view to_string(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;

  // Transient failures worth retrying with backoff: unavailable, timeout, resource_exhausted.
  bool retryable() const {
    return code == ErrorCode::unavailable || code == ErrorCode::timeout ||
           code == ErrorCode::resource_exhausted;
  }
  // The write was refused as stale: observe again and re-plan (never retry it as it was).
  bool replannable() const { return code == ErrorCode::stale; }
  // Returns a copy whose message is prefixed with "context: ".
  Error wrap(std::string_view context) const {
    return Error{code, std::string(context) + ": " + message};
  }
};

// Value-or-error. Exceptions never cross module boundaries; fallible functions return this.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_v(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : m_v(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return m_v.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & {
    assert(ok());
    return std::get<0>(m_v);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(m_v);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(m_v));
  }
  const Error& error() const {
    assert(!ok());
    return std::get<1>(m_v);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Error> m_v;
};

struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace flytecd
