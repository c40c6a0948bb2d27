// The OCI/HTTPS package fetcher against Debian's docker-registry on loopback: plain, htpasswd
// Basic, TLS with a self-signed CA, bearer tokens (tests/oci/token_server.py), the redirect
// middleware pointing at another host, a tampered blob, a missing tag, injected 429/5xx, an OCI
// index and the pinned-digest cache. Every registry is started and stopped by the test.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <future>
#include <mutex>

#include "daemon/common/json_dump.hpp"
#include "sources/oci/fetcher.hpp"
#include "tests/oci/oci_test_support.hpp"
#include "tests/support/tools.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

namespace oci = flytecd::sources::oci;
using flytecd::ErrorCode;
using flytecd::sources::PackageRef;
using oci_test::Pusher;
using oci_test::Registry;
using oci_test::RegistryOptions;

bool have_registry() { return !oci_test::registry_binary().empty(); }

RegistryOptions mode(bool basic, bool tls, bool token, std::string redirect_base = "") {
  RegistryOptions o;
  o.basic = basic;
  o.tls = tls;
  o.token = token;
  o.redirect_base = std::move(redirect_base);
  return o;
}

PackageRef oci_ref(const std::string& host, const std::string& repo, const std::string& tag,
                   const std::string& digest = "") {
  PackageRef r;
  r.kind = PackageRef::Kind::oci;
  r.registry = host;
  r.repository = repo;
  r.tag = tag;
  r.digest = digest;
  return r;
}

struct Env {
  oci_test::TempDir tmp;
  oci::FetchOptions options(const std::string& plain_host = "") {
    oci::FetchOptions o;
    o.cache_dir = tmp.str("cache");
    o.docker_config = tmp.str("no-such-config.json");
    if (!plain_host.empty()) o.plain_http_registries.push_back(plain_host);
    o.total_timeout = std::chrono::milliseconds(30000);
    return o;
  }
};

// Keeps the developer's own credentials out of the tests.
struct IsolatedHome {
  std::string saved_home, saved_docker;
  explicit IsolatedHome(const std::string& home) {
    if (const char* h = std::getenv("HOME")) saved_home = h;
    if (const char* d = std::getenv("DOCKER_CONFIG")) saved_docker = d;
    ::setenv("HOME", home.c_str(), 1);
    ::unsetenv("DOCKER_CONFIG");
    ::unsetenv("REGISTRY_AUTH_FILE");
  }
  ~IsolatedHome() {
    ::setenv("HOME", saved_home.c_str(), 1);
    if (!saved_docker.empty()) ::setenv("DOCKER_CONFIG", saved_docker.c_str(), 1);
  }
};

template <typename T>
T ok(flytecd::Result<T> r) {
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r);
  return std::move(r).value();
}

}  // namespace

TEST_CASE(
    "oci: plain registry: tag and digest pulls verify the fixture, a cached pinned digest "
    "needs no registry at all",
    "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg({});
  const std::string pkg = oci_test::fixture_package();
  auto pushed = Pusher(reg).push_package("flyte/core", "v1", pkg);

  oci::PackageFetcher fetcher(env.options(reg.host()));
  auto resolved = ok(fetcher.resolve(oci_ref(reg.host(), "flyte/core", "v1")));
  CHECK(resolved.manifest_digest == pushed.manifest_digest);
  CHECK(resolved.layer_digest == pushed.layer_digest);
  CHECK(resolved.layer_size == pkg.size());
  CHECK(resolved.media_type == "application/vnd.oci.image.layer.v1.tar+gzip");

  auto f = ok(fetcher.fetch(oci_ref(reg.host(), "flyte/core", "v1")));
  CHECK_FALSE(f.from_cache);
  CHECK(f.digest == pushed.layer_digest);
  CHECK(f.manifest_digest == pushed.manifest_digest);
  CHECK(f.size == pkg.size());
  CHECK(oci_test::slurp(f.path) == pkg);
  CHECK(f.path == env.tmp.path() / "cache/blobs/sha256" / pushed.layer_digest.substr(7));

  // By digest: the manifest is in the cache already, so is the layer.
  const auto pinned = oci_ref(reg.host(), "flyte/core", "", pushed.manifest_digest);
  auto again = ok(fetcher.fetch(pinned));
  CHECK(again.from_cache);

  reg.stop();
  const uint64_t before = fetcher.requests_sent();
  auto offline = ok(fetcher.fetch(pinned));
  CHECK(offline.from_cache);
  CHECK(oci_test::slurp(offline.path) == pkg);
  CHECK(ok(fetcher.resolve(pinned)).layer_digest == pushed.layer_digest);
  CHECK(fetcher.requests_sent() == before);  // zero requests
  // A fresh fetcher (daemon restart) over the same cache needs no network either.
  oci::PackageFetcher restarted(env.options(reg.host()));
  CHECK(ok(restarted.fetch(pinned)).from_cache);
  CHECK(restarted.requests_sent() == 0);
  // A tag must be looked up: with the registry gone that is a retryable error.
  auto tag = fetcher.fetch(oci_ref(reg.host(), "flyte/core", "v1"));
  REQUIRE_FALSE(tag);
  CHECK(tag.error().retryable());
}

