#pragma once

// Test-only helpers for tests/integration/oci_test.cpp: Debian's docker-registry started on a
// free loopback port in one of several modes (plain, htpasswd Basic, TLS, bearer token with
// tests/oci/token_server.py, redirect middleware), a push client (cpp-httplib), a fault
// injecting proxy and a static "object storage" server that records the headers it receives.
// Processes are owned by RAII objects and terminated by process group on destruction.

#include <httplib.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "daemon/common/subprocess.hpp"
#include "sources/oci/auth.hpp"
#include "sources/oci/digest.hpp"
#include "test_paths.hpp"
#include "tests/integration/git/git_test_support.hpp"

namespace oci_test {

namespace stdfs = std::filesystem;
using git_test::Background;
using git_test::slurp;
using git_test::spit;
using git_test::TempDir;
using namespace std::chrono_literals;

// bcrypt (htpasswd -B) of flyte:flytepass; the registry accepts only bcrypt.
inline constexpr const char* k_htpasswd =
    "flyte:$2y$05$MwbjyXIsmJJxsAZ6g/Fdn.hCreHK72sFbngl0YUaNIUgU4UbSw2dm\n";
inline constexpr const char* k_user = "flyte";
inline constexpr const char* k_password = "flytepass";

inline std::string registry_binary() {
  auto found = flytecd::find_executable("docker-registry");
  return found ? *found : std::string();
}

inline std::string source_dir() { return FLYTECD_SOURCE_DIR; }

// Runs openssl; throws on failure.
inline void openssl(const std::vector<std::string>& args, const std::string& home) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = git_test::run(argv, home);
  if (r.code != 0) throw std::runtime_error("openssl failed: " + r.err);
}

struct RegistryOptions {
  bool basic = false;
  bool tls = false;
  bool token = false;
  std::string redirect_base;  // "http://localhost:PORT/": redirect storage middleware
};

// One docker-registry process with its own config, storage and (for TLS) certificate.
class Registry {
 public:
  explicit Registry(RegistryOptions o) : m_opts(std::move(o)) {
    m_port = git_test::free_port();
    const std::string d = m_dir.str();
    std::string cfg =
        "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: false\n"
        "storage:\n  filesystem:\n    rootdirectory: " +
        d +
        "/data\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:" + std::to_string(m_port) +
        "\n  secret: test-only-not-secret\n";
    if (m_opts.tls) {
      openssl(
          {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-sha256", "-days", "2", "-keyout", d + "/registry.key", "-out", d + "/registry.crt",
           "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"},
          d);
      cfg += "  tls:\n    certificate: " + d + "/registry.crt\n    key: " + d + "/registry.key\n";
    }
    if (m_opts.basic) {
      spit(d + "/htpasswd", k_htpasswd);
      cfg += "auth:\n  htpasswd:\n    realm: flyte-test-realm\n    path: " + d + "/htpasswd\n";
    }
    if (m_opts.token) {
      openssl(
          {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-keyout",
           d + "/signing.key", "-out", d + "/signing.crt", "-subj", "/CN=flyte-test-token-issuer"},
          d);
      m_token_port = git_test::free_port();
      cfg += "auth:\n  token:\n    realm: http://127.0.0.1:" + std::to_string(m_token_port) +
             "/token\n    service: flyte-test-registry\n    issuer: flyte-test-token-issuer\n"
             "    rootcertbundle: " +
             d + "/signing.crt\n";
      m_token_server = std::make_unique<Background>(
          std::vector<std::string>{"/usr/bin/python3", source_dir() + "/tests/oci/token_server.py",
                                   std::to_string(m_token_port), d + "/signing.key",
                                   "flyte-test-token-issuer",
                                   std::string(k_user) + ":" + k_password},
          git_test::tool_env(d), d + "/token.log");
    }
    if (!m_opts.redirect_base.empty())
      cfg += "middleware:\n  storage:\n    - name: redirect\n      options:\n        baseurl: " +
             m_opts.redirect_base + "\n";
    spit(d + "/config.yml", cfg);
    start();
  }

  void start() {
    m_process = std::make_unique<Background>(
        std::vector<std::string>{registry_binary(), "serve", m_dir.str("config.yml")},
        git_test::tool_env(m_dir.str()), m_dir.str("registry.log"));
    if (!git_test::wait_for_port(m_port))
      throw std::runtime_error("docker-registry did not listen; log: " + log());
    if (m_token_server && !git_test::wait_for_port(m_token_port))
      throw std::runtime_error("token server did not listen; log: " +
                               slurp(m_dir.str("token.log")));
  }
  void stop() {
    m_process.reset();
    m_token_server.reset();
  }

