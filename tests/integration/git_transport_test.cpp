// The Git source over real transports: `git daemon` (git://), `git http-backend` behind a loopback
// HTTP server with Basic auth, HTTPS with a token, SSH against a loopback sshd with known_hosts,
// timeouts of unreachable or silent remotes, and SSH commit signatures made by `git commit -S`
// with keys from ssh-keygen.

#include "sources/git/git_source.hpp"

#include <git2.h>
#include <pwd.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "sources/git/known_hosts.hpp"
#include "sources/git/url.hpp"
#include "tests/integration/git/git_source_fixture.hpp"
#include "tests/support/tools.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fg = flytecd::sources::git;
using flytecd::ErrorCode;
using namespace git_test;
using Clock = std::chrono::steady_clock;

TEST_CASE("git: git daemon over git:// on loopback", "[git]") {
  Fixture fx;
  const std::string first = seed(fx);
  const int port = git_test::free_port();
  const std::string exec_path = git(fx.home, fx.work, {"--exec-path"});
  git_test::Background daemon(
      {exec_path + "/git-daemon", "--reuseaddr", "--base-path=" + fx.tmp.str(), "--export-all",
       "--listen=127.0.0.1", "--port=" + std::to_string(port), fx.tmp.str()},
      git_test::tool_env(fx.home), fx.tmp.str("daemon.log"));
  REQUIRE(daemon.started());
  INFO(git_test::slurp(fx.tmp.path() / "daemon.log"));
  REQUIRE(git_test::wait_for_port(port));

  const std::string url = "git://127.0.0.1:" + std::to_string(port) + "/remote.git";
  auto options = fx.options(url);
  options.subpath = "deploy";
  auto source = open_ok(options);
  CHECK(head_ok(*source) == first);
  CHECK(sync_ok(*source).revision == first);

  fx.write("deploy/sub/b.yml", "b: 3\n");
  const std::string second = fx.commit("over git://");
  fx.push();
  flytecd::sources::Snapshot snap = sync_ok(*source);
  CHECK(snap.revision == second);
  CHECK(snap.files[3].bytes == "b: 3\n");

  SECTION("a repository the daemon does not serve is not_found") {
    auto missing = open_ok(fx.options("git://127.0.0.1:" + std::to_string(port) + "/nope.git"));
    auto r = missing->head();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::not_found);
  }
}

TEST_CASE("git: git http-backend with HTTP Basic auth read from a file or the environment",
          "[git]") {
  Fixture fx;
  const std::string first = seed(fx);
  const std::string password = "Pa55-http-SECRET-1";
  const std::string wrong = "Wr0ng-http-SECRET-2";
  git_test::GitHttpServer server(fx.tmp.str(), fx.home, "flytecd", password);
  REQUIRE(server.running());
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/remote.git";
  spit(fx.tmp.path() / "secrets/password", password + "\n");
  spit(fx.tmp.path() / "secrets/wrong", wrong + "\n");

  auto options = fx.options(url);
  options.auth.username = "flytecd";
  options.auth.password_file = fx.tmp.str("secrets/password");

  SECTION("the right password syncs and follows new commits") {
    auto source = open_ok(options);
    CHECK(head_ok(*source) == first);
    CHECK(sync_ok(*source).revision == first);
    fx.write("deploy/a.yaml", "a: http\n");
    const std::string second = fx.commit("over http");
    fx.push();
    CHECK(sync_ok(*source).revision == second);
    CHECK(server.authorized_requests() > 0);
  }
  SECTION("the password can come from an environment variable") {
    ::setenv("FLYTECD_GIT_TEST_PASSWORD", password.c_str(), 1);
    options.auth.password_file.clear();
    options.auth.password_env = "FLYTECD_GIT_TEST_PASSWORD";
    CHECK(sync_ok(*open_ok(options)).revision == first);
    ::unsetenv("FLYTECD_GIT_TEST_PASSWORD");
  }
  SECTION("a wrong password is unauthenticated and no secret is in the message") {
    options.auth.password_file = fx.tmp.str("secrets/wrong");
    auto source = open_ok(options);
    auto head = source->head();
    REQUIRE_FALSE(head);
    CHECK(head.error().code == ErrorCode::unauthenticated);
    CHECK_THAT(head.error().message, Catch::Contains("rejected the configured credentials"));
    CHECK_FALSE(head.error().retryable());
    CHECK(head.error().message.find(wrong) == std::string::npos);
    CHECK(head.error().message.find(password) == std::string::npos);
    CHECK(head.error().message.find("SECRET") == std::string::npos);
    auto synced = source->sync();
    REQUIRE_FALSE(synced);
    CHECK(synced.error().code == ErrorCode::unauthenticated);
    CHECK(synced.error().message.find("SECRET") == std::string::npos);
    CHECK(server.rejected_requests() > 0);
  }
  SECTION("no configured credentials is unauthenticated, with a hint") {
    options.auth = {};
    auto head = open_ok(options)->head();
    REQUIRE_FALSE(head);
    CHECK(head.error().code == ErrorCode::unauthenticated);
    CHECK_THAT(head.error().message, Catch::Contains("password_file"));
  }
  SECTION("a password embedded in the URL is refused at open") {
    auto embedded = fx.options("http://flytecd:" + password +
                               "@127.0.0.1:" + std::to_string(server.port()) + "/remote.git");
    auto source = fg::GitSource::open(embedded);
    REQUIRE_FALSE(source);
    CHECK(source.error().code == ErrorCode::invalid_input);
    CHECK(source.error().message.find(password) == std::string::npos);
  }
}

