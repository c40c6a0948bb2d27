#include "sources/oci/auth.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace oci = flytecd::sources::oci;
using flytecd::ErrorCode;

TEST_CASE("oci auth: Bearer challenge with realm, service, scope and error is parsed", "[oci]") {
  auto c = oci::parse_www_authenticate(
      R"(Bearer realm="http://127.0.0.1:5006/token",service="flyte-test-registry",)"
      R"(scope="repository:flyte/my-project:pull,push",error="insufficient_scope")");
  REQUIRE(c.size() == 1);
  CHECK(c[0].scheme == "bearer");
  CHECK(c[0].param("realm") == "http://127.0.0.1:5006/token");
  CHECK(c[0].param("service") == "flyte-test-registry");
  CHECK(c[0].param("scope") == "repository:flyte/my-project:pull,push");
  CHECK(c[0].param("error") == "insufficient_scope");
  CHECK(c[0].param("missing").empty());
}

TEST_CASE("oci auth: challenge parsing is case-insensitive, handles escapes and several schemes",
          "[oci]") {
  auto c = oci::parse_www_authenticate(
      R"(BASIC Realm="a \"quoted\" realm", bearer realm=https://auth.example/token , SERVICE="x")");
  REQUIRE(c.size() == 2);
  CHECK(c[0].scheme == "basic");
  CHECK(c[0].param("realm") == "a \"quoted\" realm");
  CHECK(c[1].scheme == "bearer");
  CHECK(c[1].param("realm") == "https://auth.example/token");
  CHECK(c[1].param("service") == "x");
  CHECK(oci::parse_www_authenticate("").empty());
  CHECK(oci::parse_www_authenticate("Basic").at(0).scheme == "basic");
  // Garbage does not crash and yields no params.
  for (auto s : {"=,=,\"", "Bearer realm=\"unterminated", ",,,", "Bearer ,realm"})
    CHECK_NOTHROW(oci::parse_www_authenticate(s));
}

TEST_CASE("oci auth: docker config.json with base64 auth, username/password and URL keys",
          "[oci]") {
  const std::string json = R"({
    "auths": {
      "127.0.0.1:5001": {"auth": ")" +
                           oci::base64_encode("flyte:pa:ss") + R"("},
      "https://ghcr.io/v1/": {"username": "bot", "password": "tok"},
      "https://index.docker.io/v1/": {"auth": ")" +
                           oci::base64_encode("hub:secret") + R"("},
      "quay.io": {"identitytoken": "only-a-refresh-token"}
    },
    "credsStore": "desktop"
  })";
  auto parsed = oci::parse_docker_config(json, "config.json");
  REQUIRE(parsed);
  const auto* r = &parsed->auths;
  CHECK(r->size() == 3);
  CHECK(r->at("127.0.0.1:5001").username == "flyte");
  CHECK(r->at("127.0.0.1:5001").password == "pa:ss");  // split at the first colon only
  CHECK(r->at("ghcr.io").username == "bot");
  CHECK(r->at("ghcr.io").password == "tok");
  CHECK(r->at("docker.io").password == "secret");
  CHECK(r->count("quay.io") == 0);
  CHECK(parsed->creds_store == "desktop");
}

TEST_CASE("oci auth: malformed docker config is invalid_input without echoing secrets", "[oci]") {
  auto bad_json = oci::parse_docker_config("{not json", "/x/config.json");
  REQUIRE_FALSE(bad_json);
  CHECK(bad_json.error().code == ErrorCode::invalid_input);
  CHECK(bad_json.error().message.find("/x/config.json") != std::string::npos);
  auto bad_auth = oci::parse_docker_config(R"({"auths":{"h":{"auth":"bm8tY29sb24="}}})",
                                           "c.json");  // "no-colon"
  REQUIRE_FALSE(bad_auth);
  CHECK(bad_auth.error().message.find("username:password") != std::string::npos);
  CHECK(bad_auth.error().message.find("no-colon") == std::string::npos);
  CHECK(oci::parse_docker_config("{}", "c.json")->auths.empty());
}

