#pragma once

// The gRPC connection to a Flyte control plane, shared by the FlyteAdmin sink and the Flyte 2
// sink (sinks/flyte2): the channel for `admin:`-style settings (TLS with an optional CA bundle,
// or plaintext when asked), the OAuth2 token source of ClientSecret auth, and how gRPC codes read.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "daemon/common/result.hpp"
#include "sinks/flyteadmin/config.hpp"
#include "sinks/flyteadmin/oauth.hpp"

namespace flytecd::sinks::flyteadmin {

struct Connection {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<TokenSource> tokens;  // null without authType
};

// Connects (no call is made). `who` prefixes errors ("flyteadmin", "flyte2"). Errors:
// invalid_input (no endpoint, insecureSkipVerify, an unreadable caCertFilePath, an unsupported
// authType).
Result<Connection> open_connection(const AdminConfig& cfg, const std::string& who);

// flytecd's category of a gRPC code (FAILED_PRECONDITION as invalid_input, FlyteAdmin's reading;
// a sink whose server means "stale version" by it maps that itself).
ErrorCode map_grpc_code(grpc::StatusCode code);
// "INVALID_ARGUMENT".
const char* grpc_code_name(grpc::StatusCode code);

}  // namespace flytecd::sinks::flyteadmin
