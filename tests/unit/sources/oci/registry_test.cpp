#include "sources/oci/registry.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/text.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace oci = flytecd::sources::oci;
using flytecd::ErrorCode;

TEST_CASE("oci registry errors: distribution's error body is shown as code and message", "[oci]") {
  auto e = oci::status_error(
      404, R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]})",
      "fetch ghcr.io/x:v1");
  CHECK(e.code == ErrorCode::not_found);
  CHECK(e.message == "fetch ghcr.io/x:v1: HTTP 404 (MANIFEST_UNKNOWN: manifest unknown)");
}

// tests/fuzz/regressions/oci_manifest/error-message-object.json: a message that is an object made
// nlohmann's value("message", "") throw type_error out of a function that must not throw.
TEST_CASE("oci registry errors: a non-string code or message is shown as JSON, never thrown",
          "[oci]") {
  auto e = oci::status_error(
      404, R"({"errors": [{"code": "MANIFEST_UNKNOWN", "message": {"Tag": "v0"}}]})", "fetch x");
  CHECK(e.code == ErrorCode::not_found);
  CHECK(e.message == R"(fetch x: HTTP 404 (MANIFEST_UNKNOWN: {"Tag":"v0"}))");
  auto n = oci::status_error(503, R"({"errors":[{"code":7,"message":null}]})", "fetch x");
  CHECK(n.code == ErrorCode::unavailable);
  CHECK(n.message == "fetch x: HTTP 503 (7) (retries exhausted)");
}

TEST_CASE("oci registry errors: a huge error body gives a bounded message", "[oci]") {
  const std::string big(100000, 'x');
  auto e =
      oci::status_error(500, R"({"errors":[{"code":"X","message":")" + big + R"("}]})", "fetch x");
  CHECK(e.message.size() < 400);
  CHECK(e.message.find("X: xxx") != std::string::npos);
}

// Issue 27.1: 200 CJK characters were cut at 300 bytes mid-character; `apply -o json` then threw
// type_error 316 (SIGABRT) and `flytecd run` aborted on every pass.
TEST_CASE("oci registry errors: a long non-ASCII message is cut between characters",
          "[oci][text]") {
  std::string cjk;
  for (int i = 0; i < 200; ++i) cjk += "\xE6\xBC\xA2";
  auto e = oci::status_error(
      404, R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":")" + cjk + R"("}]})", "fetch x");
  CHECK(flytecd::text::valid_utf8(e.message));
  // "MANIFEST_UNKNOWN: " is 18 bytes: 94 whole characters fit in 300 bytes.
  CHECK(e.message == "fetch x: HTTP 404 (MANIFEST_UNKNOWN: " + cjk.substr(0, 94 * 3) + "…)");
  CHECK_NOTHROW(flytecd::dump_json(nlohmann::json{{"error", e.message}}));
  // "NAME_UNKNOWN: " is 14 bytes: 300 bytes end inside the 96th character, which is left out.
  auto n = oci::status_error(
      404, R"({"errors":[{"code":"NAME_UNKNOWN","message":")" + cjk + R"("}]})", "fetch x");
  CHECK(n.message == "fetch x: HTTP 404 (NAME_UNKNOWN: " + cjk.substr(0, 95 * 3) + "…)");
  CHECK(flytecd::text::valid_utf8(n.message));
}

}  // namespace FLYTECD_UNITY_ID
