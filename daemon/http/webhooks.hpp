#pragma once

// Pure verification of webhook deliveries: no I/O, no logging. Secrets are compared in
// constant time; an empty configured secret never verifies anything.

#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace flytecd::http {

enum class WebhookVerdict { accepted, bad_signature, missing_signature };

std::string_view to_string(WebhookVerdict v);

// GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`. `header` is the
// header value ("" when absent => missing_signature); hex digits are case-insensitive.
WebhookVerdict verify_github(std::string_view secret, std::string_view header,
                             std::string_view body);

// GitLab: `X-Gitlab-Token: <token>`, compared for equality in constant time (the length of
// the configured token does not leak either).
WebhookVerdict verify_gitlab(std::string_view token, std::string_view header);

// Generic: `X-Signature: sha256=<hex HMAC-SHA256(secret, body)>`, same rules as GitHub.
WebhookVerdict verify_generic_hmac(std::string_view secret, std::string_view header,
                                   std::string_view body);

// `Authorization: Bearer <token>` against `token`, constant time. False for an empty token.
bool verify_bearer(std::string_view token, std::string_view authorization_header);

// Lower-case hex of HMAC-SHA256(key, data) (also used to sign outgoing notifications).
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

// Equality whose time does not depend on where the inputs differ, nor on their lengths
// (both sides are hashed first).
bool constant_time_equal(std::string_view a, std::string_view b);

// Remembers the last `capacity` delivery ids (GitHub's X-GitHub-Delivery) so that a captured,
// validly signed delivery replayed later triggers nothing. Thread-safe; bounded memory.
class DeliveryLog {
 public:
  explicit DeliveryLog(size_t capacity = 4096) : m_capacity(capacity) {}
  // True the first time `id` is seen (and remembers it); false for a replay. An empty id (no
  // header) cannot be deduplicated and is always first.
  bool first_seen(std::string_view id);

 private:
  size_t m_capacity;
  std::mutex m_mu;
  std::deque<std::string> m_order;
  std::unordered_set<std::string> m_seen;
};

}  // namespace flytecd::http
