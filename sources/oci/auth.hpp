#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::sources::oci {

// One challenge of a WWW-Authenticate header: scheme and parameter names lower-cased, values
// unquoted ("Bearer realm=\"…\",service=\"…\",scope=\"…\",error=\"insufficient_scope\"").
struct Challenge {
  std::string scheme;
  std::map<std::string, std::string> params;

  std::string param(const std::string& name) const;
};

// Parses every challenge in a WWW-Authenticate value (RFC 7235: comma-separated, quoted strings
// with backslash escapes, token68). Never fails; unparseable parts are skipped. Pure.
std::vector<Challenge> parse_www_authenticate(std::string_view header);

struct Credentials {
  std::string username;
  std::string password;  // with identity_token: an OAuth2 refresh token for the token realm
  std::string source;    // where they came from, for messages ("docker config /root/.docker/…")
  // A credential helper answered Username "<token>": `password` is an identity token, traded at
  // the registry's token realm (POST grant_type=refresh_token), never sent as Basic.
  bool identity_token = false;

  bool empty() const { return username.empty() && password.empty(); }
};

// What one Docker/Podman auth file says.
struct DockerConfig {
  std::map<std::string, Credentials> auths;         // by normalised host[:port]
  std::string creds_store;                          // "credsStore": the helper for every registry
  std::map<std::string, std::string> cred_helpers;  // "credHelpers": host -> helper name
};

// Parses a Docker/Podman auth file ({"auths": {"host": {"auth": base64(user:pass)} |
// {"username": …, "password": …}}, "credsStore": name, "credHelpers": {"host": name}}). Keys are
// normalised to host[:port] (scheme and path dropped, "index.docker.io"/"registry-1.docker.io" ->
// "docker.io"). Entries without usable credentials (identitytoken only) are skipped. A helper
// name must be letters, digits, '-', '_' or '.' (it becomes docker-credential-<name>). Errors:
// invalid_input.
Result<DockerConfig> parse_docker_config(std::string_view json, const std::string& source);

// Runs a credential helper: the executable docker-credential-<name> found in $PATH, argument
// "get", the registry host on stdin; returns its {"Username", "Secret"} (Username "<token>": an
// identity token), or nullopt when it has none for the host ("credentials not found"). Errors
// name the helper and where it was configured (`source`), never the secret. Bounded: 30 s.
using HelperRunner = std::function<Result<std::optional<Credentials>>(
    const std::string& helper, const std::string& registry, const std::string& source)>;
Result<std::optional<Credentials>> run_credential_helper(const std::string& helper,
                                                         const std::string& registry,
                                                         const std::string& source);
// Reads a helper's answer (its stdout). Pure.
Result<Credentials> parse_helper_answer(std::string_view json, const std::string& who);

// "host[:port]" as config keys are normalised.
std::string normalize_registry_key(std::string_view key);

// The environment variable that holds "user:password" for a registry:
// FLYTECD_REGISTRY_AUTH_<REGISTRY upper-cased, every other character '_'>, e.g.
// "127.0.0.1:5001" -> FLYTECD_REGISTRY_AUTH_127_0_0_1_5001.
std::string registry_env_var(std::string_view registry);

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Where credentials for a registry come from, first match wins:
//   1. $FLYTECD_REGISTRY_AUTH_<HOST> = "user:password";
//   2. the explicit config file (FetchOptions::docker_config), if set;
//   3. $REGISTRY_AUTH_FILE (podman/skopeo auth.json);
//   4. $DOCKER_CONFIG/config.json, else $HOME/.docker/config.json.
// Within one file, as Docker does: credHelpers[host], then credsStore, then auths[host]. A helper
// that has nothing for the host falls through to the next file.
// A missing file is not an error; a malformed one is logged by the caller and skipped.
class CredentialStore {
 public:
  CredentialStore(std::string explicit_config, EnvLookup env,
                  HelperRunner helpers = run_credential_helper);
  // Credentials for host[:port], or nullopt for anonymous access; an error when a configured
  // credential helper fails (not started, exit status, bad answer). Thread-safe.
  Result<std::optional<Credentials>> lookup(const std::string& registry) const;
  // Problems met while reading files (malformed JSON), for one warning each.
  std::vector<std::string> warnings() const;

 private:
  void load_file(const std::string& path);

  EnvLookup m_env;
  HelperRunner m_helpers;
  std::vector<std::pair<std::string, DockerConfig>> m_files;  // path, contents; precedence order
  std::vector<std::string> m_warnings;
};

// The longest bearer token accepted (registries' JWTs are a few KiB).
inline constexpr size_t k_max_token_bytes = 64u << 10;

// RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=", at most
// k_max_token_bytes. What may follow "Authorization: Bearer ". Pure.
bool is_b64token(std::string_view s);

// A bearer token from a token endpoint's JSON ({"token"|"access_token", "expires_in",
// "issued_at"}). expires_in defaults to 60 s (distribution's token spec) and is clamped to
// [0 s, 24 h]. Errors: invalid_input, also for a token that is not b64token text (the message
// never contains the token).
struct Token {
  std::string value;
  std::chrono::steady_clock::time_point expires;
};
Result<Token> parse_token_response(std::string_view json,
                                   std::chrono::steady_clock::time_point now);

// The cache key of a bearer token: the registry it is sent to (host[:port]), who asked for it
// (anonymous, or a digest of the credentials, never the secret itself), then realm, service and
// scope. Tokens are kept per registry and identity as Docker and containerd keep them: a token
// obtained for one host is never sent to another, even when that other registry names the same
// realm and scope (it would otherwise harvest a private registry's token). Pure.
std::string token_cache_key(std::string_view registry,
                            const std::optional<Credentials>& credentials, std::string_view realm,
                            std::string_view service, std::string_view scope);

// Bearer tokens by token_cache_key, valid until shortly before expiry. Thread-safe.
class TokenCache {
 public:
  std::optional<std::string> get(const std::string& key, std::chrono::steady_clock::time_point now);
  void put(const std::string& key, Token token);
  void drop(const std::string& key);

 private:
  std::mutex m_mu;
  std::map<std::string, Token> m_tokens;
};

std::string base64_encode(std::string_view in);
std::optional<std::string> base64_decode(std::string_view in);

}  // namespace flytecd::sources::oci
