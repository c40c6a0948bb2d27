// Webhook deliveries: the signature header and the body of a GitHub, GitLab or generic
// webhook, and a manual sync's Authorization header. Input: the header value, a newline, then
// the body. Oracles: nothing verifies without the secret, except the body's own correct
// signature, which always does (any hex case, surrounding blanks).
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/http/webhooks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace flytecd::http;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto nl = input.find('\n');
  const std::string_view header = input.substr(0, nl);
  const std::string_view body = nl == std::string_view::npos ? "" : input.substr(nl + 1);
  constexpr std::string_view k_secret = "fuzz-webhook-secret";

  const std::string good = "sha256=" + hmac_sha256_hex(k_secret, body);
  for (auto verify : {verify_github, verify_generic_hmac}) {
    const auto v = verify(k_secret, header, body);
    std::string h(header);  // the header as the verifier sees it: blanks around it dropped
    const auto first = h.find_first_not_of(" \t");
    h.erase(0, first == std::string::npos ? h.size() : first);
    while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.pop_back();
    std::string folded = h;
    std::transform(folded.begin(), folded.end(), folded.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool is_good = h.rfind("sha256=", 0) == 0 && folded == good;
    if ((v == WebhookVerdict::accepted) != is_good) std::abort();
    if (verify("", header, body) == WebhookVerdict::accepted) std::abort();
    std::string upper = good;
    std::transform(upper.begin() + 7, upper.end(), upper.begin() + 7,
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (verify(k_secret, " " + upper + "\t", body) != WebhookVerdict::accepted) std::abort();
    (void)to_string(v);
  }
  if (verify_gitlab("", header) == WebhookVerdict::accepted) std::abort();
  (void)verify_gitlab(k_secret, header);
  if (verify_bearer("", header)) std::abort();
  if (verify_bearer(k_secret, header) && header.find(k_secret) == std::string_view::npos) {
    std::abort();
  }
  if (constant_time_equal(header, body) != (header == body)) std::abort();
  return 0;
}
