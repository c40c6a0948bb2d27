#include <catch2/catch.hpp>
#include <string>

#include "daemon/common/http/wire.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::http::parse_request_head;
using flytecd::http::Request;

namespace {

bool parses(const std::string& head) {
  Request req;
  return parse_request_head(head, req);
}

}  // namespace

TEST_CASE("http wire: a well-formed head parses into method, path, query and headers", "[http]") {
  Request req;
  REQUIRE(parse_request_head(
      "POST /api/v1/webhooks/github?x=1 HTTP/1.1\r\nHost: flytecd\r\nX-A: 1\r\nx-a:  2 \r\n"
      "Content-Length: 42",
      req));
  CHECK(req.method == "POST");
  CHECK(req.path == "/api/v1/webhooks/github");
  CHECK(req.query == "x=1");
  CHECK(req.header("host") == "flytecd");
  CHECK(req.header("x-a") == "1, 2");
  REQUIRE(req.content_length);
  CHECK(*req.content_length == 42);
}

// Found by tests/fuzz/fuzz_http_request (tests/fuzz/regressions/http_request/): each of these was
// accepted, with a header name a proxy in front of the daemon would read differently.
TEST_CASE("http wire: header names must be tokens (no blank before ':', no obs-fold, not empty)",
          "[http]") {
  CHECK(parses("GET / HTTP/1.1\r\nContent-Length: 0"));
  CHECK_FALSE(parses("GET / HTTP/1.1\r\n\r: x"));                          // empty once trimmed
  CHECK_FALSE(parses("GET / HTTP/1.1\r\n : x"));                           // blank name
  CHECK_FALSE(parses("GET / HTTP/1.1\r\n: x"));                            // no name
  CHECK_FALSE(parses("POST / HTTP/1.1\r\nContent-Length : 5"));            // blank before the colon
  CHECK_FALSE(parses("POST / HTTP/1.1\r\nX-A: 1\r\n Content-Length: 5"));  // obs-fold
  CHECK_FALSE(parses("POST / HTTP/1.1\r\nX-A: 1\r\n\tContent-Length: 5"));
  CHECK_FALSE(parses("GET / HTTP/1.1\r\nX(A): 1"));  // separator in the name
}

TEST_CASE("http wire: a bare CR, LF or NUL inside the request line or a header is refused",
          "[http]") {
  CHECK_FALSE(parses("POST / HTTP/1.1\r\nX-A: 1\nContent-Length: 5"));
  CHECK_FALSE(parses("POST / HTTP/1.1\r\nX-A: 1\rContent-Length: 5"));
  using namespace std::string_literals;
  CHECK_FALSE(parses("POST / HTTP/1.1\r\nX-A: a\0b"s));
  CHECK_FALSE(parses("GET /a\nb HTTP/1.1\r\nHost: x"));
  CHECK_FALSE(parses("GET /a\rb HTTP/1.1"));
}

}  // namespace FLYTECD_UNITY_ID
