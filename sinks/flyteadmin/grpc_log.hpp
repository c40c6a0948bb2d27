#pragma once

namespace flytecd::sinks::flyteadmin {

// Routes gRPC's own log lines (gpr_log: connection failures, TLS errors) through flytecd's
// logger "grpc", so they come out in the format flytecd logs in (text or one JSON object per
// line) instead of on stderr in a third format. gRPC still decides which lines it logs
// (GRPC_VERBOSITY, default ERROR). Idempotent; call once logging is initialised.
void route_grpc_log();

}  // namespace flytecd::sinks::flyteadmin