TEST_CASE("oci: a missing tag or repository is not_found, a path reference is invalid_input",
          "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg({});
  Pusher(reg).push_package("flyte/core", "v1", "pkg");
  oci::PackageFetcher fetcher(env.options(reg.host()));
  auto tag = fetcher.fetch(oci_ref(reg.host(), "flyte/core", "does-not-exist"));
  REQUIRE_FALSE(tag);
  CHECK(tag.error().code == ErrorCode::not_found);
  CHECK(tag.error().message.find("flyte/core:does-not-exist") != std::string::npos);
  CHECK(tag.error().message.find("MANIFEST_UNKNOWN") != std::string::npos);
  auto repo = fetcher.resolve(oci_ref(reg.host(), "flyte/nope", "v1"));
  REQUIRE_FALSE(repo);
  CHECK(repo.error().code == ErrorCode::not_found);
  PackageRef path;
  path.kind = PackageRef::Kind::path;
  path.path = "packages/a.tgz";
  CHECK(fetcher.fetch(path).error().code == ErrorCode::invalid_input);
}

TEST_CASE(
    "oci: Basic auth with credentials from docker config.json, none or wrong ones are "
    "unauthenticated without leaking them",
    "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg(mode(true, false, false));
  const std::string pkg = oci_test::fixture_package();
  auto pushed = Pusher(reg, true).push_package("flyte/core", "v1", pkg);

  {
    oci::PackageFetcher anonymous(env.options(reg.host()));
    auto r = anonymous.fetch(oci_ref(reg.host(), "flyte/core", "v1"));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::unauthenticated);
    CHECK(r.error().message.find("FLYTECD_REGISTRY_AUTH_127_0_0_1_") != std::string::npos);
  }
  {
    auto o = env.options(reg.host());
    o.docker_config = env.tmp.str("wrong.json");
    oci_test::spit(o.docker_config, R"({"auths":{")" + reg.host() + R"(":{"auth":")" +
                                        oci::base64_encode("flyte:wrong-secret-value") + R"("}}})");
    oci::PackageFetcher wrong(o);
    auto r = wrong.fetch(oci_ref(reg.host(), "flyte/core", "v1"));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::unauthenticated);
    CHECK(r.error().message.find("wrong.json") != std::string::npos);
    CHECK(r.error().message.find("wrong-secret-value") == std::string::npos);
  }
  auto o = env.options(reg.host());
  o.docker_config = env.tmp.str("config.json");
  oci_test::spit(o.docker_config, R"({"auths":{"http://)" + reg.host() +
                                      R"(/v2/":{"username":"flyte","password":"flytepass"}}})");
  oci::PackageFetcher fetcher(o);
  auto f = ok(fetcher.fetch(oci_ref(reg.host(), "flyte/core", "v1")));
  CHECK(f.digest == pushed.layer_digest);
  CHECK(oci_test::slurp(f.path) == pkg);
}