TEST_CASE("git: https with a token, and an untrusted certificate refused", "[git]") {
  FLYTECD_REQUIRE_TOOL(git_test::have_tool("openssl"),
                       "the openssl CLI is not installed (Debian package openssl)");
  Fixture fx;
  const std::string first = seed(fx);
  // A self-signed certificate for "localhost" (mbedTLS matches DNS names, not IP SANs).
  auto made =
      git_test::run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                     "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout",
                     fx.tmp.str("tls.key"), "-out", fx.tmp.str("tls.crt")},
                    fx.home);
  REQUIRE(made.code == 0);
  const std::string token = "ghp_TOKEN-https-SECRET";
  git_test::GitHttpServer server(fx.tmp.str(), fx.home, "x-access-token", token,
                                 fx.tmp.str("tls.crt"), fx.tmp.str("tls.key"));
  REQUIRE(server.running());
  spit(fx.tmp.path() / "token", token);
  auto options = fx.options("https://localhost:" + std::to_string(server.port()) + "/remote.git");
  options.auth.password_file = fx.tmp.str("token");  // username defaults to x-access-token

  SECTION("a certificate no trusted CA signed is unauthenticated, not retried") {
    auto head = open_ok(options)->head();
    REQUIRE_FALSE(head);
    CHECK(head.error().code == ErrorCode::unauthenticated);
    CHECK_THAT(head.error().message, Catch::Contains("certificate"));
    CHECK(server.authorized_requests() == 0);
  }
  SECTION("with the CA trusted, the token authenticates") {
    // Process-wide libgit2 setting: trust only the test CA, then restore Debian's bundle.
    REQUIRE(git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, fx.tmp.str("tls.crt").c_str(),
                             nullptr) == 0);
    auto source = open_ok(options);
    auto head = source->head();
    auto synced = source->sync();
    git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, "/etc/ssl/certs/ca-certificates.crt", nullptr);
    INFO((head ? std::string() : head.error().message));
    REQUIRE(head);
    CHECK(*head == first);
    REQUIRE(synced);
    CHECK(synced->revision == first);
    CHECK(server.authorized_requests() > 0);
  }
}

TEST_CASE("git: an unreachable or silent remote fails within the timeout", "[git]") {
  Fixture fx;
  SECTION("closed port: unavailable at once") {
    const int port = git_test::free_port();
    for (const std::string scheme : {"git", "http"}) {
      auto options = fx.options(scheme + "://127.0.0.1:" + std::to_string(port) + "/remote.git");
      auto source = open_ok(options);
      auto start = Clock::now();
      auto head = source->head();
      REQUIRE_FALSE(head);
      CHECK(head.error().code == ErrorCode::unavailable);
      CHECK_THAT(head.error().message, Catch::Contains("failed to connect to 127.0.0.1"));
      CHECK(head.error().retryable());
      CHECK(seconds_since(start) < 5.0);
      auto synced = source->sync();
      REQUIRE_FALSE(synced);
      CHECK(synced.error().code == ErrorCode::unavailable);
    }
  }
  SECTION("a server that accepts and never answers: timeout after timeout_seconds") {
    git_test::SilentServer silent;
    for (const std::string scheme : {"git", "http"}) {
      auto options =
          fx.options(scheme + "://127.0.0.1:" + std::to_string(silent.port()) + "/remote.git");
      options.timeout_seconds = 1;
      auto source = open_ok(options);
      auto start = Clock::now();
      auto head = source->head();
      REQUIRE_FALSE(head);
      CHECK(head.error().code == ErrorCode::timeout);
      CHECK_THAT(head.error().message, Catch::Contains("timed out after 1s"));
      CHECK(head.error().retryable());
      CHECK(seconds_since(start) >= 0.9);
      CHECK(seconds_since(start) < 5.0);
    }
  }
}