TEST_CASE("oci auth: credential lookup order is env variable, explicit file, then none", "[oci]") {
  CHECK(oci::registry_env_var("127.0.0.1:5001") == "FLYTECD_REGISTRY_AUTH_127_0_0_1_5001");
  CHECK(oci::registry_env_var("ghcr.io") == "FLYTECD_REGISTRY_AUTH_GHCR_IO");
  CHECK(oci::normalize_registry_key("HTTPS://Registry.Example:443/v2/") == "registry.example:443");
  std::map<std::string, std::string> env = {{"FLYTECD_REGISTRY_AUTH_GHCR_IO", "envuser:envpass"},
                                            {"HOME", "/nonexistent-home"}};
  oci::CredentialStore store("/nonexistent/config.json", [&](const std::string& k) {
    auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
  auto c = store.lookup("ghcr.io");
  REQUIRE(c);
  REQUIRE(*c);
  CHECK((*c)->username == "envuser");
  CHECK((*c)->password == "envpass");
  CHECK((*c)->source == "$FLYTECD_REGISTRY_AUTH_GHCR_IO");
  REQUIRE(store.lookup("quay.io"));
  CHECK_FALSE(*store.lookup("quay.io"));
  CHECK(store.warnings().empty());
}

// An environment lookup over `env`.
oci::EnvLookup env_of(const std::map<std::string, std::string>& env) {
  return [env](const std::string& k) {
    auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

// A temporary docker config directory holding `json` as config.json.
std::string write_config(const std::string& json) {
  char dir[] = "/tmp/flytecd-dockercfg-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  std::ofstream(std::string(dir) + "/config.json") << json;
  return dir;
}

TEST_CASE("oci auth: credHelpers, then credsStore, then auths, as Docker orders them", "[oci]") {
  const std::string dir = write_config(R"({
    "auths": {"ghcr.io": {"auth": ")" + oci::base64_encode("file:pw") +
                                       R"("},
              "quay.io": {"auth": ")" + oci::base64_encode("quayfile:pw") +
                                       R"("}},
    "credsStore": "desktop",
    "credHelpers": {"https://123.dkr.ecr.example/": "ecr-login"}
  })");
  std::vector<std::string> calls;
  auto helpers =
      [&](const std::string& helper, const std::string& registry,
          const std::string& source) -> flytecd::Result<std::optional<oci::Credentials>> {
    calls.push_back(helper + " " + registry + " " + source);
    if (helper == "ecr-login")
      return std::optional<oci::Credentials>(
          oci::Credentials{"AWS", "ecr-secret", "helper ecr-login", false});
    if (registry == "quay.io") return std::optional<oci::Credentials>();  // has nothing
    return std::optional<oci::Credentials>(
        oci::Credentials{"", "refresh-token", "helper desktop", true});
  };
  std::map<std::string, std::string> env = {{"DOCKER_CONFIG", dir}};
  oci::CredentialStore store("", env_of(env), helpers);
  auto ecr = store.lookup("123.dkr.ecr.example");
  REQUIRE(ecr);
  REQUIRE(*ecr);
  CHECK((*ecr)->password == "ecr-secret");
  CHECK(calls.back() == "ecr-login 123.dkr.ecr.example credHelpers[\"123.dkr.ecr.example\"] in " +
                            dir + "/config.json");
  auto ghcr = store.lookup("ghcr.io");  // credsStore wins over the file's auths entry
  REQUIRE(ghcr);
  REQUIRE(*ghcr);
  CHECK((*ghcr)->identity_token);
  CHECK((*ghcr)->password == "refresh-token");
  auto quay = store.lookup("quay.io");  // the store has nothing: anonymous, as Docker
  REQUIRE(quay);
  CHECK_FALSE(*quay);
  std::filesystem::remove_all(dir);
}

TEST_CASE("oci auth: a failing credential helper is an error naming it, never its secret",
          "[oci]") {
  const std::string dir = write_config(R"({"credHelpers": {"reg.example": "broken"}})");
  std::map<std::string, std::string> env = {{"DOCKER_CONFIG", dir}};
  oci::CredentialStore store(
      "", env_of(env),
      [](const std::string& helper, const std::string& registry,
         const std::string& source) -> flytecd::Result<std::optional<oci::Credentials>> {
        return flytecd::make_error(flytecd::ErrorCode::unauthenticated,
                                   "credential helper docker-credential-" + helper + " (" + source +
                                       ") failed for " + registry);
      });
  auto r = store.lookup("reg.example");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("docker-credential-broken") != std::string::npos);
  CHECK(r.error().message.find("credHelpers[\"reg.example\"]") != std::string::npos);
  std::filesystem::remove_all(dir);

  // Names that are not helper names are refused when the file is read.
  auto bad = oci::parse_docker_config(R"({"credHelpers": {"h": "../../bin/sh"}})", "c.json");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("credHelpers[\"h\"] is not a helper name") != std::string::npos);
  CHECK_FALSE(oci::parse_docker_config(R"({"credsStore": 3})", "c.json"));
}

TEST_CASE("oci auth: a helper's answer: Username and Secret, \"<token>\" an identity token",
          "[oci]") {
  auto c = oci::parse_helper_answer(R"({"ServerURL":"h","Username":"u","Secret":"s"})", "helper x");
  REQUIRE(c);
  CHECK(c->username == "u");
  CHECK(c->password == "s");
  CHECK_FALSE(c->identity_token);
  auto t = oci::parse_helper_answer(R"({"Username":"<token>","Secret":"refresh"})", "helper x");
  REQUIRE(t);
  CHECK(t->identity_token);
  CHECK(t->username.empty());
  for (const char* bad : {"not json", R"({"Username":"u"})", R"({"Username":"u","Secret":""})",
                          R"({"Username":1,"Secret":"s"})"}) {
    auto r = oci::parse_helper_answer(bad, "helper x");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("helper x") != std::string::npos);
  }
}