  std::string host() const { return "127.0.0.1:" + std::to_string(m_port); }
  std::string base_url() const { return (m_opts.tls ? "https://" : "http://") + host(); }
  std::string ca_file() const { return m_dir.str("registry.crt"); }
  std::string data_dir() const { return m_dir.str("data"); }
  std::string log() const { return slurp(m_dir.str("registry.log")); }
  int token_requests() const {
    const std::string text = slurp(m_dir.str("token.log"));
    int n = 0;
    for (size_t p = text.find("token-request"); p != std::string::npos;
         p = text.find("token-request", p + 1))
      ++n;
    return n;
  }
  int token_port() const { return m_token_port; }
  // The file the registry stores a blob in (to tamper with it).
  std::string blob_file(const std::string& digest) const {
    const std::string hex = digest.substr(7);
    return data_dir() + "/docker/registry/v2/blobs/sha256/" + hex.substr(0, 2) + "/" + hex +
           "/data";
  }

 private:
  TempDir m_dir;
  RegistryOptions m_opts;
  int m_port = 0;
  int m_token_port = 0;
  std::unique_ptr<Background> m_token_server;
  std::unique_ptr<Background> m_process;
};

// Pushes blobs and manifests (POST + PUT upload, PUT manifest) with Basic or Bearer auth.
class Pusher {
 public:
  explicit Pusher(const Registry& reg, bool auth = false, bool token = false)
      : m_client(reg.base_url()) {
    m_client.set_connection_timeout(10);
    m_client.set_read_timeout(30);
    if (reg.base_url().rfind("https", 0) == 0) m_client.set_ca_cert_path(reg.ca_file().c_str());
    if (auth && !token) m_client.set_basic_auth(k_user, k_password);
    m_token = token;
    m_token_port = reg.token_port();
  }

  std::string push_blob(const std::string& repo, const std::string& bytes) {
    authorize(repo);
    const std::string digest = flytecd::sources::oci::sha256_digest(bytes);
    auto post = m_client.Post(("/v2/" + repo + "/blobs/uploads/").c_str());
    if (!post || post->status != 202)
      throw std::runtime_error("upload POST failed " + status(post));
    std::string loc = post->get_header_value("Location");
    if (auto p = loc.find("://"); p != std::string::npos) loc = loc.substr(loc.find('/', p + 3));
    loc += (loc.find('?') == std::string::npos ? "?" : "&") + std::string("digest=sha256%3A") +
           digest.substr(7);
    auto put = m_client.Put(loc.c_str(), bytes, "application/octet-stream");
    if (!put || put->status != 201) throw std::runtime_error("upload PUT failed " + status(put));
    return digest;
  }

  std::string push_manifest(const std::string& repo, const std::string& ref,
                            const std::string& json, const std::string& media_type) {
    authorize(repo);
    auto put =
        m_client.Put(("/v2/" + repo + "/manifests/" + ref).c_str(), json, media_type.c_str());
    if (!put || put->status != 201)
      throw std::runtime_error("manifest PUT failed " + status(put) + (put ? put->body : ""));
    return flytecd::sources::oci::sha256_digest(json);
  }

  struct Pushed {
    std::string manifest_digest, manifest, layer_digest;
    size_t layer_size = 0;
  };

