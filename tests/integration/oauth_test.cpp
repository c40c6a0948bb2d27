// OAuth2 client credentials for the FlyteAdmin sink, against real servers on 127.0.0.1:
// an HTTP authorization server (discovery, flyte_client config, token endpoint) and a gRPC
// AdminService that only accepts the newest token it issued.

#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <spdlog/sinks/ostream_sink.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/common/log.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "sinks/flyteadmin/config.hpp"
#include "tests/support/http_serve.hpp"
#include "tests/support/steps.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

namespace fa = flyteidl::admin;
namespace fsvc = flyteidl::service;
namespace stdfs = std::filesystem;
using flytecd::ErrorCode;
using flytecd::Status;
using flytecd::sinks::flyteadmin::AdminConfig;
using flytecd::sinks::flyteadmin::AdminSink;

// Every secret below contains "oauth-SECRET" (kept by URL encoding) and characters that must be
// form-urlencoded for HTTP Basic (RFC 6749 §2.3.1).
constexpr const char* k_client_id = "flytecd-test";
constexpr const char* k_secret = "Zq7-oauth-SECRET+/:v4lue";
constexpr const char* k_env_secret = "Env-oauth-SECRET+/:2";
constexpr const char* k_wrong_secret = "Wr0ng-oauth-SECRET+/:3";
constexpr const char* k_secret_marker = "oauth-SECRET";
constexpr const char* k_env_var = "FLYTECD_OAUTH_TEST_CLIENT_SECRET";

// ---- small codecs for the server side ----------------------------------------------------