TEST_CASE(
    "oci: TLS with a self-signed CA given as ca_file, Basic credentials from the "
    "environment, without the CA the error names TLS",
    "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg(mode(true, true, false));
  const std::string pkg = oci_test::fixture_package();
  auto pushed = Pusher(reg, true).push_package("flyte/core", "v1", pkg);
  const std::string var = oci::registry_env_var(reg.host());
  ::setenv(var.c_str(), "flyte:flytepass", 1);

  {
    auto o = env.options();
    o.max_attempts = 1;
    oci::PackageFetcher no_ca(o);
    auto r = no_ca.fetch(oci_ref(reg.host(), "flyte/core", "v1"));
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("TLS") != std::string::npos);
  }
  auto o = env.options();
  o.ca_file = reg.ca_file();
  oci::PackageFetcher fetcher(o);
  auto f = fetcher.fetch(oci_ref(reg.host(), "flyte/core", "v1"));
  ::unsetenv(var.c_str());
  REQUIRE(f);
  CHECK(f->digest == pushed.layer_digest);
  CHECK(oci_test::slurp(f->path) == pkg);
}

TEST_CASE(
    "oci: bearer tokens from the challenge's realm are cached per scope, anonymous pull "
    "tokens work, rejected credentials are unauthenticated",
    "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg(mode(false, false, true));
  const std::string pkg = oci_test::fixture_package();
  auto pushed = Pusher(reg, true, true).push_package("flyte/core", "v1", pkg);
  Pusher(reg, true, true).push_package("flyte/other", "v1", "other package");
  const int after_push = reg.token_requests();

  auto o = env.options(reg.host());
  o.docker_config = env.tmp.str("config.json");
  oci_test::spit(o.docker_config, R"({"auths":{")" + reg.host() + R"(":{"auth":")" +
                                      oci::base64_encode("flyte:flytepass") + R"("}}})");
  oci::PackageFetcher fetcher(o);
  auto f = ok(fetcher.fetch(oci_ref(reg.host(), "flyte/core", "v1")));
  CHECK(oci_test::slurp(f.path) == pkg);
  CHECK(reg.token_requests() == after_push + 1);
  ok(fetcher.resolve(oci_ref(reg.host(), "flyte/core", "v1")));
  ok(fetcher.fetch(oci_ref(reg.host(), "flyte/core", "v1")));
  CHECK(reg.token_requests() == after_push + 1);  // cached for repository:flyte/core:pull
  ok(fetcher.fetch(oci_ref(reg.host(), "flyte/other", "v1")));
  CHECK(reg.token_requests() == after_push + 2);  // another scope, another token

  oci::PackageFetcher anonymous(env.options(reg.host()));
  CHECK(ok(anonymous.fetch(oci_ref(reg.host(), "flyte/core", "v1"))).digest == pushed.layer_digest);

  auto bad = env.options(reg.host());
  bad.docker_config = env.tmp.str("bad.json");
  oci_test::spit(bad.docker_config, R"({"auths":{")" + reg.host() + R"(":{"auth":")" +
                                        oci::base64_encode("flyte:nope-secret") + R"("}}})");
  oci::PackageFetcher wrong(bad);
  auto r = wrong.fetch(oci_ref(reg.host(), "flyte/core", "v1"));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::unauthenticated);
  CHECK(r.error().message.find("nope-secret") == std::string::npos);
}

