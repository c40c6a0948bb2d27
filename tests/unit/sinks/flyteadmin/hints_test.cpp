// sinks/flyteadmin/hints: an unreachable FlyteAdmin is reported with what to try, from gRPC's own
// messages (as grpc 1.51 words them).
#include "sinks/flyteadmin/hints.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::sinks::flyteadmin;

TEST_CASE("hints: connection refused asks whether FlyteAdmin listens there", "[flyteadmin]") {
  const char* m =
      "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Failed to "
      "connect to remote host: Connection refused";
  CHECK(connection_hint("dns:///127.0.0.1:1", true, m) ==
        "is FlyteAdmin listening at 127.0.0.1:1? (connection refused)");
  CHECK(unavailable_message("localhost:1", false, m) ==
        std::string("is FlyteAdmin listening at localhost:1? (connection refused) [") + m + "]");
}

TEST_CASE("hints: TLS against plaintext and plaintext against TLS say which setting to change",
          "[flyteadmin]") {
  const char* tls_to_plain =
      "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:8089: Ssl "
      "handshake failed: SSL_ERROR_SSL: error:0A00010B:SSL routines::wrong version number";
  CHECK(connection_hint("127.0.0.1:8089", false, tls_to_plain) ==
        "the server at 127.0.0.1:8089 speaks plaintext, not TLS: set admin.insecure: true (or "
        "--insecure)");
  const char* plain_to_tls =
      "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:127.0.0.1:443: Socket "
      "closed";
  CHECK(connection_hint("dns:///flyte.example.com:443", true, plain_to_tls) ==
        "the server at flyte.example.com:443 closed a plaintext connection; it may speak TLS: "
        "drop admin.insecure (--insecure)");
  CHECK(connection_hint("h:443", false,
                        "Ssl handshake failed: SSL_ERROR_SSL: error:0A000086:SSL "
                        "routines::certificate verify failed")
            .find("admin.caCertFilePath") != std::string::npos);
  // Nothing recognisable: gRPC's text alone.
  CHECK(connection_hint("h:1", true, "Deadline Exceeded").empty());
  CHECK(unavailable_message("h:1", true, "Deadline Exceeded") == "Deadline Exceeded");
}

}  // namespace FLYTECD_UNITY_ID