std::string base64_decode(const std::string& in) {
  static const std::string k_alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char ch : in) {
    if (ch == '=') break;
    auto pos = k_alphabet.find(ch);
    if (pos == std::string::npos) return {};
    val = ((val << 6) | static_cast<int>(pos)) & 0xFFFFFF;
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

// application/x-www-form-urlencoded decoding ('+' is a space, %XX an octet).
std::string form_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size()) {
      unsigned value = 0;
      auto [ptr, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, value, 16);
      if (ec != std::errc() || ptr != s.data() + i + 3) return s;
      out += static_cast<char>(value);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string> parse_form(const std::string& body) {
  std::map<std::string, std::string> out;
  std::stringstream ss(body);
  std::string pair;
  while (std::getline(ss, pair, '&')) {
    auto eq = pair.find('=');
    if (eq == std::string::npos) continue;
    out[form_decode(pair.substr(0, eq))] = form_decode(pair.substr(eq + 1));
  }
  return out;
}

struct HttpReply {
  int status = 200;
  std::string body;
};

// ---- the authorization server and FlyteAdmin, sharing one state --------------------------

struct AuthState {
  std::mutex mu;
  // Knobs.
  std::string accepted_secret = k_secret;
  std::string grpc_key = "x-test-auth";  // the metadata key the gRPC server reads
  long long expires_in = 3600;
  int token_status = 200;   // anything else: the token endpoint fails with this status
  int revoked_through = 0;  // tokens tok-1 .. tok-<n> are rejected by the gRPC server
  bool reject_all = false;
  bool unavailable_once = false;
  // Observations.
  std::string base_url;
  int well_known_hits = 0, flyte_client_hits = 0, token_requests = 0, token_rejections = 0;
  int form_errors = 0, issued = 0, grpc_calls = 0;
  std::vector<std::string> basic_headers;  // raw Authorization headers the token endpoint saw
  std::vector<std::map<std::string, std::string>> forms;
  std::vector<std::multimap<std::string, std::string>> grpc_metadata;
};

HttpReply handle_http(AuthState& st, const httplib::Request& req) {
  std::lock_guard<std::mutex> lock(st.mu);
  if (req.method == "GET" && req.path == "/.well-known/oauth-authorization-server") {
    ++st.well_known_hits;
    return {200, nlohmann::json{{"issuer", st.base_url},
                                {"token_endpoint", st.base_url + "/oauth2/token"},
                                {"grant_types_supported", {"client_credentials"}}}
                     .dump()};
  }
  if (req.method == "GET" && req.path == "/config/v1/flyte_client") {
    ++st.flyte_client_hits;
    return {200, nlohmann::json{{"client_id", "flytectl"},
                                {"authorization_metadata_key", "x-test-auth"},
                                {"scopes", {"all"}}}
                     .dump()};
  }
  if (req.method == "POST" && req.path == "/oauth2/token") {
    ++st.token_requests;
    if (st.token_status != 200) return {st.token_status, R"({"error":"server_error"})"};
    const std::string auth = req.get_header_value("Authorization");
    st.basic_headers.push_back(auth);
    std::string user, password;
    if (auth.rfind("Basic ", 0) == 0) {
      std::string decoded = base64_decode(auth.substr(6));
      auto colon = decoded.find(':');
      if (colon != std::string::npos) {
        user = form_decode(decoded.substr(0, colon));
        password = form_decode(decoded.substr(colon + 1));
      }
    }
    if (user != k_client_id || password != st.accepted_secret) {
      ++st.token_rejections;
      return {401, R"({"error":"invalid_client"})"};
    }
    auto form = parse_form(req.body);
    st.forms.push_back(form);
    if (form["grant_type"] != "client_credentials" || form["scope"] != "all") {
      ++st.form_errors;
      return {400, R"({"error":"invalid_request"})"};
    }
    ++st.issued;
    return {200, nlohmann::json{{"access_token", "tok-" + std::to_string(st.issued)},
                                {"token_type", "bearer"},
                                {"expires_in", st.expires_in}}
                     .dump()};
  }
  return {404, R"({"error":"not_found"})"};
}

class TestAdmin final : public fsvc::AdminService::Service {
 public:
  explicit TestAdmin(AuthState& st) : m_st(st) {}

  grpc::Status GetVersion(grpc::ServerContext* ctx, const fa::GetVersionRequest*,
                          fa::GetVersionResponse* resp) override {
    std::lock_guard<std::mutex> lock(m_st.mu);
    if (auto refused = authorize(ctx); !refused.ok()) return refused;
    resp->mutable_control_plane_version()->set_build("test-build");
    resp->mutable_control_plane_version()->set_version("v1.2.3");
    return grpc::Status::OK;
  }
  // An override write (what an apply's steps send, through the callback client).
  grpc::Status UpdateWorkflowAttributes(grpc::ServerContext* ctx,
                                        const fa::WorkflowAttributesUpdateRequest*,
                                        fa::WorkflowAttributesUpdateResponse*) override {
    std::lock_guard<std::mutex> lock(m_st.mu);
    return authorize(ctx);
  }

 private:
  // Records the call's metadata; OK when it carries the newest token issued (m_st.mu held).
  grpc::Status authorize(grpc::ServerContext* ctx) {
    ++m_st.grpc_calls;
    std::multimap<std::string, std::string> md;
    for (const auto& [k, v] : ctx->client_metadata())
      md.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
    m_st.grpc_metadata.push_back(md);
    if (m_st.unavailable_once) {
      m_st.unavailable_once = false;
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "try again");
    }
    auto it = md.find(m_st.grpc_key);
    const bool valid = it != md.end() && m_st.issued > m_st.revoked_through &&
                       it->second == "Bearer tok-" + std::to_string(m_st.issued);
    if (!valid || m_st.reject_all)
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "token expired");
    return grpc::Status::OK;
  }

  AuthState& m_st;
};

