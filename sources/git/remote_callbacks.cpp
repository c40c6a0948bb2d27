#include "sources/git/remote_callbacks.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sources/git/known_hosts.hpp"

namespace flytecd::sources::git {
namespace {

// Overwrites a secret before its memory is released (best effort; the compiler may not elide a
// volatile store).
void wipe(std::string& secret) {
  volatile char* p = secret.data();
  for (size_t i = 0; i < secret.size(); ++i) p[i] = 0;
  secret.clear();
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

int fail(CallbackContext& ctx, ErrorCode code, std::string message, int rc) {
  ctx.failure = std::move(message);
  ctx.failure_code = code;
  git_error_set_str(GIT_ERROR_CALLBACK, ctx.failure.c_str());
  return rc;
}

// Reads the HTTPS password/token now (not at open) so a rotated secret is used on next poll.
bool read_password(const GitAuth& auth, std::string& out, std::string& problem) {
  if (!auth.password_file.empty()) {
    std::ifstream in(auth.password_file, std::ios::binary);
    if (!in) {
      problem = "cannot read password file " + auth.password_file;
      return false;
    }
    std::getline(in, out);
    out = trim(std::move(out));
    if (out.empty()) problem = "password file " + auth.password_file + " is empty";
    return !out.empty();
  }
  if (!auth.password_env.empty()) {
    const char* value = std::getenv(auth.password_env.c_str());
    out = value ? trim(value) : std::string();
    if (out.empty()) problem = "environment variable " + auth.password_env + " is not set";
    return !out.empty();
  }
  problem =
      "the remote requires authentication, but no credentials are configured "
      "(set auth.password_file or auth.password_env)";
  return false;
}

int credentials_cb(git_credential** out, const char* /*url*/, const char* username_from_url,
                   unsigned int allowed, void* payload) {
  auto& ctx = *static_cast<CallbackContext*>(payload);
  const GitAuth& auth = *ctx.auth;
  const bool ssh = ctx.url.transport == Transport::ssh;
  std::string user = username_from_url && *username_from_url ? username_from_url : auth.username;
  if (user.empty()) user = ssh ? "git" : "x-access-token";

  if (ssh && (allowed & GIT_CREDENTIAL_USERNAME) && !(allowed & GIT_CREDENTIAL_SSH_KEY))
    return git_credential_username_new(out, user.c_str());
  // libgit2 asks again after a rejection; a second attempt would only be rejected again.
  if (ctx.secret_attempts++ > 0) {
    ctx.credentials_rejected = true;
    return fail(ctx, ErrorCode::unauthenticated,
                "authentication failed: the remote rejected the configured credentials", GIT_EAUTH);
  }
  if (ssh) {
    if (!(allowed & GIT_CREDENTIAL_SSH_KEY))
      return fail(ctx, ErrorCode::unauthenticated,
                  "the SSH server does not accept public-key authentication", GIT_EAUTH);
    if (auth.ssh_private_key_file.empty())
      return fail(ctx, ErrorCode::unauthenticated,
                  "the SSH server requires authentication; set auth.ssh_private_key_file",
                  GIT_EAUTH);
    std::string pub = auth.ssh_private_key_file + ".pub";
    const bool has_pub = ::access(pub.c_str(), R_OK) == 0;
    std::string passphrase;
    if (!auth.ssh_passphrase_env.empty())
      if (const char* v = std::getenv(auth.ssh_passphrase_env.c_str())) passphrase = v;
    int rc = git_credential_ssh_key_new(out, user.c_str(), has_pub ? pub.c_str() : nullptr,
                                        auth.ssh_private_key_file.c_str(),
                                        passphrase.empty() ? nullptr : passphrase.c_str());
    wipe(passphrase);
    return rc;
  }
  if (!(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT))
    return fail(ctx, ErrorCode::unauthenticated,
                "the remote asks for an authentication method flytecd does not support", GIT_EAUTH);
  std::string secret, problem;
  if (!read_password(auth, secret, problem))
    return fail(ctx, ErrorCode::unauthenticated, problem, GIT_EAUTH);
  int rc = git_credential_userpass_plaintext_new(out, user.c_str(), secret.c_str());
  wipe(secret);
  return rc;
}

std::string base64(const unsigned char* data, size_t len) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < len; i += 3) {
    unsigned v = static_cast<unsigned>(data[i]) << 16;
    if (i + 1 < len) v |= static_cast<unsigned>(data[i + 1]) << 8;
    if (i + 2 < len) v |= data[i + 2];
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    if (i + 1 < len) out += k[(v >> 6) & 63];
    if (i + 2 < len) out += k[v & 63];
  }
  return out;  // unpadded, as ssh-keygen prints fingerprints
}

// libgit2 1.5 checks SSH host keys only through this callback (no ~/.ssh/known_hosts of its
// own), so an ssh:// remote without a known_hosts file is refused rather than trusted.
int check_ssh_host_key(CallbackContext& ctx, const git_cert_hostkey& key) {
  const GitAuth& auth = *ctx.auth;
  const std::string where =
      ctx.url.port == 22 ? ctx.url.host : ctx.url.host + ":" + std::to_string(ctx.url.port);
  if (auth.ssh_known_hosts_file.empty())
    return fail(ctx, ErrorCode::invalid_input,
                "no known_hosts file configured (auth.ssh_known_hosts_file); refusing to trust "
                "the SSH host key of " +
                    where,
                GIT_ECERTIFICATE);
  if (!(key.type & GIT_CERT_SSH_RAW) || key.hostkey == nullptr)
    return fail(ctx, ErrorCode::internal, "libgit2 did not provide the raw SSH host key",
                GIT_ECERTIFICATE);
  std::ifstream in(auth.ssh_known_hosts_file);
  if (!in)
    return fail(ctx, ErrorCode::invalid_input,
                "cannot read known_hosts file " + auth.ssh_known_hosts_file, GIT_ECERTIFICATE);
  std::stringstream text;
  text << in.rdbuf();
  const std::string_view blob(key.hostkey, key.hostkey_len);
  HostKeyVerdict verdict = check_known_hosts(text.str(), ctx.url.host, ctx.url.port, blob);
  std::string presented = ssh_key_type(blob);
  if (key.type & GIT_CERT_SSH_SHA256)
    presented += " SHA256:" + base64(key.hash_sha256, sizeof key.hash_sha256);
  using O = HostKeyVerdict::Outcome;
  switch (verdict.outcome) {
    case O::match:
      return 0;
    case O::revoked:
      return fail(ctx, ErrorCode::unauthenticated,
                  "the SSH host key of " + where + " (" + presented + ") is marked @revoked in " +
                      auth.ssh_known_hosts_file,
                  GIT_ECERTIFICATE);
    case O::mismatch: {
      std::string listed;
      for (const auto& t : verdict.listed_types) listed += (listed.empty() ? "" : ", ") + t;
      return fail(ctx, ErrorCode::unauthenticated,
                  "SSH host key mismatch for " + where + ": the server presented " + presented +
                      ", which is not among the keys listed in " + auth.ssh_known_hosts_file +
                      " (" + listed +
                      "); possible man-in-the-middle, or add all of the host's "
                      "key types (ssh-keyscan)",
                  GIT_ECERTIFICATE);
    }
    case O::unknown_host:
      break;
  }
  return fail(ctx, ErrorCode::unauthenticated,
              "SSH host " + where + " is not listed in " + auth.ssh_known_hosts_file +
                  " (presented " + presented + ")",
              GIT_ECERTIFICATE);
}

int certificate_cb(git_cert* cert, int /*valid*/, const char* /*host*/, void* payload) {
  auto& ctx = *static_cast<CallbackContext*>(payload);
  if (cert->cert_type == GIT_CERT_HOSTKEY_LIBSSH2)
    return check_ssh_host_key(ctx, *reinterpret_cast<const git_cert_hostkey*>(cert));
  return GIT_PASSTHROUGH;  // TLS: keep libgit2's verification against the system CAs
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

git_remote_callbacks make_remote_callbacks(CallbackContext& ctx) {
  git_remote_callbacks callbacks;
  git_remote_init_callbacks(&callbacks, GIT_REMOTE_CALLBACKS_VERSION);
  callbacks.credentials = credentials_cb;
  callbacks.certificate_check = certificate_cb;
  callbacks.payload = &ctx;
  return callbacks;
}

Error map_remote_error(int rc, const CallbackContext& ctx, bool expired, int timeout_seconds,
                       const std::string& url, const std::string& redacted_url) {
  if (expired)
    return make_error(ErrorCode::timeout,
                      "timed out after " + std::to_string(timeout_seconds) + "s");
  if (!ctx.failure.empty()) return make_error(ctx.failure_code, ctx.failure);
  const git_error* last = git_error_last();
  std::string message = last && last->message ? last->message : "unknown libgit2 error";
  const int klass = last ? last->klass : GIT_ERROR_NONE;
  for (size_t at = message.find(url); !url.empty() && at != std::string::npos;
       at = message.find(url, at + redacted_url.size()))
    message.replace(at, url.size(), redacted_url);
  if (message.size() > 400) message = message.substr(0, 400) + "…";

  if (rc == GIT_EAUTH || contains(message, "status code: 401"))
    return make_error(ErrorCode::unauthenticated,
                      "authentication failed: the remote requires valid credentials");
  if (rc == GIT_ECERTIFICATE || klass == GIT_ERROR_SSL)
    return make_error(ErrorCode::unauthenticated, "server certificate rejected: " + message);
  if (contains(message, "status code: 403"))
    return make_error(ErrorCode::permission_denied, "access denied: " + message);
  if (rc == GIT_ENOTFOUND || contains(message, "status code: 404") ||
      contains(message, "not found") || contains(message, "not exported") ||
      contains(message, "could not find repository") ||
      contains(message, "does not appear to be a git repository"))
    return make_error(ErrorCode::not_found, message);
  // Everything else on a network operation (refused, reset, DNS, 5xx, protocol errors) is worth
  // retrying with backoff.
  return make_error(ErrorCode::unavailable, message);
}

}  // namespace flytecd::sources::git
