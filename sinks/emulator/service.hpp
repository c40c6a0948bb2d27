#pragma once

// The gRPC face of the emulator (internal to sinks/emulator): AdminService and
// DataProxyService implementations that count calls, apply fault injection, delegate to Admin
// and map its errors to gRPC status codes.

#include <spdlog/logger.h>

#include <cstdint>
#include <memory>
#include <string>

#include "sinks/emulator/admin.hpp"
#include "sinks/emulator/faults.hpp"

namespace grpc {
class ServerBuilder;
}

namespace flytecd::sinks::emulator {

class RpcFrontend {
 public:
  RpcFrontend(Admin& admin, FaultInjector& faults, std::shared_ptr<spdlog::logger> log);
  ~RpcFrontend();
  RpcFrontend(const RpcFrontend&) = delete;
  RpcFrontend& operator=(const RpcFrontend&) = delete;

  // Registers both services; the frontend must outlive the server built from `builder`.
  void register_with(grpc::ServerBuilder& builder);
  // Replaces the logger (once the listen port is known, so lines name the instance).
  void set_log(std::shared_ptr<spdlog::logger> log);
  // Calls received for an RPC name. Thread-safe.
  uint64_t calls(const std::string& method) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> m_impl;
};

}  // namespace flytecd::sinks::emulator