// The authorization server: cpp-httplib on a free loopback port, serving in its own thread.
class AuthHttpServer {
 public:
  explicit AuthHttpServer(AuthState& st) {
    auto handler = [&st](const httplib::Request& req, httplib::Response& res) {
      HttpReply reply = handle_http(st, req);
      res.status = reply.status;
      res.set_content(reply.body, "application/json");
    };
    m_server.Get("/.well-known/oauth-authorization-server", handler);
    m_server.Get("/config/v1/flyte_client", handler);
    m_server.Post("/oauth2/token", handler);
    m_port = flytecd_test::serve_on_free_port(m_server, m_thread);
    REQUIRE(m_port > 0);
  }
  ~AuthHttpServer() { stop(); }
  AuthHttpServer(const AuthHttpServer&) = delete;
  AuthHttpServer& operator=(const AuthHttpServer&) = delete;

  int port() const { return m_port; }
  void stop() {
    if (!m_thread.joinable()) return;
    m_server.stop();
    m_thread.join();
  }

 private:
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
};

// Both servers, a secret file and the matching flytectl-style configuration.
struct Rig {
  Rig() : http(st), admin(st) {
    static std::atomic<int> seq{0};
    dir = stdfs::temp_directory_path() /
          ("flytecd-oauth-" + std::to_string(::getpid()) + "-" + std::to_string(seq++));
    stdfs::create_directories(dir);
    secret_file = (dir / "client_secret").string();
    write_secret(k_secret);
    base_url = "http://127.0.0.1:" + std::to_string(http.port());
    {
      std::lock_guard<std::mutex> lock(st.mu);
      st.base_url = base_url;
    }
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &grpc_port);
    builder.RegisterService(&admin);
    server = builder.BuildAndStart();
    REQUIRE(server);
    REQUIRE(grpc_port > 0);
  }
  ~Rig() {
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    http.stop();
    std::error_code ec;
    stdfs::remove_all(dir, ec);
  }

  void write_secret(const std::string& secret) {
    std::ofstream(secret_file, std::ios::trunc) << secret << "\n";
  }

  AdminConfig config() const {
    AdminConfig cfg;
    cfg.endpoint = "127.0.0.1:" + std::to_string(grpc_port);
    cfg.insecure = true;
    cfg.auth_type = "ClientSecret";
    cfg.client_id = k_client_id;
    cfg.client_secret_location = secret_file;
    cfg.http_endpoint = base_url;
    cfg.per_rpc_timeout_ms = 5000;
    cfg.max_retries = 2;
    return cfg;
  }

  template <typename F>
  auto with(F f) {
    std::lock_guard<std::mutex> lock(st.mu);
    return f(st);
  }

  // The value sent under `key` in each call so far ("<missing>" when absent).
  std::vector<std::string> seen(const std::string& key) {
    return with([&](AuthState& s) {
      std::vector<std::string> out;
      for (const auto& md : s.grpc_metadata) {
        auto it = md.find(key);
        out.push_back(it == md.end() ? "<missing>" : it->second);
      }
      return out;
    });
  }

  // Whether `text` holds any client secret, in clear, URL-encoded or inside a Basic header.
  bool leaks_secret(const std::string& text) {
    if (text.find(k_secret_marker) != std::string::npos) return true;
    for (const char* s : {k_secret, k_env_secret, k_wrong_secret})
      if (text.find(s) != std::string::npos) return true;
    return with([&](AuthState& s) {
      for (const auto& h : s.basic_headers)
        if (h.size() > 6 && text.find(h.substr(6)) != std::string::npos) return true;
      return false;
    });
  }

  AuthState st;
  AuthHttpServer http;
  TestAdmin admin;
  std::unique_ptr<grpc::Server> server;
  int grpc_port = 0;
  stdfs::path dir;
  std::string secret_file, base_url;
};

std::unique_ptr<AdminSink> connect_sink(const AdminConfig& cfg, const std::string& label) {
  auto sink = AdminSink::connect(cfg, label);
  if (!sink) FAIL(sink.error().message);
  return std::move(*sink);
}

