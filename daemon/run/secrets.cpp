#include "daemon/run/secrets.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <tuple>

namespace flytecd::run {
namespace {

// Reads a secret from a file (trimmed); the error names the file, never the content.
Result<std::string> read_secret_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::invalid_input, "cannot read secret file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

Result<std::string> optional_secret(const std::string& file, const char* env) {
  if (!file.empty()) return read_secret_file(file);
  if (const char* v = std::getenv(env); v && *v) return std::string(v);
  return std::string();
}

}  // namespace

Result<std::vector<notify::NotifyTarget>> notify_targets(const config::Config& c) {
  std::vector<notify::NotifyTarget> targets;
  for (const auto& n : c.notifications) {
    notify::NotifyTarget nt;
    nt.kind =
        n.type == "slack" ? notify::NotifyTarget::Kind::slack : notify::NotifyTarget::Kind::generic;
    if (!n.url_file.empty()) {
      auto u = read_secret_file(n.url_file);
      if (!u) return u.error();
      nt.url = *u;
    } else if (const char* v = std::getenv(n.url_env.c_str()); v && *v) {
      nt.url = v;
    } else {
      return make_error(ErrorCode::invalid_input,
                        "notification URL variable " + n.url_env + " is not set");
    }
    if (!n.hmac_secret_file.empty()) {
      auto sec = read_secret_file(n.hmac_secret_file);
      if (!sec) return sec.error();
      nt.hmac_secret = *sec;
    }
    targets.push_back(std::move(nt));
  }
  return targets;
}

Status read_http_secrets(const config::Config& c, http::HttpOptions& out) {
  out.listen = c.http.listen;
  for (auto [file, env, into] :
       {std::tuple{c.http.github_secret_file, "FLYTECD_GITHUB_SECRET", &out.github_secret},
        std::tuple{c.http.gitlab_token_file, "FLYTECD_GITLAB_TOKEN", &out.gitlab_token},
        std::tuple{c.http.generic_secret_file, "FLYTECD_WEBHOOK_SECRET", &out.generic_secret},
        std::tuple{c.http.sync_token_file, "FLYTECD_SYNC_TOKEN", &out.sync_token}}) {
    auto v = optional_secret(file, env);
    if (!v) return v.error();
    *into = *v;
  }
  return ok_status();
}

}  // namespace flytecd::run
