#include "sources/oci/auth.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sources/oci/digest.hpp"

namespace flytecd::sources::oci {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

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
    Challenge ch{lower(scheme), {}};
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
      ch.params[lower(name)] = value;
    }
    out.push_back(std::move(ch));
  }
  return out;
}

std::string base64_encode(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()),
                                static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(std::max(n, 0)));
  return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
  std::string text;
  for (char ch : in)
    if (!std::isspace(static_cast<unsigned char>(ch))) text.push_back(ch);
  while (text.size() % 4 != 0) text.push_back('=');
  if (text.empty()) return std::string();
  std::string out(3 * (text.size() / 4) + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  size_t size = static_cast<size_t>(n);
  // EVP_DecodeBlock counts padding as zero bytes: drop them.
  for (size_t k = text.size(); k > 0 && text[k - 1] == '=' && size > 0; --k) --size;
  out.resize(size);
  return out;
}

std::string normalize_registry_key(std::string_view key) {
  std::string k = lower(std::string(key));
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

Result<std::map<std::string, Credentials>> parse_docker_config(std::string_view json,
                                                               const std::string& source) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorCode::invalid_input,
                      source + ": not a JSON object; expected {\"auths\": {\"host\": {…}}}");
  std::map<std::string, Credentials> out;
  auto auths = j.find("auths");
  if (auths == j.end()) return out;
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
  return out;
}

CredentialStore::CredentialStore(std::string explicit_config, EnvLookup env)
    : m_env(std::move(env)) {
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
  m_files.push_back(std::move(parsed).value());
}

std::optional<Credentials> CredentialStore::lookup(const std::string& registry) const {
  const std::string var = registry_env_var(registry);
  if (auto v = m_env(var); v && !v->empty()) {
    const auto colon = v->find(':');
    Credentials c;
    c.username = v->substr(0, colon);
    c.password = colon == std::string::npos ? std::string() : v->substr(colon + 1);
    c.source = "$" + var;
    return c;
  }
  const std::string key = normalize_registry_key(registry);
  for (const auto& file : m_files)
    if (auto it = file.find(key); it != file.end()) return it->second;
  return std::nullopt;
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