TEST_CASE("git: ssh remotes check configuration and host keys and are bounded", "[git]") {
  Fixture fx;
  auto options = fx.options("ssh://git@127.0.0.1:1/remote.git");
  SECTION("an ssh remote without known_hosts is refused at open") {
    spit(fx.tmp.path() / "id", "not a key\n");
    options.auth.ssh_private_key_file = fx.tmp.str("id");
    auto source = fg::GitSource::open(options);
    REQUIRE_FALSE(source);
    CHECK(source.error().code == ErrorCode::invalid_input);
  }
  SECTION("a silent ssh server times out (libssh2 runs on flytecd's bounded socket)") {
    git_test::SilentServer silent;
    spit(fx.tmp.path() / "id", "not a key\n");
    spit(fx.tmp.path() / "known_hosts", "");
    auto ssh = fx.options("ssh://git@127.0.0.1:" + std::to_string(silent.port()) + "/remote.git");
    ssh.auth.ssh_private_key_file = fx.tmp.str("id");
    ssh.auth.ssh_known_hosts_file = fx.tmp.str("known_hosts");
    ssh.timeout_seconds = 1;
    auto source = fg::GitSource::open(ssh);
    REQUIRE(source);
    auto start = Clock::now();
    auto head = (*source)->head();
    REQUIRE_FALSE(head);
    INFO(head.error().message);
    CHECK(head.error().code == ErrorCode::timeout);
    CHECK(seconds_since(start) >= 0.9);
    CHECK(seconds_since(start) < 5.0);
  }
}

