#include "sinks/flyteadmin/hints.hpp"

#include <algorithm>
#include <cctype>

namespace flytecd::sinks::flyteadmin {
namespace {

bool contains(std::string_view haystack, std::string_view needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                     [](char a, char b) {
                       return std::tolower(static_cast<unsigned char>(a)) ==
                              std::tolower(static_cast<unsigned char>(b));
                     }) != haystack.end();
}

// "dns:///flyte.example.com:443" -> "flyte.example.com:443".
std::string_view host_port(std::string_view endpoint) {
  for (std::string_view scheme : {"dns:///", "dns:", "ipv4:", "ipv6:"})
    if (endpoint.substr(0, scheme.size()) == scheme) return endpoint.substr(scheme.size());
  return endpoint;
}

}  // namespace

std::string connection_hint(std::string_view endpoint, bool insecure, std::string_view m) {
  const std::string at(host_port(endpoint));
  if (contains(m, "connection refused"))
    return "is FlyteAdmin listening at " + at + "? (connection refused)";
  if (!insecure && (contains(m, "wrong_version_number") || contains(m, "wrong version number") ||
                    contains(m, "http_request") || contains(m, "packet length too long")))
    return "the server at " + at +
           " speaks plaintext, not TLS: set admin.insecure: true (or --insecure)";
  if (insecure && (contains(m, "socket closed") || contains(m, "connection reset") ||
                   contains(m, "goaway") || contains(m, "end of stream")))
    return "the server at " + at +
           " closed a plaintext connection; it may speak TLS: drop admin.insecure (--insecure)";
  if (!insecure &&
      (contains(m, "certificate verify failed") || contains(m, "certificate_verify_failed")))
    return "the certificate of " + at +
           " is not trusted: set admin.caCertFilePath to the CA that signed it";
  if (!insecure && contains(m, "handshake"))
    return "the TLS handshake with " + at +
           " failed: if it speaks plaintext set admin.insecure: true, else check "
           "admin.caCertFilePath";
  return "";
}

std::string unavailable_message(std::string_view endpoint, bool insecure, std::string_view m) {
  std::string hint = connection_hint(endpoint, insecure, m);
  if (hint.empty()) return std::string(m);
  return hint + " [" + std::string(m) + "]";
}

}  // namespace flytecd::sinks::flyteadmin
