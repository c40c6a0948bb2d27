#include <openssl/evp.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <string>

#include "daemon/http/webhooks.hpp"
#include "tests/support/hmac.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::http;

namespace {

using flytecd_test::hmac_hex;

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

const std::string k_secret = "It's a Secret to Everybody";
const std::string k_body = "Hello, World!";

}  // namespace

TEST_CASE("webhook: GitHub's documented signature vector verifies", "[webhook]") {
  // From GitHub's "Validating webhook deliveries" documentation.
  const std::string sig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
  CHECK(hmac_hex(k_secret, k_body) == sig.substr(7));
  CHECK(verify_github(k_secret, sig, k_body) == WebhookVerdict::accepted);
  CHECK(verify_github(k_secret, "sha256=" + upper(sig.substr(7)), k_body) ==
        WebhookVerdict::accepted);
}

TEST_CASE("webhook: GitHub signatures over a JSON body computed with OpenSSL", "[webhook]") {
  const std::string body = R"({"ref":"refs/heads/main","after":"0123abcd"})";
  const std::string secret = "s3cr3t-\xE2\x9C\x93";
  const std::string good = "sha256=" + hmac_hex(secret, body);
  CHECK(verify_github(secret, good, body) == WebhookVerdict::accepted);
  CHECK(verify_github(secret, "  " + good + " ", body) == WebhookVerdict::accepted);

  SECTION("a different secret, a tampered body or a malformed header are bad signatures") {
    CHECK(verify_github("other", good, body) == WebhookVerdict::bad_signature);
    CHECK(verify_github(secret, good, body + " ") == WebhookVerdict::bad_signature);
    CHECK(verify_github(secret, "sha1=" + good.substr(7), body) == WebhookVerdict::bad_signature);
    CHECK(verify_github(secret, good.substr(7), body) == WebhookVerdict::bad_signature);
    CHECK(verify_github(secret, good.substr(0, good.size() - 2), body) ==
          WebhookVerdict::bad_signature);
    CHECK(verify_github(secret, good + "00", body) == WebhookVerdict::bad_signature);
    std::string non_hex = good;
    non_hex.back() = 'g';
    CHECK(verify_github(secret, non_hex, body) == WebhookVerdict::bad_signature);
  }
  SECTION("an absent header is a missing signature") {
    CHECK(verify_github(secret, "", body) == WebhookVerdict::missing_signature);
    CHECK(verify_github(secret, "   ", body) == WebhookVerdict::missing_signature);
  }
  SECTION("an empty configured secret never verifies, even a matching empty-key HMAC") {
    CHECK(verify_github("", "sha256=" + hmac_hex("", body), body) == WebhookVerdict::bad_signature);
  }
}

TEST_CASE("webhook: generic HMAC uses the same sha256=<hex> format", "[webhook]") {
  const std::string body = "{}";
  const std::string sig = "sha256=" + hmac_hex("generic-key", body);
  CHECK(verify_generic_hmac("generic-key", sig, body) == WebhookVerdict::accepted);
  CHECK(verify_generic_hmac("generic-key", sig, "{ }") == WebhookVerdict::bad_signature);
  CHECK(verify_generic_hmac("generic-key", "", body) == WebhookVerdict::missing_signature);
  CHECK(verify_generic_hmac("", sig, body) == WebhookVerdict::bad_signature);
}

TEST_CASE("webhook: GitLab tokens compare for exact equality", "[webhook]") {
  CHECK(verify_gitlab("glpat-token", "glpat-token") == WebhookVerdict::accepted);
  CHECK(verify_gitlab("glpat-token", "glpat-tokem") == WebhookVerdict::bad_signature);
  CHECK(verify_gitlab("glpat-token", "glpat-token-longer") == WebhookVerdict::bad_signature);
  CHECK(verify_gitlab("glpat-token", "glpat") == WebhookVerdict::bad_signature);
  CHECK(verify_gitlab("glpat-token", "GLPAT-TOKEN") == WebhookVerdict::bad_signature);
  CHECK(verify_gitlab("glpat-token", "") == WebhookVerdict::missing_signature);
  CHECK(verify_gitlab("", "anything") == WebhookVerdict::bad_signature);
}

TEST_CASE("webhook: bearer tokens for the manual sync endpoint", "[webhook]") {
  CHECK(verify_bearer("tok", "Bearer tok"));
  CHECK(verify_bearer("tok", "bearer tok"));
  CHECK(verify_bearer("tok", "  Bearer   tok  "));
  CHECK_FALSE(verify_bearer("tok", "Bearer tok2"));
  CHECK_FALSE(verify_bearer("tok", "Bearertok"));
  CHECK_FALSE(verify_bearer("tok", "Basic tok"));
  CHECK_FALSE(verify_bearer("tok", "tok"));
  CHECK_FALSE(verify_bearer("tok", ""));
  CHECK_FALSE(verify_bearer("", "Bearer "));
}

TEST_CASE("webhook: HMAC-SHA256 helper matches RFC 4231 and verdicts have names", "[webhook]") {
  // RFC 4231 test case 2.
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(hmac_sha256_hex("k", "") == hmac_hex("k", ""));
  CHECK(constant_time_equal("abc", "abc"));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "abcd"));
  CHECK(to_string(WebhookVerdict::accepted) == "accepted");
  CHECK(to_string(WebhookVerdict::bad_signature) == "bad_signature");
  CHECK(to_string(WebhookVerdict::missing_signature) == "missing_signature");
}

TEST_CASE("webhook: the delivery log remembers a bounded number of ids", "[webhook]") {
  flytecd::http::DeliveryLog log(2);
  CHECK(log.first_seen("a"));
  CHECK_FALSE(log.first_seen("a"));
  CHECK(log.first_seen("b"));
  CHECK(log.first_seen("c"));  // evicts "a"
  CHECK(log.first_seen("a"));
  CHECK_FALSE(log.first_seen("c"));
  CHECK(log.first_seen(""));
  CHECK(log.first_seen(""));
}

}  // namespace FLYTECD_UNITY_ID