// Issue 27 §2: the token cache was shared by every registry and keyed by realm|service|scope, so
// registry B (no credentials) naming registry A's realm and scope was sent A's bearer token.
TEST_CASE(
    "oci: registry B naming registry A's token realm and scope never receives A's token "
    "(tokens are kept per registry and identity)",
    "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry a(mode(false, false, true));
  Pusher(a, true, true).push_package("flyte/core", "v1", oci_test::fixture_package());
  // B: a stand-in registry that names A's realm, service and scope in its challenge and records
  // the Authorization header of every request it receives.
  oci_test::Server b;
  std::mutex mu;
  std::vector<std::string> at_b;
  b.http().Get(".*", [&](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> g(mu);
      at_b.push_back(req.get_header_value("Authorization"));
    }
    if (req.has_header("Authorization")) {
      res.status = 404;
      res.set_content(R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"stand-in"}]})",
                      "application/json");
      return;
    }
    res.status = 401;
    res.set_header("WWW-Authenticate",
                   "Bearer realm=\"http://127.0.0.1:" + std::to_string(a.token_port()) +
                       "/token\",service=\"flyte-test-registry\","
                       "scope=\"repository:flyte/core:pull\"");
  });
  b.run();

  auto o = env.options(a.host());
  o.plain_http_registries.push_back(b.host());
  o.docker_config = env.tmp.str("config.json");  // credentials for A only
  oci_test::spit(o.docker_config, R"({"auths":{")" + a.host() + R"(":{"auth":")" +
                                      oci::base64_encode("flyte:flytepass") + R"("}}})");
  oci::PackageFetcher fetcher(o);
  // B first (its client learns it speaks Bearer), then A (A's token, user flyte, is cached), then
  // B again, as consecutive passes do: B asks the cache for realm, service and scope.
  auto first_b = fetcher.fetch(oci_ref(b.host(), "flyte/core", "v1"));
  REQUIRE_FALSE(first_b);
  CHECK(first_b.error().code == ErrorCode::not_found);
  ok(fetcher.fetch(oci_ref(a.host(), "flyte/core", "v1")));
  const int before = a.token_requests();
  auto from_b = fetcher.fetch(oci_ref(b.host(), "flyte/core", "v1"));
  REQUIRE_FALSE(from_b);
  CHECK(from_b.error().code == ErrorCode::not_found);
  CHECK(a.token_requests() == before);  // B's own token, cached for B
  ok(fetcher.fetch(oci_ref(a.host(), "flyte/core", "v1")));
  CHECK(a.token_requests() == before);  // and A's own, cached for A

  std::lock_guard<std::mutex> g(mu);
  std::vector<std::string> bearer;
  for (const auto& h : at_b)
    if (h.rfind("Bearer ", 0) == 0) bearer.push_back(h.substr(7));
  REQUIRE_FALSE(bearer.empty());
  for (const auto& token : bearer) {
    // The JWT's subject says whose token it is: A's credentials give "flyte", anonymous "".
    const auto first = token.find('.'), second = token.find('.', first + 1);
    REQUIRE(second != std::string::npos);
    std::string payload = token.substr(first + 1, second - first - 1);
    std::replace(payload.begin(), payload.end(), '-', '+');
    std::replace(payload.begin(), payload.end(), '_', '/');
    auto json = oci::base64_decode(payload);
    REQUIRE(json);
    auto claims = nlohmann::json::parse(*json);
    INFO(flytecd::dump_json(claims));
    CHECK(claims.value("sub", "?") != oci_test::k_user);
    CHECK(claims.value("sub", "?").empty());
  }
}

TEST_CASE("oci: a blob redirect to another host is followed without the registry's credentials",
          "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  // "Object storage" on another host name (localhost, not 127.0.0.1) and port.
  oci_test::StorageServer storage;
  Registry reg(
      {.basic = true, .redirect_base = "http://localhost:" + std::to_string(storage.port()) + "/"});
  storage.set_root(reg.data_dir());
  const std::string pkg = oci_test::fixture_package();
  auto pushed = Pusher(reg, true).push_package("flyte/core", "v1", pkg);

  auto o = env.options(reg.host());
  o.docker_config = env.tmp.str("config.json");
  oci_test::spit(o.docker_config, R"({"auths":{")" + reg.host() + R"(":{"auth":")" +
                                      oci::base64_encode("flyte:flytepass") + R"("}}})");
  oci::PackageFetcher fetcher(o);
  auto f = ok(fetcher.fetch(oci_ref(reg.host(), "flyte/core", "v1")));
  CHECK(oci_test::slurp(f.path) == pkg);
  const auto seen = storage.seen();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].first.find(pushed.layer_digest.substr(7)) != std::string::npos);
  CHECK(seen[0].second.empty());  // no Authorization header reached the other host
}

