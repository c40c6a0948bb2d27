#include "sinks/flyteadmin/channel.hpp"

#include <fstream>
#include <sstream>

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

}  // namespace flytecd::sinks::flyteadmin
