#include "daemon/cli/remote.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "daemon/common/http/client.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/config/config.hpp"

namespace flytecd::cli {
namespace {

Result<std::string> read_token_file(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in)
    return make_error(ErrorCode::invalid_input, std::string("cannot read ") + what + " " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string first_line(const std::string& body) {
  std::string line = body.substr(0, body.find('\n'));
  return scan::printable(line, 200);
}

}  // namespace

std::string server_from_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  std::string host = colon == std::string::npos ? listen : listen.substr(0, colon);
  const std::string port = colon == std::string::npos ? "8080" : listen.substr(colon + 1);
  if (host.empty() || host == "0.0.0.0" || host == "*") host = "127.0.0.1";
  if (host == "[::]" || host == "::") host = "[::1]";
  return "http://" + host + ":" + port;
}

Result<RemoteOptions> resolve_remote(const RemoteFlags& flags) {
  RemoteOptions r;
  // As `flytecd run` reads it: defaults, the file, then FLYTECD_* (FLYTECD_HTTP_LISTEN).
  config::Config cfg = config::defaults();
  const bool have_cfg = !flags.config_file.empty();
  if (have_cfg)
    if (auto st = config::load_file(flags.config_file, cfg); !st) return st.error();
  if (auto st = config::apply_env(cfg); !st) return st.error();
  r.server = !flags.server.empty() ? flags.server : server_from_listen(cfg.http.listen);
  while (!r.server.empty() && r.server.back() == '/') r.server.pop_back();
  if (r.server.find("://") == std::string::npos) r.server = "http://" + r.server;
  if (!flags.token_file.empty()) {
    auto t = read_token_file(flags.token_file, "--token-file");
    if (!t) return t.error();
    r.token = *t;
  } else if (const char* v = std::getenv("FLYTECD_SYNC_TOKEN"); v && *v) {
    r.token = v;
  } else if (have_cfg && !cfg.http.sync_token_file.empty()) {
    auto t = read_token_file(cfg.http.sync_token_file, "http.syncTokenFile");
    if (!t) return t.error();
    r.token = *t;
  }
  return r;
}

Result<nlohmann::json> daemon_request(const RemoteOptions& remote, const std::string& method,
                                      const std::string& path, const nlohmann::json& body) {
  http::ClientOptions co;
  co.connect_timeout = std::min(remote.timeout, std::chrono::milliseconds(5000));
  co.total_timeout = remote.timeout;
  http::Client client(co);
  http::ClientRequest req;
  req.method = method;
  req.url = remote.server + path;
  req.headers.push_back("Accept: application/json");
  if (!remote.token.empty()) req.headers.push_back("Authorization: Bearer " + remote.token);
  if (!body.is_null()) {
    req.body = dump_json(body);
    req.headers.push_back("Content-Type: application/json");
  } else if (method == "POST") {
    req.headers.push_back("Content-Length: 0");
  }
  const std::string where = method + " " + req.url;
  auto resp = client.execute(req);
  if (!resp) {
    if (resp.error().code == ErrorCode::timeout)
      return make_error(ErrorCode::timeout,
                        where + ": no answer from flytecd (" + resp.error().message + ")");
    return make_error(
        ErrorCode::unavailable,
        "cannot reach flytecd at " + remote.server + ": " + resp.error().message +
            "; is `flytecd run` listening there? (http.listen; or pass --server URL)");
  }
  const long st = resp->status;
  if (st == 401)
    return make_error(ErrorCode::unauthenticated,
                      where + ": 401 unauthorized: the token is " +
                          (remote.token.empty() ? "missing" : "wrong") +
                          " (give the daemon's sync token with --token-file FILE or "
                          "FLYTECD_SYNC_TOKEN)");
  if (st == 403)
    return make_error(ErrorCode::permission_denied,
                      where + ": 403 forbidden: the token is " +
                          (remote.token.empty() ? "missing" : "not allowed this") +
                          " (--token-file FILE or FLYTECD_SYNC_TOKEN)");
  if (st == 404)
    return make_error(ErrorCode::not_found, where + ": 404: " + first_line(resp->body) +
                                                " (an older flytecd, or the endpoint is disabled: "
                                                "the daemon needs http.syncTokenFile or "
                                                "FLYTECD_SYNC_TOKEN)");
  if (st < 200 || st >= 300)
    return make_error(st >= 500 ? ErrorCode::unavailable : ErrorCode::internal,
                      where + ": HTTP " + std::to_string(st) + ": " + first_line(resp->body));
  auto j = nlohmann::json::parse(resp->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    std::string msg = resp->body;
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
    return nlohmann::json{{"message", msg}};
  }
  return j;
}

std::string str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

}  // namespace flytecd::cli
