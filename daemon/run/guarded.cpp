#include "daemon/run/guarded.hpp"

#include <exception>

#include "daemon/common/text.hpp"

namespace flytecd::run {

std::optional<std::string> run_guarded(const std::function<void()>& step) {
  try {
    step();
    return std::nullopt;
  } catch (const std::exception& e) {
    return text::to_utf8_lossy(e.what());
  } catch (...) {
    return std::string("an unknown exception");
  }
}

}  // namespace flytecd::run