TEST_CASE("oci auth: run_credential_helper runs docker-credential-<name> get, host on stdin",
          "[oci]") {
  char dir[] = "/tmp/flytecd-helper-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string bin = std::string(dir) + "/docker-credential-test";
  std::ofstream(bin)
      << "#!/bin/sh\n"
         "[ \"$1\" = get ] || { echo \"unexpected argument $1\" >&2; exit 3; }\n"
         "read host\n"
         "case \"$host\" in\n"
         "  good.example) echo '{\"Username\":\"robot\",\"Secret\":\"s3cret\"}' ;;\n"
         "  none.example) echo 'credentials not found in native keychain'; exit 1 ;;\n"
         "  *) echo \"no account for $host\" >&2; exit 2 ;;\n"
         "esac\n";
  std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  ::setenv("PATH", (std::string(dir) + ":" + saved).c_str(), 1);
  auto good = oci::run_credential_helper("test", "good.example", "credsStore in c.json");
  auto none = oci::run_credential_helper("test", "none.example", "credsStore in c.json");
  auto bad = oci::run_credential_helper("test", "bad.example", "credsStore in c.json");
  auto missing = oci::run_credential_helper("absent", "good.example", "credsStore in c.json");
  ::setenv("PATH", saved.c_str(), 1);
  std::filesystem::remove_all(dir);
  REQUIRE(good);
  REQUIRE(*good);
  CHECK((*good)->username == "robot");
  CHECK((*good)->password == "s3cret");
  REQUIRE(none);
  CHECK_FALSE(*none);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("docker-credential-test (credsStore in c.json) failed for "
                                 "bad.example: exit status 2: no account for bad.example") !=
        std::string::npos);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("docker-credential-absent") != std::string::npos);
  CHECK(missing.error().message.find("not on PATH") != std::string::npos);
}