TEST_CASE("git: ssh:// with a private key against a loopback sshd, host key from known_hosts",
          "[git]") {
  const std::string sshd = "/usr/sbin/sshd";
  FLYTECD_REQUIRE_TOOL(
      ::access(sshd.c_str(), X_OK) == 0 && git_test::have_tool("ssh-keygen"),
      "sshd or ssh-keygen is not installed (Debian: openssh-server, openssh-client)");
  // sshd refuses to start without its privilege separation directory (systemd creates it).
  std::error_code ec;
  if (!git_test::stdfs::exists("/run/sshd") && ::geteuid() == 0)
    git_test::stdfs::create_directories("/run/sshd", ec);
  FLYTECD_REQUIRE_TOOL(
      git_test::stdfs::exists("/run/sshd"),
      "/run/sshd (sshd's privilege separation directory) is missing and cannot be created");
  Fixture fx;
  const std::string first = seed(fx);
  auto keygen = [&](const std::string& name) {
    auto r = git_test::run(
        {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", fx.tmp.str(name)},
        fx.home);
    REQUIRE(r.code == 0);
    std::string pub = git_test::slurp(fx.tmp.path() / (name + ".pub"));
    return pub.substr(0, pub.rfind(' '));  // "ssh-ed25519 AAAA…" without the comment
  };
  const std::string host_key = keygen("host_key");
  const std::string other_host_key = keygen("other_host_key");
  const std::string client_key = keygen("client_key");
  keygen("stranger_key");
  spit(fx.tmp.path() / "authorized_keys", client_key + "\n");
  const int port = git_test::free_port();
  spit(fx.tmp.path() / "sshd_config",
       "Port " + std::to_string(port) + "\nListenAddress 127.0.0.1\nHostKey " +
           fx.tmp.str("host_key") + "\nAuthorizedKeysFile " + fx.tmp.str("authorized_keys") +
           "\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
           "PubkeyAuthentication yes\nUsePAM no\nPermitRootLogin prohibit-password\nPidFile " +
           fx.tmp.str("sshd.pid") + "\nLogLevel VERBOSE\n");
  git_test::Background server({sshd, "-D", "-e", "-f", fx.tmp.str("sshd_config")},
                              git_test::tool_env(fx.home), fx.tmp.str("sshd.log"));
  REQUIRE(server.started());
  REQUIRE(git_test::wait_for_port(port));
  INFO(git_test::slurp(fx.tmp.path() / "sshd.log"));

  const passwd* me = ::getpwuid(::geteuid());
  REQUIRE(me != nullptr);
  const std::string where = "[127.0.0.1]:" + std::to_string(port);
  auto options = fx.options("ssh://" + std::string(me->pw_name) +
                            "@127.0.0.1:" + std::to_string(port) + fx.remote);
  options.auth.ssh_private_key_file = fx.tmp.str("client_key");
  options.auth.ssh_known_hosts_file = fx.tmp.str("known_hosts");

  SECTION("a listed host key and an authorized client key sync and follow new commits") {
    spit(fx.tmp.path() / "known_hosts", "# test\n" + where + " " + host_key + "\n");
    auto source = open_ok(options);
    CHECK(head_ok(*source) == first);
    CHECK(sync_ok(*source).revision == first);
    fx.write("deploy/a.yaml", "a: ssh\n");
    const std::string second = fx.commit("over ssh");
    fx.push();
    CHECK(sync_ok(*source).revision == second);
  }
  SECTION("a different host key for the host is refused as a mismatch") {
    spit(fx.tmp.path() / "known_hosts", where + " " + other_host_key + "\n");
    auto head = open_ok(options)->head();
    REQUIRE_FALSE(head);
    CHECK(head.error().code == ErrorCode::unauthenticated);
    CHECK_THAT(head.error().message, Catch::Contains("host key mismatch"));
  }
  SECTION("a host missing from known_hosts is refused") {
    spit(fx.tmp.path() / "known_hosts", "[127.0.0.1]:1 " + host_key + "\n");
    auto head = open_ok(options)->head();
    REQUIRE_FALSE(head);
    CHECK(head.error().code == ErrorCode::unauthenticated);
    CHECK_THAT(head.error().message, Catch::Contains("is not listed in"));
  }
  SECTION("a client key the server does not authorize is unauthenticated") {
    spit(fx.tmp.path() / "known_hosts", where + " " + host_key + "\n");
    options.auth.ssh_private_key_file = fx.tmp.str("stranger_key");
    auto head = open_ok(options)->head();
    REQUIRE_FALSE(head);
    CHECK(head.error().code == ErrorCode::unauthenticated);
    CHECK_THAT(head.error().message, Catch::Contains("rejected the configured credentials"));
    CHECK_FALSE(head.error().retryable());
  }
}

TEST_CASE("git: SSH commit signatures are verified against allowed_signers", "[git]") {
  FLYTECD_REQUIRE_TOOL(git_test::have_tool("ssh-keygen"),
                       "ssh-keygen is not installed (Debian package openssh-client)");
  Fixture fx;
  auto keygen = [&](const std::string& name) {
    auto r = git_test::run(
        {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", fx.tmp.str(name)},
        fx.home);
    REQUIRE(r.code == 0);
    return git_test::slurp(fx.tmp.path() / (name + ".pub"));
  };
  const std::string trusted_pub = keygen("trusted");
  keygen("other");
  spit(fx.tmp.path() / "allowed_signers", "signer@example.com " + trusted_pub);
  auto signing = [&](const std::string& key) -> std::vector<std::string> {
    return {"gpg.format=ssh", "user.signingkey=" + fx.tmp.str(key + ".pub"), "commit.gpgsign=true",
            "user.email=signer@example.com"};
  };

  fx.write("deploy/a.yaml", "signed: 1\n");
  const std::string good = fx.commit("signed by a trusted key", signing("trusted"));
  fx.push();
  auto options = fx.options("file://" + fx.remote);
  options.signatures.mode = fg::SignaturePolicy::Mode::ssh;
  options.signatures.allowed_signers_file = fx.tmp.str("allowed_signers");
  auto source = open_ok(options);
  CHECK(sync_ok(*source).revision == good);

  SECTION("an unsigned head is refused, naming the commit") {
    fx.write("deploy/a.yaml", "unsigned: 1\n");
    const std::string bad = fx.commit("unsigned", {"user.email=signer@example.com"});
    fx.push();
    auto r = source->sync();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::invalid_input);
    CHECK_THAT(r.error().message, Catch::Contains(bad) && Catch::Contains("not signed"));
  }
  SECTION("a head signed by a key not in allowed_signers is refused") {
    fx.write("deploy/a.yaml", "other: 1\n");
    const std::string bad = fx.commit("signed by another key", signing("other"));
    fx.push();
    auto r = source->sync();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::invalid_input);
    CHECK_THAT(r.error().message, Catch::Contains(bad) && Catch::Contains("not valid"));
    // Still refused on the next poll, although nothing new is fetched.
    CHECK_FALSE(source->sync());
  }
  SECTION("a trusted key signing for a committer it is not allowed for is refused") {
    fx.write("deploy/a.yaml", "impostor: 1\n");
    auto config = signing("trusted");
    config.back() = "user.email=someone-else@example.com";
    fx.commit("trusted key, other committer", config);
    fx.push();
    auto r = source->sync();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::invalid_input);
  }
  SECTION("a new trusted head is accepted") {
    fx.write("deploy/a.yaml", "signed: 2\n");
    const std::string next = fx.commit("signed again", signing("trusted"));
    fx.push();
    CHECK(sync_ok(*source).revision == next);
  }
}

