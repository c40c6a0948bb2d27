#include "sinks/flyteadmin/oauth.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::sinks::flyteadmin::check_token_url;

// Issue 10.8: an http:// tokenUrl sent the client secret in plaintext without a word.
TEST_CASE("oauth: a plain-http token endpoint is refused unless loopback or insecure", "[oauth]") {
  bool plaintext = true;
  CHECK(check_token_url("https://idp.example.com/oauth2/token", false, &plaintext));
  CHECK_FALSE(plaintext);

  auto refused =
      check_token_url("http://user:pw@idp.example.com/oauth2/token?x=1", false, &plaintext);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == flytecd::ErrorCode::invalid_input);
  CHECK_THAT(refused.error().message, Catch::Contains("http://idp.example.com/oauth2/token"));
  CHECK_THAT(refused.error().message, Catch::Contains("unencrypted"));
  CHECK(refused.error().message.find("pw") == std::string::npos);

  CHECK(check_token_url("http://127.0.0.1:8080/token", false, &plaintext));
  CHECK(plaintext);
  CHECK(check_token_url("http://localhost/token", false, &plaintext));
  CHECK(check_token_url("http://[::1]:9/token", false, &plaintext));
  CHECK(check_token_url("http://idp.internal/token", true, &plaintext));
  CHECK(plaintext);
  CHECK_FALSE(check_token_url("http://127.0.0.1.evil.example/token", false, &plaintext));
}

}  // namespace FLYTECD_UNITY_ID