  // The project's artifact format (recipe §3): artifactType + custom config + one layer.
  Pushed push_package(const std::string& repo, const std::string& tag, const std::string& package,
                      const std::string& layer_type = "application/vnd.oci.image.layer.v1.tar+gzip",
                      const std::string& artifact_type = "application/vnd.flyte.package.v1") {
    const std::string config =
        R"({"packageFormat":"pyflyte-package","fileName":"flyte-package.tgz"})";
    const std::string config_digest = push_blob(repo, config);
    Pushed p;
    p.layer_digest = push_blob(repo, package);
    p.layer_size = package.size();
    nlohmann::json m = {
        {"schemaVersion", 2},
        {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
        {"config",
         {{"mediaType", "application/vnd.flyte.package.config.v1+json"},
          {"digest", config_digest},
          {"size", config.size()}}},
        {"layers",
         {{{"mediaType", layer_type},
           {"digest", p.layer_digest},
           {"size", package.size()},
           {"annotations", {{"org.opencontainers.image.title", "flyte-package.tgz"}}}}}}};
    if (!artifact_type.empty()) m["artifactType"] = artifact_type;
    p.manifest = m.dump();
    p.manifest_digest =
        push_manifest(repo, tag, p.manifest, "application/vnd.oci.image.manifest.v1+json");
    return p;
  }

 private:
  void authorize(const std::string& repo) {
    if (!m_token) return;
    httplib::Client t("http://127.0.0.1:" + std::to_string(m_token_port));
    t.set_basic_auth(k_user, k_password);
    auto r = t.Get(
        ("/token?service=flyte-test-registry&scope=repository:" + repo + ":pull,push").c_str());
    if (!r || r->status != 200) throw std::runtime_error("token request failed " + status(r));
    m_client.set_bearer_token_auth(nlohmann::json::parse(r->body)["token"].get<std::string>());
  }
  static std::string status(const httplib::Result& r) {
    return r ? "HTTP " + std::to_string(r->status) : "transport " + httplib::to_string(r.error());
  }

  httplib::Client m_client;
  bool m_token = false;
  int m_token_port = 0;
};

// A loopback HTTP server on a free port, running its handler on a background thread.
class Server {
 public:
  Server() { m_port = m_server.bind_to_any_port("127.0.0.1"); }
  ~Server() {
    m_server.stop();
    if (m_thread.joinable()) m_thread.join();
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  void run() {
    m_thread = std::thread([this] { m_server.listen_after_bind(); });
    for (int i = 0; i < 500 && !m_server.is_running(); ++i) std::this_thread::sleep_for(10ms);
  }
  httplib::Server& http() { return m_server; }
  int port() const { return m_port; }
  std::string host() const { return "127.0.0.1:" + std::to_string(m_port); }

 private:
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
};

// "Object storage" for the redirect middleware: serves the registry's files and records every
// request's path and Authorization header.
class StorageServer {
 public:
  StorageServer() {
    m_server.http().Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      std::string file;
      {
        std::lock_guard<std::mutex> g(m_mu);
        m_seen.push_back({req.path, req.get_header_value("Authorization")});
        file = m_root + req.path;
      }
      if (!stdfs::exists(file)) {
        res.status = 404;
        return;
      }
      res.set_content(slurp(file), "application/octet-stream");
    });
    m_server.run();
  }
  int port() const { return m_server.port(); }
  void set_root(const std::string& root) {
    std::lock_guard<std::mutex> g(m_mu);
    m_root = root;
  }
  std::vector<std::pair<std::string, std::string>> seen() {
    std::lock_guard<std::mutex> g(m_mu);
    return m_seen;
  }

 private:
  std::string m_root;
  std::mutex m_mu;
  std::vector<std::pair<std::string, std::string>> m_seen;
  Server m_server;  // last: its thread stops before the members it uses go away
};

// Answers the first `failures` requests with `status` (429 carries Retry-After: 1), then
// forwards to the registry and relays its answer. Counts every request.
class FaultProxy {
 public:
  FaultProxy(const std::string& upstream, int failures, int status)
      : m_upstream(upstream), m_failures(failures), m_status(status) {
    m_server.http().Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      const int n = ++m_requests;
      if (n <= m_failures) {
        res.status = m_status;
        if (m_status == 429) res.set_header("Retry-After", "1");
        res.set_content(R"({"errors":[{"code":"TOOMANYREQUESTS","message":"injected"}]})",
                        "application/json");
        return;
      }
      httplib::Client up(m_upstream);
      httplib::Headers h;
      for (const char* name : {"Accept", "Authorization"})
        if (req.has_header(name)) h.emplace(name, req.get_header_value(name));
      auto r = up.Get(req.target.c_str(), h);
      if (!r) {
        res.status = 502;
        return;
      }
      res.status = r->status;
      for (const char* name : {"Docker-Content-Digest", "Location", "WWW-Authenticate"})
        if (r->has_header(name)) res.set_header(name, r->get_header_value(name));
      res.set_content(r->body, r->get_header_value("Content-Type").c_str());
    });
    m_server.run();
  }
  std::string host() const { return m_server.host(); }
  int requests() const { return m_requests; }

 private:
  std::string m_upstream;
  int m_failures, m_status;
  std::atomic<int> m_requests{0};
  Server m_server;
};

// The real package fixture, or (if the shared fixtures are absent) deterministic bytes.
inline std::string fixture_package() {
  const char* env = std::getenv("FLYTECD_FIXTURES");
  const std::string dir =
      env ? std::string(env) : source_dir() + "/../shared/fixtures/flyte-packages";
  const std::string path = dir + "/flytesnacks-core.tgz";
  if (stdfs::exists(path)) return slurp(path);
  std::string fake;
  for (int i = 0; i < 4096; ++i) fake.push_back(static_cast<char>(i * 7 % 251));
  return fake;
}

}  // namespace oci_test
