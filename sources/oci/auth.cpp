#include "sources/oci/auth.hpp"

#include "daemon/common/base64.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon/common/scan.hpp"
#include "daemon/common/subprocess.hpp"
#include "daemon/common/text.hpp"
#include "sources/oci/digest.hpp"

namespace flytecd::sources::oci {
namespace {

bool is_token_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos;
}

void skip_ws(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

std::string read_token(std::string_view s, size_t& i) {
  size_t b = i;
  while (i < s.size() && is_token_char(s[i])) ++i;
  return std::string(s.substr(b, i - b));
}

std::string read_quoted(std::string_view s, size_t& i) {
  std::string out;
  ++i;  // opening quote
  while (i < s.size() && s[i] != '"') {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out.push_back(s[i++]);
  }
  if (i < s.size()) ++i;  // closing quote
  return out;
}

}  // namespace

bool is_b64token(std::string_view s) {
  if (s.empty() || s.size() > k_max_token_bytes) return false;
  size_t i = 0;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) ||
                          std::string_view("-._~+/").find(s[i]) != std::string_view::npos))
    ++i;
  if (i == 0) return false;
  while (i < s.size() && s[i] == '=') ++i;
  return i == s.size();
}

std::string Challenge::param(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

std::vector<Challenge> parse_www_authenticate(std::string_view s) {
  std::vector<Challenge> out;
  size_t i = 0;
  while (i < s.size()) {
    skip_ws(s, i);
    while (i < s.size() && (s[i] == ',' || s[i] == ' ' || s[i] == '\t')) ++i;
    std::string scheme = read_token(s, i);
    if (scheme.empty()) {
      ++i;  // not a token: skip the character and resynchronise
      continue;
    }
    Challenge ch{text::ascii_lower(scheme), {}};
    // Parameters: name=value pairs separated by commas, until the next "scheme " token.
    for (;;) {
      skip_ws(s, i);
      while (i < s.size() && s[i] == ',') {
        ++i;
        skip_ws(s, i);
      }
      size_t save = i;
      std::string name = read_token(s, i);
      skip_ws(s, i);
      if (name.empty() || i >= s.size() || s[i] != '=') {
        i = save;  // a new challenge starts here (or the end)
        break;
      }
      ++i;
      skip_ws(s, i);
      std::string value;
      if (i < s.size() && s[i] == '"') {
        value = read_quoted(s, i);
      } else {
        size_t b = i;
        while (i < s.size() && s[i] != ',' && s[i] != ' ' && s[i] != '\t') ++i;
        value = std::string(s.substr(b, i - b));
      }
      ch.params[text::ascii_lower(name)] = value;
    }
    out.push_back(std::move(ch));
  }
  return out;
}

std::string base64_encode(std::string_view in) { return base64::encode(in); }

std::optional<std::string> base64_decode(std::string_view in) {
  std::string text;  // Docker and Podman write auths on one line; a pasted one may wrap
  for (char ch : in)
    if (!std::isspace(static_cast<unsigned char>(ch))) text.push_back(ch);
  return base64::decode(text, base64::Padding::optional);
}

std::string normalize_registry_key(std::string_view key) {
  std::string k = text::ascii_lower(std::string(key));
  if (auto p = k.find("://"); p != std::string::npos) k.erase(0, p + 3);
  if (auto slash = k.find('/'); slash != std::string::npos) k.erase(slash);
  if (k == "index.docker.io" || k == "registry-1.docker.io") k = "docker.io";
  return k;
}

std::string registry_env_var(std::string_view registry) {
  std::string out = "FLYTECD_REGISTRY_AUTH_";
  for (char ch : registry)
    out.push_back(std::isalnum(static_cast<unsigned char>(ch))
                      ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch)))
                      : '_');
  return out;
}

namespace {

bool valid_helper_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char ch) {
    return std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.';
  });
}

Status parse_helpers(const nlohmann::json& j, const std::string& source, DockerConfig& out) {
  const std::string expected =
      " (the helper runs as docker-credential-<name>: letters, digits, '-', '_' or '.')";
  if (auto store = j.find("credsStore"); store != j.end() && !store->is_null()) {
    if (!store->is_string())
      return make_error(ErrorCode::invalid_input, source + ": \"credsStore\" must be a string");
    out.creds_store = store->get<std::string>();
    if (!out.creds_store.empty() && !valid_helper_name(out.creds_store))
      return make_error(ErrorCode::invalid_input,
                        source + ": \"credsStore\" is not a helper name" + expected);
  }
  auto helpers = j.find("credHelpers");
  if (helpers == j.end() || helpers->is_null()) return ok_status();
  if (!helpers->is_object())
    return make_error(ErrorCode::invalid_input,
                      source + ": \"credHelpers\" must be an object {\"host\": \"helper\"}");
  for (const auto& [key, name] : helpers->items()) {
    if (!name.is_string() || !valid_helper_name(name.get<std::string>()))
      return make_error(ErrorCode::invalid_input, source + ": credHelpers[\"" +
                                                      scan::printable(key) +
                                                      "\"] is not a helper name" + expected);
    out.cred_helpers[normalize_registry_key(key)] = name.get<std::string>();
  }
  return ok_status();
}

}  // namespace