// Found by tests/fuzz/fuzz_oci_auth (tests/fuzz/regressions/oci_auth/): 99999999999 s overflowed
// the steady_clock time point (UBSan: signed integer overflow), 2^64-1 read as -1 (expired).
TEST_CASE("oci auth: a token's expires_in is clamped to [0, 24 h] before any arithmetic", "[oci]") {
  const auto now = std::chrono::steady_clock::now();
  for (const char* json : {R"({"token":"a","expires_in":99999999999})",
                           R"({"token":"a","expires_in":18446744073709551615})",
                           R"({"token":"a","expires_in":9223372036854775807})"}) {
    INFO(json);
    auto t = oci::parse_token_response(json, now);
    REQUIRE(t);
    CHECK(t->expires == now + std::chrono::hours(24));
  }
  auto negative =
      oci::parse_token_response(R"({"token":"a","expires_in":-9223372036854775807})", now);
  REQUIRE(negative);
  CHECK(negative->expires == now);
  auto day = oci::parse_token_response(R"({"token":"a","expires_in":86400})", now);
  REQUIRE(day);
  CHECK(day->expires == now + std::chrono::seconds(86400));
}

TEST_CASE("oci auth: token responses and the token cache honour expiry", "[oci]") {
  const auto now = std::chrono::steady_clock::now();
  auto t = oci::parse_token_response(R"({"access_token":"abc","expires_in":300})", now);
  REQUIRE(t);
  CHECK(t->value == "abc");
  CHECK(t->expires == now + std::chrono::seconds(300));
  auto d = oci::parse_token_response(R"({"token":"xyz"})", now);
  REQUIRE(d);
  CHECK(d->expires == now + std::chrono::seconds(60));  // distribution's default
  CHECK_FALSE(oci::parse_token_response(R"({"expires_in":3})", now));
  CHECK_FALSE(oci::parse_token_response("[]", now));

  oci::TokenCache cache;
  cache.put("k", *t);
  CHECK(cache.get("k", now) == std::optional<std::string>("abc"));
  CHECK_FALSE(cache.get("other", now));
  CHECK_FALSE(cache.get("k", now + std::chrono::seconds(299)));  // renewed shortly before expiry
  CHECK_FALSE(cache.get("k", now));                              // and dropped
}

TEST_CASE("oci auth: base64 round trip", "[oci]") {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "flyte:flytepass", std::string("\0\xff", 2)})
    CHECK(oci::base64_decode(oci::base64_encode(s)) == s);
  CHECK(oci::base64_decode("Zm9v") == std::optional<std::string>("foo"));
  CHECK(oci::base64_decode("Zm9vYg") == std::optional<std::string>("foob"));  // unpadded
  CHECK_FALSE(oci::base64_decode("%%%%"));
}

// Issue 27 §7: a token endpoint answering {"token":"SECRET\r\nX-Injected: yes"} made the
// registry receive an X-Injected header on every request.
TEST_CASE("oci auth: a token that is not RFC 6750 b64token text is refused, never echoed",
          "[oci]") {
  const auto now = std::chrono::steady_clock::now();
  for (const char* body :
       {R"({"token":"SECRET\r\nX-Injected: yes"})", R"({"token":"SECRET\nX-Injected: yes"})",
        R"({"access_token":"SECRET\u0000tail"})", R"({"token":"SECRET with spaces"})",
        R"({"token":"SECRET\"quote"})", R"({"token":"=SECRET"})", R"({"token":"SECRET=x"})",
        R"({"token":"SECRETé"})"}) {
    INFO(body);
    auto t = oci::parse_token_response(body, now);
    REQUIRE_FALSE(t);
    CHECK(t.error().code == ErrorCode::invalid_input);
    CHECK_THAT(t.error().message, Catch::Contains("b64token"));
    CHECK_THAT(t.error().message, !Catch::Contains("SECRET") && !Catch::Contains("Injected"));
  }
  // What registries hand out: JWTs (base64url with dots) and opaque base64 with padding.
  for (const char* ok :
       {"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmbHl0ZSJ9.c2ln-_~", "dG9rZW4+/w==", "abc", "a.b.c"}) {
    INFO(ok);
    auto t = oci::parse_token_response(std::string(R"({"token":")") + ok + "\"}", now);
    REQUIRE(t);
    CHECK(t->value == ok);
  }
}

