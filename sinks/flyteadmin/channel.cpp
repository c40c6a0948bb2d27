#include "sinks/flyteadmin/channel.hpp"

#include <spdlog/logger.h>

#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "sinks/flyteadmin/hints.hpp"

namespace flytecd::sinks::flyteadmin {

Result<Connection> open_connection(const AdminConfig& cfg, const std::string& who) {
  if (cfg.endpoint.empty())
    return make_error(ErrorCode::invalid_input, who + ": no endpoint configured");
  if (cfg.insecure_skip_verify && !cfg.insecure)
    return make_error(ErrorCode::invalid_input,
                      who +
                          ": insecureSkipVerify is not supported; set caCertFilePath to the "
                          "server's CA instead");
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (cfg.insecure) {
    creds = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions opts;
    if (!cfg.ca_cert_file_path.empty()) {
      std::ifstream in(cfg.ca_cert_file_path);
      if (!in)
        return make_error(ErrorCode::invalid_input,
                          who + ": cannot read caCertFilePath " + cfg.ca_cert_file_path);
      std::stringstream ss;
      ss << in.rdbuf();
      opts.pem_root_certs = ss.str();
    }
    creds = grpc::SslCredentials(opts);
  }
  Connection out;
  if (cfg.auth_type == "ClientSecret")
    out.tokens = std::make_unique<TokenSource>(cfg);
  else if (!cfg.auth_type.empty())
    return make_error(ErrorCode::invalid_input,
                      who + ": authType '" + cfg.auth_type +
                          "' is not supported by flytecd (use ClientSecret, or none)");
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  // flytecd retries itself (Attempts: backoff, refresh-once, counting); gRPC's own retry layer
  // would only add per-call buffering for the transparent retries flytecd's retry covers.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  out.channel = grpc::CreateCustomChannel(cfg.endpoint, creds, args);
  return out;
}

ErrorCode map_grpc_code(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return ErrorCode::invalid_input;
    case grpc::StatusCode::NOT_FOUND:
      return ErrorCode::not_found;
    case grpc::StatusCode::ALREADY_EXISTS:
      return ErrorCode::already_exists;
    case grpc::StatusCode::ABORTED:
      return ErrorCode::conflict;
    case grpc::StatusCode::UNAUTHENTICATED:
      return ErrorCode::unauthenticated;
    case grpc::StatusCode::PERMISSION_DENIED:
      return ErrorCode::permission_denied;
    case grpc::StatusCode::UNAVAILABLE:
      return ErrorCode::unavailable;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return ErrorCode::timeout;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return ErrorCode::resource_exhausted;
    default:
      return ErrorCode::internal;
  }
}

const char* grpc_code_name(grpc::StatusCode code) {
  static const char* k_names[] = {"OK",
                                  "CANCELLED",
                                  "UNKNOWN",
                                  "INVALID_ARGUMENT",
                                  "DEADLINE_EXCEEDED",
                                  "NOT_FOUND",
                                  "ALREADY_EXISTS",
                                  "PERMISSION_DENIED",
                                  "RESOURCE_EXHAUSTED",
                                  "FAILED_PRECONDITION",
                                  "ABORTED",
                                  "OUT_OF_RANGE",
                                  "UNIMPLEMENTED",
                                  "INTERNAL",
                                  "UNAVAILABLE",
                                  "DATA_LOSS",
                                  "UNAUTHENTICATED"};
  int i = static_cast<int>(code);
  return i >= 0 && i <= 16 ? k_names[i] : "UNKNOWN";
}

std::optional<Error> Attempts::prepare(grpc::ClientContext& ctx) {
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(m_cfg.per_rpc_timeout_ms));
  if (!m_tokens) return std::nullopt;
  auto key = m_tokens->metadata_key();
  auto value = key ? m_tokens->authorization() : Result<std::string>(key.error());
  if (!value) return value.error();
  ctx.AddMetadata(*key, *value);
  m_sent_authorization = *value;
  return std::nullopt;
}

std::optional<std::chrono::milliseconds> Attempts::retry_after(const grpc::Status& st,
                                                               std::string_view method,
                                                               spdlog::logger& log) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  if (st.ok()) return std::nullopt;
  const ErrorCode code = map_grpc_code(st.error_code());
  if (code == ErrorCode::unauthenticated && m_tokens && !m_refreshed) {
    m_tokens->invalidate(m_sent_authorization);
    m_refreshed = true;
    return std::chrono::milliseconds(0);
  }
  if (!Error{code, ""}.retryable() || m_attempt >= m_cfg.max_retries) return std::nullopt;
  const long long cap = std::min<long long>(8000, 100LL << std::min(m_attempt, 16));
  std::uniform_int_distribution<long long> dist(cap / 2, cap);
  const auto delay = std::chrono::milliseconds(dist(rng));
  log.debug("{} failed ({}), retry {}/{} in {} ms", method, grpc_code_name(st.error_code()),
            m_attempt + 1, m_cfg.max_retries, delay.count());
  ++m_attempt;
  return delay;
}

CallOutcome call_with_retries(const AdminConfig& cfg, TokenSource* tokens, std::string_view method,
                              const std::function<grpc::Status(grpc::ClientContext&)>& invoke,
                              const std::function<void(grpc::StatusCode)>& count,
                              spdlog::logger& log) {
  Attempts attempts(cfg, tokens);
  for (;;) {
    grpc::ClientContext ctx;
    if (auto no_call = attempts.prepare(ctx)) return CallOutcome{grpc::Status::OK, no_call};
    grpc::Status st = invoke(ctx);
    count(st.error_code());
    auto delay = attempts.retry_after(st, method, log);
    if (!delay) return CallOutcome{st, std::nullopt};
    if (delay->count() > 0) std::this_thread::sleep_for(*delay);
  }
}

Error call_error(const AdminConfig& cfg, const std::string& prefix, const grpc::Status& st) {
  const ErrorCode code = map_grpc_code(st.error_code());
  return Error{code, prefix + ": " + grpc_code_name(st.error_code()) + ": " +
                         (code == ErrorCode::unavailable
                              ? unavailable_message(cfg.endpoint, cfg.insecure, st.error_message())
                              : st.error_message())};
}

}  // namespace flytecd::sinks::flyteadmin