Result<DockerConfig> parse_docker_config(std::string_view json, const std::string& source) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorCode::invalid_input,
                      source + ": not a JSON object; expected {\"auths\": {\"host\": {…}}}");
  DockerConfig config;
  if (auto st = parse_helpers(j, source, config); !st) return st.error();
  std::map<std::string, Credentials>& out = config.auths;
  auto auths = j.find("auths");
  if (auths == j.end()) return config;
  if (!auths->is_object())
    return make_error(ErrorCode::invalid_input, source + ": \"auths\" must be an object");
  for (const auto& [key, entry] : auths->items()) {
    if (!entry.is_object()) continue;
    Credentials c;
    c.source = source;
    if (auto a = entry.find("auth");
        a != entry.end() && a->is_string() && !a->get<std::string>().empty()) {
      auto decoded = base64_decode(a->get<std::string>());
      if (!decoded || decoded->find(':') == std::string::npos)
        return make_error(
            ErrorCode::invalid_input,
            source + ": auths[\"" + key + "\"].auth is not base64 of \"username:password\"");
      const auto colon = decoded->find(':');
      c.username = decoded->substr(0, colon);
      c.password = decoded->substr(colon + 1);
    } else {
      auto u = entry.find("username");
      auto p = entry.find("password");
      if (u != entry.end() && u->is_string()) c.username = u->get<std::string>();
      if (p != entry.end() && p->is_string()) c.password = p->get<std::string>();
    }
    if (c.empty()) continue;
    const std::string k = normalize_registry_key(key);
    // An exact "host:port" key wins over a URL-form key that normalises to the same host.
    if (out.count(k) == 0 || key == k) out[k] = std::move(c);
  }
  return config;
}

Result<Credentials> parse_helper_answer(std::string_view json, const std::string& who) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  const std::string expected = "; expected {\"Username\": …, \"Secret\": …}";
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorCode::invalid_input, who +
                                                    " answered something that is not a JSON "
                                                    "object" +
                                                    expected);
  auto field = [&](const char* name) -> std::optional<std::string> {
    auto it = j.find(name);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto user = field("Username");
  auto secret = field("Secret");
  if (!user || !secret || secret->empty())
    return make_error(
        ErrorCode::invalid_input,
        who + " answered without a string Username and a non-empty Secret" + expected);
  Credentials c;
  c.identity_token = *user == "<token>";
  c.username = c.identity_token ? std::string() : *user;
  c.password = *secret;
  c.source = who;
  return c;
}

Result<std::optional<Credentials>> run_credential_helper(const std::string& helper,
                                                         const std::string& registry,
                                                         const std::string& source) {
  const std::string exe = "docker-credential-" + helper;
  const std::string who = "credential helper " + exe + " (" + source + ")";
  auto path = find_executable(exe);
  if (!path)
    return make_error(ErrorCode::invalid_input,
                      who + " is not on PATH; install it or remove it from the config file");
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  auto r = run_process({*path, "get"}, registry + "\n", env, std::chrono::seconds(30));
  if (!r) return r.error().wrap(who);
  if (r->exit_code != 0) {
    // docker-credential-helpers' "credentials not found in native keychain": nothing for this
    // host, as Docker treats it. Anything else is the helper's error: its first line of stderr
    // (helpers do not print secrets there), bounded.
    const std::string out = r->out + r->err;
    if (out.find("credentials not found") != std::string::npos) return std::optional<Credentials>();
    std::string line = r->err.substr(0, r->err.find('\n'));
    if (line.empty()) line = r->out.substr(0, r->out.find('\n'));
    return make_error(ErrorCode::unauthenticated,
                      who + " failed for " + registry + ": exit status " +
                          std::to_string(r->exit_code) +
                          (line.empty() ? "" : ": " + scan::printable(line, 200)));
  }
  auto c = parse_helper_answer(r->out, who);
  if (!c) return c.error();
  return std::optional<Credentials>(std::move(c).value());
}

CredentialStore::CredentialStore(std::string explicit_config, EnvLookup env, HelperRunner helpers)
    : m_env(std::move(env)), m_helpers(std::move(helpers)) {
  if (!explicit_config.empty()) load_file(explicit_config);
  if (auto f = m_env("REGISTRY_AUTH_FILE"); f && !f->empty()) load_file(*f);
  if (auto d = m_env("DOCKER_CONFIG"); d && !d->empty()) {
    load_file(*d + "/config.json");
  } else if (auto home = m_env("HOME"); home && !home->empty()) {
    load_file(*home + "/.docker/config.json");
  }
}

