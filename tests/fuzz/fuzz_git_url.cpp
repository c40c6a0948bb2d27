// Git URLs and what a remote presents: a source's `url:` and `path:` from the configuration or
// a repository, the redaction applied before any URL is logged, the cache directory name derived
// from it, and an SSH server's host key checked against known_hosts.
// Oracles: redaction leaves no password behind; a mirror directory name is one safe path
// component; a normalised subpath never climbs out and is a fixed point.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/common/log.hpp"
#include "sources/git/known_hosts.hpp"
#include "sources/git/url.hpp"
#include "tests/fuzz/utf8_property.hpp"

namespace {

constexpr std::string_view k_known_hosts =
    "# fuzz\n"
    "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
    "[git.example.com]:2222,!bad.example.com,*.example.org ssh-rsa AAAAB3NzaC1yc2E=\n"
    "|1|c2FsdA==|aGFzaGhhc2hoYXNoaGFzaGhhc2g= ssh-ed25519 AAAA\n"
    "@revoked * ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==\n";

bool safe_dir_name(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.size() > 48 + 1 + 16 + 4) return false;
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".git") == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace flytecd::sources::git;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string s(text);

  const std::string redacted = flytecd::log::redact_url(s);
  if (!safe_dir_name(mirror_dir_name(redacted))) std::abort();
  auto url = parse_remote_url(text);
  if (!url) flytecd::fuzz::expect_json_message("parse_remote_url's error", url.error().message);
  if (url && s.find("://") != std::string::npos) {
    // What is logged must not carry the userinfo the URL had.
    auto again = parse_remote_url(redacted);
    if (again && again->has_password) std::abort();
  }

  if (auto sub = normalize_subpath(text)) {
    const std::string& n = *sub;
    if (!n.empty() && (n.front() == '/' || n.back() == '/')) std::abort();
    if (n == ".." || n.rfind("../", 0) == 0 || n.find("/../") != std::string::npos ||
        (n.size() >= 3 && n.compare(n.size() - 3, 3, "/..") == 0)) {
      std::abort();
    }
    auto twice = normalize_subpath(n);
    if (!twice || *twice != n) std::abort();
  }
  (void)is_full_commit_id(text);

  // The bytes as the host key an SSH server presents, and as a known_hosts file.
  (void)ssh_key_type(text);
  const std::string host = url && !url->host.empty() ? url->host : "github.com";
  (void)check_known_hosts(k_known_hosts, host, url ? url->port : 22, text);
  (void)check_known_hosts(text, "git.example.com", 2222, "key");
  (void)base64_decode(text);
  return 0;
}