TEST_CASE("git: known_hosts matching", "[git]") {
  // An SSH wire-format blob: string "ssh-ed25519", string <32 key bytes>.
  std::string blob = std::string("\0\0\0\x0bssh-ed25519\0\0\0\x20", 19) + std::string(32, 'k');
  std::string other = std::string("\0\0\0\x0bssh-ed25519\0\0\0\x20", 19) + std::string(32, 'o');
  auto b64 = [](const std::string& s) {
    static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < s.size(); i += 3) {
      unsigned v = static_cast<unsigned char>(s[i]) << 16;
      if (i + 1 < s.size()) v |= static_cast<unsigned>(static_cast<unsigned char>(s[i + 1])) << 8;
      if (i + 2 < s.size()) v |= static_cast<unsigned char>(s[i + 2]);
      out += k[(v >> 18) & 63];
      out += k[(v >> 12) & 63];
      out += i + 1 < s.size() ? k[(v >> 6) & 63] : '=';
      out += i + 2 < s.size() ? k[v & 63] : '=';
    }
    return out;
  };
  REQUIRE(fg::base64_decode(b64(blob)) == blob);
  CHECK(fg::ssh_key_type(blob) == "ssh-ed25519");
  const std::string key = "ssh-ed25519 " + b64(blob);
  using O = fg::HostKeyVerdict::Outcome;
  CHECK(
      fg::check_known_hosts("git.example.com " + key + "\n", "git.example.com", 22, blob).outcome ==
      O::match);
  CHECK(fg::check_known_hosts("Git.Example.com,10.0.0.1 " + key, "git.example.com", 22, blob)
            .outcome == O::match);
  CHECK(fg::check_known_hosts("git.example.com " + key, "git.example.com", 2222, blob).outcome ==
        O::unknown_host);
  CHECK(fg::check_known_hosts("[git.example.com]:2222 " + key, "git.example.com", 2222, blob)
            .outcome == O::match);
  CHECK(fg::check_known_hosts("*.example.com " + key, "git.example.com", 22, blob).outcome ==
        O::match);
  CHECK(fg::check_known_hosts("*.example.com,!git.example.com " + key, "git.example.com", 22, blob)
            .outcome == O::unknown_host);
  auto mismatch = fg::check_known_hosts("git.example.com " + key, "git.example.com", 22, other);
  CHECK(mismatch.outcome == O::mismatch);
  CHECK(mismatch.listed_types == std::vector<std::string>{"ssh-ed25519"});
  CHECK(fg::check_known_hosts("@revoked * " + key + "\ngit.example.com " + key, "git.example.com",
                              22, blob)
            .outcome == O::revoked);
  CHECK(fg::check_known_hosts("@cert-authority * " + key, "git.example.com", 22, blob).outcome ==
        O::unknown_host);
  CHECK(fg::check_known_hosts("# comment\n\n", "git.example.com", 22, blob).outcome ==
        O::unknown_host);
  // A hashed entry, as `ssh-keygen -H` writes it: |1|base64(salt)|base64(HMAC-SHA1(salt, host)).
  if (git_test::have_tool("ssh-keygen")) {
    TempDir tmp;
    spit(tmp.path() / "kh", "git.example.com " + key + "\n[git.example.com]:2222 " + key + "\n");
    REQUIRE(git_test::run({"ssh-keygen", "-H", "-f", tmp.str("kh")}, tmp.str()).code == 0);
    const std::string hashed = git_test::slurp(tmp.path() / "kh");
    REQUIRE(hashed.find("|1|") != std::string::npos);
    REQUIRE(hashed.find("git.example.com") == std::string::npos);
    CHECK(fg::check_known_hosts(hashed, "git.example.com", 22, blob).outcome == O::match);
    CHECK(fg::check_known_hosts(hashed, "git.example.com", 2222, blob).outcome == O::match);
    CHECK(fg::check_known_hosts(hashed, "git.example.com", 22, other).outcome == O::mismatch);
    CHECK(fg::check_known_hosts(hashed, "evil.example.com", 22, blob).outcome == O::unknown_host);
  }
}

}  // namespace FLYTECD_UNITY_ID
