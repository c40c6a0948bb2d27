#pragma once

#include <string>
#include <string_view>

namespace flytecd::sinks::flyteadmin {

// What to try when a call to FlyteAdmin found it unreachable (gRPC UNAVAILABLE), from gRPC's
// message: connection refused -> "is FlyteAdmin listening at host:port? (connection refused)";
// a TLS handshake against a plaintext server -> set admin.insecure; a plaintext call closed by a
// TLS server -> drop admin.insecure; an untrusted certificate -> admin.caCertFilePath. "" when
// the message matches none. Pure.
std::string connection_hint(std::string_view endpoint, bool insecure, std::string_view message);

// The message of an UNAVAILABLE call: the hint first, gRPC's own text after it in brackets
// ("is FlyteAdmin listening at localhost:1? (connection refused) [failed to connect …]"); the
// raw text alone when there is no hint.
std::string unavailable_message(std::string_view endpoint, bool insecure, std::string_view message);

}  // namespace flytecd::sinks::flyteadmin