TEST_CASE(
    "oci: a tampered blob is rejected (same length: digest, longer: size) and never "
    "enters the cache",
    "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg({});
  const std::string pkg = "tamper-me: " + oci_test::fixture_package();
  auto pushed = Pusher(reg).push_package("flyte/tampered", "v1", pkg);
  std::string bad = pkg;
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x5a);
  oci_test::spit(reg.blob_file(pushed.layer_digest), bad);

  oci::PackageFetcher fetcher(env.options(reg.host()));
  auto r = fetcher.fetch(oci_ref(reg.host(), "flyte/tampered", "v1"));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::invalid_input);
  const std::string expected = "blob " + pushed.layer_digest + " from " + reg.host() +
                               "/flyte/tampered: content hashes to " + oci::sha256_digest(bad) +
                               ", expected " + pushed.layer_digest +
                               " (registry returned tampered or corrupt data)";
  CHECK(r.error().message.find(expected) != std::string::npos);
  CHECK_FALSE(oci_test::stdfs::exists(env.tmp.path() / "cache/blobs/sha256" /
                                      pushed.layer_digest.substr(7)));
  CHECK(oci_test::stdfs::is_empty(env.tmp.path() / "cache/tmp"));

  oci_test::spit(reg.blob_file(pushed.layer_digest), pkg + "trailing bytes");
  auto longer = fetcher.fetch(oci_ref(reg.host(), "flyte/tampered", "v1"));
  REQUIRE_FALSE(longer);
  CHECK(longer.error().code == ErrorCode::invalid_input);
  CHECK(longer.error().message.find("more than the " + std::to_string(pkg.size()) + " bytes") !=
        std::string::npos);
}

TEST_CASE("oci: injected 429 and 503 are retried (Retry-After honoured) up to max_attempts",
          "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg({});
  const std::string pkg = oci_test::fixture_package();
  Pusher(reg).push_package("flyte/core", "v1", pkg);

  SECTION("two 429s, then success") {
    oci_test::FaultProxy proxy(reg.base_url(), 2, 429);
    oci::PackageFetcher fetcher(env.options(proxy.host()));
    const auto start = std::chrono::steady_clock::now();
    auto f = ok(fetcher.fetch(oci_ref(proxy.host(), "flyte/core", "v1")));
    CHECK(oci_test::slurp(f.path) == pkg);
    CHECK(proxy.requests() == 4);  // 2 refused + manifest + blob
    CHECK(fetcher.requests_sent() == 4);
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(1900));
  }
  SECTION("two 503s, then success") {
    oci_test::FaultProxy proxy(reg.base_url(), 2, 503);
    oci::PackageFetcher fetcher(env.options(proxy.host()));
    CHECK(oci_test::slurp(ok(fetcher.fetch(oci_ref(proxy.host(), "flyte/core", "v1"))).path) ==
          pkg);
    CHECK(proxy.requests() == 4);
  }
  SECTION("more failures than attempts: unavailable, retryable, after max_attempts requests") {
    oci_test::FaultProxy proxy(reg.base_url(), 100, 502);
    auto o = env.options(proxy.host());
    o.max_attempts = 3;
    oci::PackageFetcher fetcher(o);
    auto r = fetcher.fetch(oci_ref(proxy.host(), "flyte/core", "v1"));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::unavailable);
    CHECK(r.error().retryable());
    CHECK(proxy.requests() == 3);
  }
  SECTION("429 until the end: resource_exhausted") {
    oci_test::FaultProxy proxy(reg.base_url(), 100, 429);
    auto o = env.options(proxy.host());
    o.max_attempts = 2;
    oci::PackageFetcher fetcher(o);
    auto r = fetcher.resolve(oci_ref(proxy.host(), "flyte/core", "v1"));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::resource_exhausted);
    CHECK(proxy.requests() == 2);
  }
}

