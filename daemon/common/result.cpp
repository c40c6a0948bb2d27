#include "daemon/common/result.hpp"

namespace flytecd {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_input:
      return "invalid_input";
    case ErrorCode::not_found:
      return "not_found";
    case ErrorCode::conflict:
      return "conflict";
    case ErrorCode::already_exists:
      return "already_exists";
    case ErrorCode::unauthenticated:
      return "unauthenticated";
    case ErrorCode::permission_denied:
      return "permission_denied";
    case ErrorCode::unavailable:
      return "unavailable";
    case ErrorCode::timeout:
      return "timeout";
    case ErrorCode::resource_exhausted:
      return "resource_exhausted";
    case ErrorCode::stale:
      return "stale";
    case ErrorCode::internal:
      return "internal";
  }
  return "internal";
}

}  // namespace flytecd
