#include "sinks/emulator/call_gate.hpp"

#include <google/protobuf/any.pb.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace flytecd::sinks::emulator {

grpc::StatusCode flyteadmin_code(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_input:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::not_found:
      return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::already_exists:
      return grpc::StatusCode::ALREADY_EXISTS;
    case ErrorCode::conflict:
      return grpc::StatusCode::ABORTED;
    case ErrorCode::unauthenticated:
      return grpc::StatusCode::UNAUTHENTICATED;
    case ErrorCode::permission_denied:
      return grpc::StatusCode::PERMISSION_DENIED;
    case ErrorCode::unavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case ErrorCode::timeout:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    case ErrorCode::resource_exhausted:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorCode::stale:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case ErrorCode::internal:
      return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::INTERNAL;
}

// Serialized google.rpc.Status{code, message, details: [detail]}, written by hand because the
// google.rpc protos are not part of this build. It is what grpc-go puts in
// grpc-status-details-bin and what status.FromError(...).Details() decodes.
std::string rpc_status_details(int code, const std::string& message,
                               const google::protobuf::Any& detail) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.WriteTag(1 << 3);
    coded.WriteVarint32SignExtended(code);
    coded.WriteTag((2 << 3) | 2);
    coded.WriteVarint32(static_cast<uint32_t>(message.size()));
    coded.WriteString(message);
    const std::string any = detail.SerializeAsString();
    coded.WriteTag((3 << 3) | 2);
    coded.WriteVarint32(static_cast<uint32_t>(any.size()));
    coded.WriteString(any);
  }
  return out;
}

}  // namespace flytecd::sinks::emulator