TEST_CASE("oci auth: b64token is RFC 6750's grammar, bounded in length", "[oci]") {
  for (const char* ok :
       {"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmbHl0ZSJ9.c2ln-_~", "dG9rZW4+/w==", "abc", "a.b.c", "a="})
    CHECK(oci::is_b64token(ok));
  for (const char* no : {"", "==", "=a", "a=b", "a b", "a\r\nb", "a,b", "a\"b", "\xc3\xa9"})
    CHECK_FALSE(oci::is_b64token(no));
  CHECK(oci::is_b64token(std::string(oci::k_max_token_bytes, 'a')));
  CHECK_FALSE(oci::is_b64token(std::string(oci::k_max_token_bytes + 1, 'a')));
  const std::string huge = R"({"token":")" + std::string(oci::k_max_token_bytes + 1, 'a') + "\"}";
  auto t = oci::parse_token_response(huge, std::chrono::steady_clock::now());
  REQUIRE_FALSE(t);
  CHECK_THAT(t.error().message, Catch::Contains("at most 65536 bytes"));
}

// Issue 27 §2: the shared cache was keyed by realm|service|scope, so registry B naming registry
// A's realm and scope was sent A's token.
TEST_CASE("oci auth: token cache keys differ per registry and per identity, and hold no secret",
          "[oci]") {
  oci::Credentials alice{"alice", "pa55-secret", "env"};
  oci::Credentials bob{"bob", "other-secret", "env"};
  const std::string realm = "https://auth.example/token", service = "svc",
                    scope = "repository:flyte/core:pull";
  const auto a = oci::token_cache_key("a.example:5000", alice, realm, service, scope);
  CHECK(a == oci::token_cache_key("A.example:5000", alice, realm, service, scope));
  CHECK(a != oci::token_cache_key("b.example:5000", alice, realm, service, scope));
  CHECK(a != oci::token_cache_key("a.example:5000", bob, realm, service, scope));
  CHECK(a != oci::token_cache_key("a.example:5000", std::nullopt, realm, service, scope));
  CHECK(a != oci::token_cache_key("a.example:5000", alice, realm, service,
                                  "repository:flyte/other:pull"));
  // The same username with another password is another identity.
  CHECK(a != oci::token_cache_key("a.example:5000", oci::Credentials{"alice", "new", "env"}, realm,
                                  service, scope));
  // No field can run into the next one.
  CHECK(oci::token_cache_key("h", std::nullopt, "r|s", "x", "y") !=
        oci::token_cache_key("h", std::nullopt, "r", "s|x", "y"));
  CHECK_THAT(a, !Catch::Contains("pa55-secret"));
  CHECK(oci::token_cache_key("docker.io", std::nullopt, realm, service, scope) ==
        oci::token_cache_key("registry-1.docker.io", std::nullopt, realm, service, scope));

  oci::TokenCache cache;
  const auto now = std::chrono::steady_clock::now();
  cache.put(a, oci::Token{"alice-token", now + std::chrono::minutes(5)});
  CHECK(cache.get(a, now) == "alice-token");
  CHECK_FALSE(
      cache.get(oci::token_cache_key("b.example:5000", std::nullopt, realm, service, scope), now));
}

}  // namespace FLYTECD_UNITY_ID
