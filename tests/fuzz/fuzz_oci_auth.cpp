// OCI auth and response headers: a registry's WWW-Authenticate challenge, its token endpoint's
// JSON, a docker config file, and the Retry-After / Location headers the HTTP client follows.
// Contract (sources/oci/auth.hpp, http_client.hpp): pure, never throws.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/common/http/client.hpp"
#include "sources/oci/auth.hpp"
#include "tests/fuzz/utf8_property.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace flytecd::sources::oci;
  using namespace flytecd::http;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string s(text);

  for (const auto& ch : parse_www_authenticate(text)) {
    if (ch.scheme.empty()) std::abort();  // every challenge has a scheme
    (void)ch.param("realm");
  }
  const auto now = std::chrono::steady_clock::now();
  if (auto token = parse_token_response(text, now); token && token->value.empty()) {
    std::abort();
  } else if (!token) {
    flytecd::fuzz::expect_json_message("parse_token_response's error", token.error().message);
  }
  if (auto config = parse_docker_config(text, "fuzz config"); !config) {
    flytecd::fuzz::expect_json_message("parse_docker_config's error", config.error().message);
  }
  (void)normalize_registry_key(text);
  (void)registry_env_var(text);
  if (auto decoded = base64_decode(text)) {
    // Re-encoding what was decoded must decode to the same bytes.
    auto again = base64_decode(base64_encode(*decoded));
    if (!again || *again != *decoded) std::abort();
  }
  (void)parse_retry_after(s, std::chrono::system_clock::now());
  (void)url_origin(s);
  (void)resolve_location("https://registry.example.com:5000/v2/flyte/core/blobs/sha256:ab?x=1", s);
  (void)resolve_location("http://127.0.0.1:5000", s);
  return 0;
}
