#include "daemon/http/webhooks.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cctype>
#include <optional>

#include "daemon/common/digest.hpp"
#include "daemon/common/text.hpp"

namespace flytecd::http {
namespace {

using Digest = digest::Sha256Bytes;

Digest hmac_sha256(std::string_view key, std::string_view data) {
  Digest md{};
  unsigned int len = 0;
  // HMAC() wants non-null pointers even for empty inputs.
  static const unsigned char k_empty = 0;
  const auto* k = key.empty() ? &k_empty : reinterpret_cast<const unsigned char*>(key.data());
  const auto* d = data.empty() ? &k_empty : reinterpret_cast<const unsigned char*>(data.data());
  HMAC(EVP_sha256(), k, static_cast<int>(key.size()), d, data.size(), md.data(), &len);
  return md;
}

// "sha256=<64 hex>" -> digest bytes; nullopt when malformed. Timing here depends only on the
// caller-supplied header, never on the secret.
std::optional<Digest> parse_sha256_signature(std::string_view header) {
  constexpr std::string_view k_prefix = "sha256=";
  if (header.size() != k_prefix.size() + 64 || !header.starts_with(k_prefix)) return std::nullopt;
  header.remove_prefix(k_prefix.size());
  Digest out{};
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = text::hex_value(header[2 * i]);
    const int lo = text::hex_value(header[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

WebhookVerdict verify_hmac(std::string_view secret, std::string_view header,
                           std::string_view body) {
  header = trim(header);
  if (header.empty()) return WebhookVerdict::missing_signature;
  if (secret.empty()) return WebhookVerdict::bad_signature;
  const auto given = parse_sha256_signature(header);
  if (!given) return WebhookVerdict::bad_signature;
  const Digest expected = hmac_sha256(secret, body);
  return CRYPTO_memcmp(given->data(), expected.data(), expected.size()) == 0
             ? WebhookVerdict::accepted
             : WebhookVerdict::bad_signature;
}

}  // namespace

std::string_view to_string(WebhookVerdict v) {
  switch (v) {
    case WebhookVerdict::accepted:
      return "accepted";
    case WebhookVerdict::bad_signature:
      return "bad_signature";
    case WebhookVerdict::missing_signature:
      return "missing_signature";
  }
  return "bad_signature";
}

WebhookVerdict verify_github(std::string_view secret, std::string_view header,
                             std::string_view body) {
  return verify_hmac(secret, header, body);
}

WebhookVerdict verify_generic_hmac(std::string_view secret, std::string_view header,
                                   std::string_view body) {
  return verify_hmac(secret, header, body);
}

WebhookVerdict verify_gitlab(std::string_view token, std::string_view header) {
  header = trim(header);
  if (header.empty()) return WebhookVerdict::missing_signature;
  if (token.empty()) return WebhookVerdict::bad_signature;
  return constant_time_equal(token, header) ? WebhookVerdict::accepted
                                            : WebhookVerdict::bad_signature;
}

bool verify_bearer(std::string_view token, std::string_view authorization_header) {
  if (token.empty()) return false;
  std::string_view h = trim(authorization_header);
  constexpr std::string_view k_scheme = "bearer";
  if (h.size() <= k_scheme.size()) return false;
  for (size_t i = 0; i < k_scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(h[i])) != k_scheme[i]) return false;
  }
  if (h[k_scheme.size()] != ' ' && h[k_scheme.size()] != '\t') return false;
  return constant_time_equal(token, trim(h.substr(k_scheme.size())));
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  return digest::to_hex(hmac_sha256(key, data));
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Hashing first makes the comparison's time independent of where, and whether, lengths differ.
  const Digest da = digest::sha256(a);
  const Digest db = digest::sha256(b);
  return CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

bool DeliveryLog::first_seen(std::string_view id) {
  if (id.empty()) return true;
  std::lock_guard<std::mutex> lock(m_mu);
  std::string key(id.substr(0, 128));  // ids are GUIDs; a longer header cannot grow memory
  if (!m_seen.insert(key).second) return false;
  m_order.push_back(std::move(key));
  if (m_order.size() > m_capacity) {
    m_seen.erase(m_order.front());
    m_order.pop_front();
  }
  return true;
}

}  // namespace flytecd::http
