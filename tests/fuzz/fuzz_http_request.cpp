// HTTP requests: the head (request line and headers) a client sends to the daemon's listener,
// parsed (daemon/common/http/wire.hpp) before any route, auth or size check runs. Input: the bytes
// up to the blank line. Oracles for an accepted head: an origin-form target, header names that are
// non-empty lower-case RFC 9110 tokens (so no blank before the colon, no obs-fold), no bare
// CR/LF/NUL anywhere, a Content-Length only when it was one well-formed number.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "daemon/common/http/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view head(reinterpret_cast<const char*>(data), size);
  // The listener hands the parser everything before the first blank line.
  if (const auto end = head.find("\r\n\r\n"); end != std::string_view::npos) {
    head = head.substr(0, end);
  }
  flytecd::http::Request req;
  if (!flytecd::http::parse_request_head(head, req)) return 0;
  if (req.method.empty() || req.path.empty() || req.path.front() != '/') std::abort();
  if (req.path.find('?') != std::string::npos) std::abort();
  constexpr std::string_view k_breaks{"\r\n\0", 3};
  if (req.method.find_first_of(k_breaks) != std::string::npos ||
      req.path.find_first_of(k_breaks) != std::string::npos ||
      req.query.find_first_of(k_breaks) != std::string::npos) {
    std::abort();
  }
  for (const auto& [name, value] : req.headers) {
    if (name.empty() || value.find_first_of(k_breaks) != std::string::npos) std::abort();
    for (unsigned char c : name) {
      const bool tchar =
          std::islower(c) || std::isdigit(c) ||
          std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
      if (!tchar) std::abort();
    }
  }
  if (req.content_length && req.header("content-length").empty()) std::abort();
  return 0;
}