uint64_t rpc_count(const AdminSink& sink, const std::string& key) {
  auto counts = sink.rpc_counts();
  auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

// Routes everything written to the given loggers, at trace level, into a string (and nowhere
// else while it lives); restores their sinks and levels afterwards.
class LogCapture {
 public:
  explicit LogCapture(std::vector<std::shared_ptr<spdlog::logger>> loggers)
      : m_sink(std::make_shared<spdlog::sinks::ostream_sink_mt>(m_out)) {
    for (auto& logger : loggers) {
      m_saved.push_back({logger, logger->level(), logger->sinks()});
      logger->sinks() = {m_sink};
      logger->set_level(spdlog::level::trace);
    }
  }
  ~LogCapture() {
    for (auto& saved : m_saved) {
      saved.logger->sinks() = saved.sinks;
      saved.logger->set_level(saved.level);
    }
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string text() {
    m_sink->flush();
    return m_out.str();
  }

 private:
  std::ostringstream m_out;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> m_sink;
  struct Saved {
    std::shared_ptr<spdlog::logger> logger;
    spdlog::level::level_enum level;
    std::vector<spdlog::sink_ptr> sinks;
  };
  std::vector<Saved> m_saved;
};

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : m_name(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(m_name); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* m_name;
};

}  // namespace

TEST_CASE("oauth: token is sent in the metadata key FlyteAdmin advertises and is cached",
          "[oauth]") {
  Rig rig;
  auto sink = connect_sink(rig.config(), "oauth-discovery");
  // connect() creates the channel only: no discovery, token or RPC yet.
  CHECK(rig.with([](AuthState& s) {
    return s.well_known_hits + s.flyte_client_hits + s.token_requests + s.grpc_calls;
  }) == 0);

  for (int i = 0; i < 5; ++i) {
    auto version = sink->server_version();
    if (!version) CHECK_FALSE(rig.leaks_secret(version.error().message));
    REQUIRE(version);
    CHECK(*version == "test-build v1.2.3");
  }

  CHECK(rig.seen("x-test-auth") == std::vector<std::string>(5, "Bearer tok-1"));
  CHECK(rig.seen("flyte-authorization") == std::vector<std::string>(5, "<missing>"));
  CHECK(rig.seen("authorization") == std::vector<std::string>(5, "<missing>"));
  rig.with([](AuthState& s) {
    CHECK(s.well_known_hits == 1);
    CHECK(s.flyte_client_hits == 1);
    CHECK(s.token_requests == 1);  // one fetch, cached for the other four calls
    CHECK(s.token_rejections == 0);
    CHECK(s.form_errors == 0);
    REQUIRE(s.forms.size() == 1);
    CHECK(s.forms[0].at("grant_type") == "client_credentials");
    CHECK(s.forms[0].at("scope") == "all");  // scopes from /config/v1/flyte_client
    CHECK(s.forms[0].count("audience") == 0);
  });
  CHECK(rpc_count(*sink, "GetVersion OK") == 5);
  CHECK(rpc_count(*sink, "GetVersion UNAUTHENTICATED") == 0);
}

TEST_CASE("oauth: an explicitly configured authorizationHeader wins over discovery", "[oauth]") {
  Rig rig;
  rig.with([](AuthState& s) { s.grpc_key = "x-explicit-auth"; });
  AdminConfig cfg = rig.config();
  cfg.authorization_header = "X-Explicit-Auth";  // gRPC metadata keys are lower-case on the wire

  SECTION("scopes still come from flyte_client") {
    auto sink = connect_sink(cfg, "oauth-header");
    auto version = sink->server_version();
    if (!version) CHECK_FALSE(rig.leaks_secret(version.error().message));
    REQUIRE(version);
    CHECK(rig.seen("x-explicit-auth") == std::vector<std::string>{"Bearer tok-1"});
    CHECK(rig.seen("x-test-auth") == std::vector<std::string>{"<missing>"});
    rig.with([](AuthState& s) {
      CHECK(s.flyte_client_hits == 1);  // consulted for scopes, but its key lost
      CHECK(s.form_errors == 0);
    });
  }
  SECTION("with scopes configured too, flyte_client is not needed") {
    cfg.scopes = {"all"};
    auto sink = connect_sink(cfg, "oauth-header-scopes");
    auto version = sink->server_version();
    if (!version) CHECK_FALSE(rig.leaks_secret(version.error().message));
    REQUIRE(version);
    CHECK(rig.seen("x-explicit-auth") == std::vector<std::string>{"Bearer tok-1"});
    rig.with([](AuthState& s) {
      CHECK(s.flyte_client_hits == 0);
      CHECK(s.well_known_hits == 1);
      CHECK(s.form_errors == 0);
    });
  }
}

TEST_CASE("oauth: a configured tokenUrl skips the well-known discovery", "[oauth]") {
  Rig rig;
  AdminConfig cfg = rig.config();
  cfg.token_url = rig.base_url + "/oauth2/token";
  auto sink = connect_sink(cfg, "oauth-token-url");
  for (int i = 0; i < 2; ++i) {
    auto version = sink->server_version();
    if (!version) CHECK_FALSE(rig.leaks_secret(version.error().message));
    REQUIRE(version);
  }
  CHECK(rig.seen("x-test-auth") == std::vector<std::string>(2, "Bearer tok-1"));
  rig.with([](AuthState& s) {
    CHECK(s.well_known_hits == 0);
    CHECK(s.flyte_client_hits == 1);  // still the source of the metadata key and scopes
    CHECK(s.token_requests == 1);
  });
}

TEST_CASE("oauth: a token is refreshed when it expires, before FlyteAdmin rejects it", "[oauth]") {
  Rig rig;
  rig.with([](AuthState& s) { s.expires_in = 1; });
  auto sink = connect_sink(rig.config(), "oauth-expiry");

  auto first = sink->server_version();
  if (!first) CHECK_FALSE(rig.leaks_secret(first.error().message));
  REQUIRE(first);
  const auto fetched_at = std::chrono::steady_clock::now();
  auto second = sink->server_version();
  REQUIRE(second);
  if (std::chrono::steady_clock::now() - fetched_at < std::chrono::milliseconds(800)) {
    // Still inside the one-second lifetime: the cached token is reused.
    CHECK(rig.with([](AuthState& s) { return s.token_requests; }) == 1);
  }

  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past expires_in
  auto third = sink->server_version();
  if (!third) CHECK_FALSE(rig.leaks_secret(third.error().message));
  REQUIRE(third);
  auto seen = rig.seen("x-test-auth");
  REQUIRE(seen.size() == 3);
  CHECK(seen.back() == "Bearer tok-2");
  rig.with([](AuthState& s) {
    CHECK(s.token_requests == 2);
    CHECK(s.well_known_hits == 1);  // discovery is not repeated for a refresh
    CHECK(s.flyte_client_hits == 1);
  });
  // Refreshed proactively: FlyteAdmin never had to reject the expired token.
  CHECK(rpc_count(*sink, "GetVersion UNAUTHENTICATED") == 0);
  CHECK(rpc_count(*sink, "GetVersion OK") == 3);
}

TEST_CASE("oauth: a token FlyteAdmin rejects is refreshed once and the call retried", "[oauth]") {
  Rig rig;
  AdminConfig cfg = rig.config();
  cfg.max_retries = 3;  // UNAUTHENTICATED must not use the backoff retries
  auto sink = connect_sink(cfg, "oauth-revoked");
  auto first = sink->server_version();
  if (!first) CHECK_FALSE(rig.leaks_secret(first.error().message));
  REQUIRE(first);

  SECTION("the refreshed token is accepted") {
    rig.with([](AuthState& s) { s.revoked_through = s.issued; });  // server revokes tok-1
    auto version = sink->server_version();
    if (!version) CHECK_FALSE(rig.leaks_secret(version.error().message));
    REQUIRE(version);
    CHECK(rig.seen("x-test-auth") ==
          std::vector<std::string>{"Bearer tok-1", "Bearer tok-1", "Bearer tok-2"});
    CHECK(rig.with([](AuthState& s) { return s.token_requests; }) == 2);
    CHECK(rpc_count(*sink, "GetVersion OK") == 2);
    CHECK(rpc_count(*sink, "GetVersion UNAUTHENTICATED") == 1);

    // The new token is cached again.
    REQUIRE(sink->server_version());
    CHECK(rig.with([](AuthState& s) { return s.token_requests; }) == 2);
  }
  SECTION("a token rejected again after the refresh is an error, not a loop") {
    rig.with([](AuthState& s) { s.reject_all = true; });
    auto version = sink->server_version();
    REQUIRE_FALSE(version);
    CHECK(version.error().code == ErrorCode::unauthenticated);
    CHECK_FALSE(version.error().retryable());
    CHECK_THAT(version.error().message, Catch::Contains("token expired"));
    CHECK_FALSE(rig.leaks_secret(version.error().message));
    rig.with([](AuthState& s) {
      CHECK(s.grpc_calls == 3);      // the first call, then exactly one refresh and retry
      CHECK(s.token_requests == 2);  // one refresh
    });
    CHECK(rpc_count(*sink, "GetVersion UNAUTHENTICATED") == 2);
  }
}

TEST_CASE(
    "oauth: an override step through the callback client carries the token, and a token "
    "FlyteAdmin rejects is refreshed once",
    "[oauth][async]") {
  Rig rig;
  auto sink = connect_sink(rig.config(), "oauth-async");
  const auto step = flytecd::testing::label_step("p", "wf", "c");
  auto run = [&] {
    std::promise<Status> ended;
    auto got = ended.get_future();
    sink->execute_async(step, [&ended](Status st) { ended.set_value(std::move(st)); });
    return got.get();
  };
  auto first = run();
  if (!first) CHECK_FALSE(rig.leaks_secret(first.error().message));
  REQUIRE(first);
  CHECK(rig.seen("x-test-auth") == std::vector<std::string>{"Bearer tok-1"});

  SECTION("a revoked token: refreshed once, the write retried with the new one") {
    rig.with([](AuthState& s) { s.revoked_through = s.issued; });
    REQUIRE(run());
    CHECK(rig.seen("x-test-auth") ==
          std::vector<std::string>{"Bearer tok-1", "Bearer tok-1", "Bearer tok-2"});
    CHECK(rpc_count(*sink, "UpdateWorkflowAttributes UNAUTHENTICATED") == 1);
    CHECK(rpc_count(*sink, "UpdateWorkflowAttributes OK") == 2);
  }
  SECTION("rejected again after the refresh: an error, not a loop") {
    rig.with([](AuthState& s) { s.reject_all = true; });
    auto st = run();
    REQUIRE_FALSE(st);
    CHECK(st.error().code == ErrorCode::unauthenticated);
    CHECK_FALSE(rig.leaks_secret(st.error().message));
    CHECK(rig.with([](AuthState& s) { return s.grpc_calls; }) == 3);
    CHECK(rig.with([](AuthState& s) { return s.token_requests; }) == 2);
  }
}

TEST_CASE("oauth: clientSecretEnvVar takes precedence over clientSecretLocation", "[oauth]") {
  Rig rig;
  rig.with([](AuthState& s) { s.accepted_secret = k_env_secret; });
  AdminConfig cfg = rig.config();  // the file holds k_secret, which the server refuses
  cfg.client_secret_env_var = k_env_var;

  SECTION("the variable's value is used") {
    ScopedEnv env(k_env_var, (std::string("  ") + k_env_secret + "\n").c_str());
    auto sink = connect_sink(cfg, "oauth-env");
    auto version = sink->server_version();
    if (!version) CHECK_FALSE(rig.leaks_secret(version.error().message));
    REQUIRE(version);
    rig.with([](AuthState& s) {
      CHECK(s.token_requests == 1);
      CHECK(s.token_rejections == 0);
    });
  }
  SECTION("a named but unset variable is an error, without falling back to the file") {
    ::unsetenv(k_env_var);
    auto sink = connect_sink(cfg, "oauth-env-unset");
    auto version = sink->server_version();
    REQUIRE_FALSE(version);
    CHECK(version.error().code == ErrorCode::unauthenticated);
    CHECK_THAT(version.error().message, Catch::Contains(k_env_var));
    CHECK_FALSE(rig.leaks_secret(version.error().message));
    rig.with([](AuthState& s) {
      CHECK(s.token_requests == 0);
      CHECK(s.grpc_calls == 0);
    });
  }
}

TEST_CASE("oauth: a wrong client secret is unauthenticated and never appears in errors or logs",
          "[oauth]") {
  Rig rig;
  const std::string label = "oauth-wrong-secret";
  LogCapture logs({spdlog::default_logger(), flytecd::log::get("flyteadmin:" + label)});
  rig.write_secret(k_wrong_secret);
  auto sink = connect_sink(rig.config(), label);

  auto version = sink->server_version();
  REQUIRE_FALSE(version);
  CHECK(version.error().code == ErrorCode::unauthenticated);
  CHECK_FALSE(version.error().retryable());
  CHECK_THAT(version.error().message, Catch::Contains("401"));
  CHECK_THAT(version.error().message, Catch::Contains(k_client_id));
  CHECK_FALSE(rig.leaks_secret(version.error().message));
  rig.with([](AuthState& s) {
    CHECK(s.token_rejections == 1);
    REQUIRE(s.basic_headers.size() == 1);
    CHECK(s.grpc_calls == 0);  // no RPC goes out without a token
  });

  // Rotating the file fixes it without reconnecting; a transient UNAVAILABLE on the way makes
  // the sink log its retry, so the capture below is known to see the sink's log lines.
  rig.write_secret(k_secret);
  rig.with([](AuthState& s) { s.unavailable_once = true; });
  auto retried = sink->server_version();
  if (!retried) CHECK_FALSE(rig.leaks_secret(retried.error().message));
  REQUIRE(retried);
  CHECK(rpc_count(*sink, "GetVersion UNAVAILABLE") == 1);
  CHECK(rpc_count(*sink, "GetVersion OK") == 1);

  const std::string text = logs.text();
  INFO(text);
  CHECK_THAT(text, Catch::Contains("GetVersion failed (UNAVAILABLE)"));
  CHECK_FALSE(rig.leaks_secret(text));
  CHECK_THAT(text, !Catch::Contains("Bearer"));
}

TEST_CASE("oauth: a token endpoint failing with HTTP 500 is a retryable error", "[oauth]") {
  Rig rig;
  rig.with([](AuthState& s) { s.token_status = 500; });
  auto sink = connect_sink(rig.config(), "oauth-token-500");

  auto version = sink->server_version();
  REQUIRE_FALSE(version);
  CHECK(version.error().code == ErrorCode::unavailable);
  CHECK(version.error().retryable());
  CHECK_THAT(version.error().message, Catch::Contains("500"));
  CHECK_FALSE(rig.leaks_secret(version.error().message));
  rig.with([](AuthState& s) {
    CHECK(s.token_requests >= 1);
    CHECK(s.grpc_calls == 0);
  });

  // Not sticky: once the endpoint recovers the next call gets a token.
  rig.with([](AuthState& s) { s.token_status = 200; });
  auto recovered = sink->server_version();
  if (!recovered) CHECK_FALSE(rig.leaks_secret(recovered.error().message));
  REQUIRE(recovered);
  CHECK(rig.seen("x-test-auth") == std::vector<std::string>{"Bearer tok-1"});
}

}  // namespace FLYTECD_UNITY_ID
