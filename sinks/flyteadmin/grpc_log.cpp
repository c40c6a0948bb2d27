#include "sinks/flyteadmin/grpc_log.hpp"

#include <grpc/support/log.h>

#include <cstring>
#include <string>

#include "daemon/common/log.hpp"

namespace flytecd::sinks::flyteadmin {
namespace {

void to_spdlog(gpr_log_func_args* args) {
  static const auto logger = log::get("grpc");
  const char* file = args->file ? std::strrchr(args->file, '/') : nullptr;
  const std::string where = std::string(file ? file + 1 : (args->file ? args->file : "?")) + ":" +
                            std::to_string(args->line);
  const char* message = args->message ? args->message : "";
  switch (args->severity) {
    case GPR_LOG_SEVERITY_DEBUG:
      logger->debug("{} ({})", message, where);
      break;
    case GPR_LOG_SEVERITY_INFO:
      logger->info("{} ({})", message, where);
      break;
    default:
      logger->error("{} ({})", message, where);
      break;
  }
}

}  // namespace

void route_grpc_log() { gpr_set_log_function(to_spdlog); }

}  // namespace flytecd::sinks::flyteadmin
