#pragma once

// The gRPC connection to a Flyte control plane, shared by the FlyteAdmin sink and the Flyte 2
// sink (sinks/flyte2): the channel for `admin:`-style settings (TLS with an optional CA bundle,
// or plaintext when asked), the OAuth2 token source of ClientSecret auth, and how gRPC codes read.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace spdlog {
class logger;
}

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

// What call_with_retries ended with: the last answer, or why no call was made (no token).
struct CallOutcome {
  grpc::Status status;
  std::optional<Error> auth_error;
};

// The attempts of one RPC: a deadline of cfg.per_rpc_timeout_ms and the token in its metadata key
// on each, one refresh after UNAUTHENTICATED, and retries of unavailable / timeout /
// resource_exhausted answers (up to cfg.max_retries, exponential backoff with full jitter from
// 100 ms, capped at 8 s). Shared by the blocking calls (call_with_retries) and the FlyteAdmin
// sink's asynchronous ones, which wait out a backoff on a timer instead of a thread.
class Attempts {
 public:
  Attempts(const AdminConfig& cfg, TokenSource* tokens) : m_cfg(cfg), m_tokens(tokens) {}
  // Sets up `ctx` for the next attempt; an error when no call can be made (no token).
  std::optional<Error> prepare(grpc::ClientContext& ctx);
  // After an answer: the delay before the next attempt (0: at once, after a token refresh), or
  // nullopt when `st` is the outcome (ok, not retryable, or out of retries).
  std::optional<std::chrono::milliseconds> retry_after(const grpc::Status& st,
                                                       std::string_view method,
                                                       spdlog::logger& log);

 private:
  const AdminConfig& m_cfg;
  TokenSource* m_tokens;
  int m_attempt = 0;
  bool m_refreshed = false;
  std::string m_sent_authorization;
};

// One RPC the way both sinks make it (Attempts, waiting out each backoff on this thread). `invoke`
// makes the call on the prepared context; `count` sees the code of every answer (for the sink's RPC
// counters).
CallOutcome call_with_retries(const AdminConfig& cfg, TokenSource* tokens, std::string_view method,
                              const std::function<grpc::Status(grpc::ClientContext&)>& invoke,
                              const std::function<void(grpc::StatusCode)>& count,
                              spdlog::logger& log);

// The error of a failed answer: "PREFIX: CODE: message", the connection hint first for
// UNAVAILABLE (hints.hpp), in flytecd's category of the code.
Error call_error(const AdminConfig& cfg, const std::string& prefix, const grpc::Status& st);

// flytecd's category of a gRPC code (FAILED_PRECONDITION as invalid_input, FlyteAdmin's reading;
// a sink whose server means "stale version" by it maps that itself).
ErrorCode map_grpc_code(grpc::StatusCode code);
// "INVALID_ARGUMENT".
const char* grpc_code_name(grpc::StatusCode code);

}  // namespace flytecd::sinks::flyteadmin
