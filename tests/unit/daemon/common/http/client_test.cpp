#include "daemon/common/http/client.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace http = flytecd::http;

TEST_CASE("http client: Retry-After as seconds or HTTP-date", "[http_client]") {
  const auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37
  CHECK(http::parse_retry_after("3", now) == 3);
  CHECK(http::parse_retry_after(" 0 ", now) == 0);
  CHECK(http::parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now) == 10);
  CHECK(http::parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now) == 0);  // in the past
  CHECK(http::parse_retry_after("", now) == -1);
  CHECK(http::parse_retry_after("soon", now) == -1);
  CHECK(http::parse_retry_after("99999999999999", now) == -1);
}

TEST_CASE("http client: origins and redirect targets", "[http_client]") {
  CHECK(http::url_origin("http://127.0.0.1:5000/v2/x") == "http://127.0.0.1:5000");
  CHECK(http::url_origin("HTTPS://Registry.Example/v2/") == "https://registry.example:443");
  CHECK(http::url_origin("http://u:p@h/x") == "http://h:80");
  CHECK(http::url_origin("https://[::1]/x") == "https://[::1]:443");
  CHECK(http::url_origin("https://h:443") == http::url_origin("https://h/"));
  CHECK(http::url_origin("/relative").empty());

  const std::string base = "http://127.0.0.1:5003/v2/flyte/x/blobs/sha256:ab?x=1";
  CHECK(http::resolve_location(base, "http://localhost:9/data") == "http://localhost:9/data");
  CHECK(http::resolve_location(base, "//cdn.example/a") == "http://cdn.example/a");
  CHECK(http::resolve_location(base, "/docker/registry/v2/blobs/data") ==
        "http://127.0.0.1:5003/docker/registry/v2/blobs/data");
  CHECK(http::resolve_location(base, "other?y=2") ==
        "http://127.0.0.1:5003/v2/flyte/x/blobs/other?y=2");
}

TEST_CASE("http client: header lookup is case-insensitive and takes the last value",
          "[http_client]") {
  http::ClientResponse r;
  r.headers = {{"www-authenticate", "Basic realm=a"},
               {"docker-content-digest", "sha256:1"},
               {"docker-content-digest", "sha256:2"}};
  CHECK(r.header("WWW-Authenticate") == "Basic realm=a");
  CHECK(r.header("Docker-Content-Digest") == "sha256:2");
  CHECK(r.header("missing").empty());
}

}  // namespace FLYTECD_UNITY_ID