TEST_CASE("oci: transport errors are retried and end as unavailable", "[oci]") {
  Env env;
  const int port = git_test::free_port();  // nothing listens
  const std::string host = "127.0.0.1:" + std::to_string(port);
  auto o = env.options(host);
  o.max_attempts = 2;
  oci::PackageFetcher fetcher(o);
  auto r = fetcher.fetch(oci_ref(host, "flyte/core", "v1"));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::unavailable);
  CHECK(r.error().message.find("after 2 requests") != std::string::npos);
}

TEST_CASE("oci: an OCI index is followed to the manifest that holds the package", "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg({});
  Pusher push(reg);
  const std::string pkg = oci_test::fixture_package();
  auto package = push.push_package("flyte/core", "pkg", pkg);
  // A decoy: an ordinary image manifest with two layers and no artifactType.
  const std::string l1 = push.push_blob("flyte/core", "layer one"),
                    l2 = push.push_blob("flyte/core", "layer two");
  const std::string cfg = push.push_blob("flyte/core", "{}");
  nlohmann::json decoy = {
      {"schemaVersion", 2},
      {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
      {"config",
       {{"mediaType", "application/vnd.oci.image.config.v1+json"}, {"digest", cfg}, {"size", 2}}},
      {"layers",
       {{{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"}, {"digest", l1}, {"size", 9}},
        {{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"},
         {"digest", l2},
         {"size", 9}}}}};
  const std::string decoy_json = decoy.dump();
  const std::string decoy_digest = push.push_manifest("flyte/core", "decoy", decoy_json,
                                                      "application/vnd.oci.image.manifest.v1+json");
  auto entry = [](const std::string& digest, size_t size, const std::string& artifact) {
    nlohmann::json e = {{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                        {"digest", digest},
                        {"size", size}};
    if (!artifact.empty()) e["artifactType"] = artifact;
    return e;
  };
  auto index = [&](bool with_artifact_type) {
    return nlohmann::json{{"schemaVersion", 2},
                          {"mediaType", "application/vnd.oci.image.index.v1+json"},
                          {"manifests",
                           {entry(decoy_digest, decoy_json.size(), ""),
                            entry(package.manifest_digest, package.manifest.size(),
                                  with_artifact_type ? "application/vnd.flyte.package.v1" : "")}}}
        .dump();
  };
  const std::string typed = index(true), untyped = index(false);
  const std::string typed_digest =
      push.push_manifest("flyte/core", "typed", typed, "application/vnd.oci.image.index.v1+json");
  push.push_manifest("flyte/core", "untyped", untyped, "application/vnd.oci.image.index.v1+json");

  oci::PackageFetcher fetcher(env.options(reg.host()));
  auto f = ok(fetcher.fetch(oci_ref(reg.host(), "flyte/core", "typed")));
  CHECK(f.digest == package.layer_digest);
  CHECK(f.manifest_digest == typed_digest);  // what the tag names
  CHECK(oci_test::slurp(f.path) == pkg);
  // Without artifactType every entry is opened; only one holds a single package layer.
  CHECK(ok(fetcher.resolve(oci_ref(reg.host(), "flyte/core", "untyped"))).layer_digest ==
        package.layer_digest);
  // The decoy alone is ambiguous, and says so.
  auto amb = fetcher.resolve(oci_ref(reg.host(), "flyte/core", "decoy"));
  REQUIRE_FALSE(amb);
  CHECK(amb.error().code == ErrorCode::invalid_input);
  CHECK(amb.error().message.find("ambiguous: 2 layers") != std::string::npos);
  CHECK(amb.error().message.find(l1) != std::string::npos);
}

TEST_CASE("oci: the flyte layer media type, size limits on manifests and blobs", "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg({});
  const std::string pkg = oci_test::fixture_package();
  auto pushed = Pusher(reg).push_package("flyte/typed", "v1", pkg,
                                         "application/vnd.flyte.package.v1.tar+gzip", "");
  oci::PackageFetcher fetcher(env.options(reg.host()));
  auto r = ok(fetcher.resolve(oci_ref(reg.host(), "flyte/typed", "v1")));
  CHECK(r.media_type == "application/vnd.flyte.package.v1.tar+gzip");

  auto small = env.options(reg.host());
  small.max_blob_bytes = pkg.size() - 1;
  auto blob = oci::PackageFetcher(small).fetch(oci_ref(reg.host(), "flyte/typed", "v1"));
  REQUIRE_FALSE(blob);
  CHECK(blob.error().code == ErrorCode::invalid_input);
  CHECK(blob.error().message.find("max_blob_bytes") != std::string::npos);

  auto tiny = env.options(reg.host());
  tiny.max_manifest_bytes = 100;
  auto manifest = oci::PackageFetcher(tiny).fetch(oci_ref(reg.host(), "flyte/typed", "v1"));
  REQUIRE_FALSE(manifest);
  CHECK(manifest.error().code == ErrorCode::invalid_input);
  CHECK(manifest.error().message.find("max_manifest_bytes") != std::string::npos);
}

TEST_CASE("oci: concurrent fetches of several packages from one fetcher", "[oci]") {
  FLYTECD_REQUIRE_TOOL(have_registry(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Env env;
  IsolatedHome home(env.tmp.str());
  Registry reg({});
  Pusher push(reg);
  std::vector<std::string> packages;
  for (int i = 0; i < 6; ++i) {
    packages.push_back("package " + std::to_string(i) + oci_test::fixture_package());
    push.push_package("flyte/p" + std::to_string(i), "v1", packages.back());
  }
  oci::PackageFetcher fetcher(env.options(reg.host()));
  std::vector<std::future<flytecd::Result<oci::Fetched>>> futures;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 6; ++i)
      futures.push_back(std::async(std::launch::async, [&, i] {
        return fetcher.fetch(oci_ref(reg.host(), "flyte/p" + std::to_string(i), "v1"));
      }));
  for (size_t k = 0; k < futures.size(); ++k) {
    auto f = futures[k].get();
    REQUIRE(f);
    CHECK(oci_test::slurp(f->path) == packages[k % 6]);
  }
}

TEST_CASE("oci: https:// packages with a #sha256 pin: verified, cached, wrong pin rejected",
          "[oci]") {
  Env env;
  const std::string d = env.tmp.str();
  oci_test::openssl(
      {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
       "-sha256", "-days", "2", "-keyout", d + "/k.pem", "-out", d + "/c.pem", "-subj",
       "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"},
      d);
  const std::string pkg = oci_test::fixture_package();
  httplib::SSLServer server((d + "/c.pem").c_str(), (d + "/k.pem").c_str());
  std::atomic<int> hits{0};
  server.Get("/pkg.tgz", [&](const httplib::Request&, httplib::Response& res) {
    ++hits;
    res.set_content(pkg, "application/gzip");
  });
  server.Get("/moved", [&](const httplib::Request&, httplib::Response& res) {
    ++hits;
    res.set_redirect("/pkg.tgz");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  for (int i = 0; i < 500 && !server.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string base = "https://127.0.0.1:" + std::to_string(port);
  const std::string want = oci::sha256_digest(pkg);

  auto o = env.options();
  o.ca_file = d + "/c.pem";
  oci::PackageFetcher fetcher(o);
  PackageRef ref;
  ref.kind = PackageRef::Kind::https;
  ref.url = base + "/moved";
  auto f = fetcher.fetch(ref);
  REQUIRE(f);
  CHECK(f->digest == want);
  CHECK(oci_test::slurp(f->path) == pkg);
  CHECK(hits == 2);
  ref.digest = want;
  CHECK(fetcher.resolve(ref)->layer_digest == want);
  CHECK(fetcher.fetch(ref)->from_cache);
  CHECK(hits == 2);  // pinned and cached: no request

  PackageRef wrong = ref;
  wrong.url = base + "/pkg.tgz";
  wrong.digest = "sha256:" + std::string(64, '0');
  auto bad = fetcher.fetch(wrong);
  server.stop();
  t.join();
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::invalid_input);
  CHECK(bad.error().message.find("content hashes to " + want) != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