void CredentialStore::load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  std::stringstream ss;
  ss << in.rdbuf();
  auto parsed = parse_docker_config(ss.str(), path);
  if (!parsed) {
    m_warnings.push_back(parsed.error().message);
    return;
  }
  m_files.emplace_back(path, std::move(parsed).value());
}

Result<std::optional<Credentials>> CredentialStore::lookup(const std::string& registry) const {
  const std::string var = registry_env_var(registry);
  if (auto v = m_env(var); v && !v->empty()) {
    const auto colon = v->find(':');
    Credentials c;
    c.username = v->substr(0, colon);
    c.password = colon == std::string::npos ? std::string() : v->substr(colon + 1);
    c.source = "$" + var;
    return std::optional<Credentials>(std::move(c));
  }
  const std::string key = normalize_registry_key(registry);
  for (const auto& [path, file] : m_files) {
    std::string helper, source;
    if (auto h = file.cred_helpers.find(key); h != file.cred_helpers.end()) {
      helper = h->second;
      source = "credHelpers[\"" + key + "\"] in " + path;
    } else if (!file.creds_store.empty()) {
      helper = file.creds_store;
      source = "credsStore in " + path;
    }
    if (!helper.empty()) {
      auto c = m_helpers(helper, registry, source);
      if (!c) return c.error();
      if (*c) return c;
      continue;  // the helper has nothing for this host: as Docker, the file's auths are unused
    }
    if (auto it = file.auths.find(key); it != file.auths.end())
      return std::optional<Credentials>(it->second);
  }
  return std::optional<Credentials>();
}

std::vector<std::string> CredentialStore::warnings() const { return m_warnings; }

Result<Token> parse_token_response(std::string_view json,
                                   std::chrono::steady_clock::time_point now) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorCode::invalid_input,
                      "token response is not a JSON object; expected {\"token\": …}");
  Token t;
  for (const char* name : {"token", "access_token"}) {
    auto it = j.find(name);
    if (it != j.end() && it->is_string() && !it->get<std::string>().empty()) {
      t.value = it->get<std::string>();
      break;
    }
  }
  if (t.value.empty())
    return make_error(ErrorCode::invalid_input,
                      "token response has no \"token\" or \"access_token\" string");
  // The token goes into an Authorization header: it must be RFC 6750 b64token text. Anything
  // else (CR/LF would inject headers) is refused; the message never shows the token.
  if (!is_b64token(t.value))
    return make_error(
        ErrorCode::invalid_input,
        "token response holds a token that is not RFC 6750 b64token text (letters, "
        "digits, -._~+/ and trailing =" +
            std::string(t.value.size() > k_max_token_bytes
                            ? ", at most " + std::to_string(k_max_token_bytes) + " bytes"
                            : "") +
            "); refused");
  // Clamped before any arithmetic: a huge expires_in overflowed the time point (undefined
  // behaviour) and one past LLONG_MAX read as negative (an already expired token).
  constexpr long long k_max_ttl = 24 * 3600;
  long long ttl = 60;
  if (auto e = j.find("expires_in"); e != j.end() && e->is_number_integer()) {
    ttl = e->is_number_unsigned()
              ? static_cast<long long>(std::min<uint64_t>(e->get<uint64_t>(), k_max_ttl))
              : std::clamp(e->get<long long>(), 0LL, k_max_ttl);
  }
  t.expires = now + std::chrono::seconds(ttl);
  return t;
}

std::string token_cache_key(std::string_view registry,
                            const std::optional<Credentials>& credentials, std::string_view realm,
                            std::string_view service, std::string_view scope) {
  std::string identity = "anonymous";
  if (credentials && !credentials->empty()) {
    std::string secret = std::to_string(credentials->username.size()) + ":" +
                         credentials->username + credentials->password;
    identity = sha256_digest(secret);
  }
  const std::string host = normalize_registry_key(registry);
  std::string key;
  // Length-prefixed: no value can end one field and start the next.
  for (std::string_view part :
       {std::string_view(host), std::string_view(identity), realm, service, scope}) {
    key += std::to_string(part.size());
    key += ':';
    key += part;
    key += ';';
  }
  return key;
}

std::optional<std::string> TokenCache::get(const std::string& key,
                                           std::chrono::steady_clock::time_point now) {
  std::lock_guard<std::mutex> g(m_mu);
  auto it = m_tokens.find(key);
  if (it == m_tokens.end()) return std::nullopt;
  // Renew a little early so a token does not expire between lookup and use.
  if (it->second.expires - std::chrono::seconds(5) <= now) {
    m_tokens.erase(it);
    return std::nullopt;
  }
  return it->second.value;
}

void TokenCache::put(const std::string& key, Token token) {
  std::lock_guard<std::mutex> g(m_mu);
  m_tokens[key] = std::move(token);
}

void TokenCache::drop(const std::string& key) {
  std::lock_guard<std::mutex> g(m_mu);
  m_tokens.erase(key);
}

}  // namespace flytecd::sources::oci
