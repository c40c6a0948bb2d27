#include "sinks/flyteadmin/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace flytecd::sinks::flyteadmin {
namespace {
std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}
Result<bool> parse_bool(const std::string& key, const std::string& v) {
  if (v == "true" || v == "True") return true;
  if (v == "false" || v == "False" || v.empty()) return false;
  return make_error(ErrorCode::invalid_input,
                    "admin." + key + ": '" + v + "' is not true or false");
}
Result<int> parse_int(const std::string& key, const std::string& v) {
  try {
    size_t pos = 0;
    int n = std::stoi(v, &pos);
    if (pos == v.size() && n >= 0) return n;
  } catch (...) {
  }
  return make_error(ErrorCode::invalid_input,
                    "admin." + key + ": '" + v + "' is not a non-negative integer");
}
// flytectl durations: "15s", "500ms", "1m".
Result<int> parse_duration_ms(const std::string& key, const std::string& v) {
  try {
    size_t pos = 0;
    double n = std::stod(v, &pos);
    std::string unit = v.substr(pos);
    double mult = unit == "ms" ? 1 : unit == "s" || unit.empty() ? 1000 : unit == "m" ? 60000 : -1;
    if (mult > 0 && n >= 0) return static_cast<int>(n * mult);
  } catch (...) {
  }
  return make_error(ErrorCode::invalid_input,
                    "admin." + key + ": '" + v + "' is not a duration like 15s or 500ms");
}
}  // namespace

Status apply_admin_key(AdminConfig& cfg, const std::string& key,
                       const std::vector<std::string>& values) {
  const std::string v = values.empty() ? std::string() : values.front();
  if (key == "endpoint")
    cfg.endpoint = v;
  else if (key == "insecure") {
    auto b = parse_bool(key, v);
    if (!b) return b.error();
    cfg.insecure = *b;
  } else if (key == "insecureSkipVerify") {
    auto b = parse_bool(key, v);
    if (!b) return b.error();
    cfg.insecure_skip_verify = *b;
  } else if (key == "caCertFilePath")
    cfg.ca_cert_file_path = v;
  else if (key == "authType")
    cfg.auth_type = v;
  else if (key == "clientId")
    cfg.client_id = v;
  else if (key == "clientSecretLocation")
    cfg.client_secret_location = v;
  else if (key == "clientSecretEnvVar")
    cfg.client_secret_env_var = v;
  else if (key == "scopes")
    cfg.scopes = values;
  else if (key == "audience")
    cfg.audience = v;
  else if (key == "tokenUrl")
    cfg.token_url = v;
  else if (key == "authorizationHeader")
    cfg.authorization_header = v;
  else if (key == "httpEndpoint")
    cfg.http_endpoint = v;
  else if (key == "perRetryTimeout") {
    auto d = parse_duration_ms(key, v);
    if (!d) return d.error();
    cfg.per_rpc_timeout_ms = *d;
  } else if (key == "maxRetries") {
    auto n = parse_int(key, v);
    if (!n) return n.error();
    cfg.max_retries = *n;
  } else if (key == "maxInFlight") {
    auto n = parse_int(key, v);
    if (!n) return n.error();
    cfg.max_in_flight = std::max(1, *n);
  }
  // Other flytectl keys (pkceConfig, deviceFlowConfig, command, proxyCommand, ...) are not used.
  return ok_status();
}

const std::vector<std::string>& admin_keys() {
  static const std::vector<std::string> k_keys = {"endpoint",
                                                  "insecure",
                                                  "insecureSkipVerify",
                                                  "caCertFilePath",
                                                  "authType",
                                                  "clientId",
                                                  "clientSecretLocation",
                                                  "clientSecretEnvVar",
                                                  "scopes",
                                                  "audience",
                                                  "tokenUrl",
                                                  "authorizationHeader",
                                                  "httpEndpoint",
                                                  "perRetryTimeout",
                                                  "maxRetries",
                                                  "maxInFlight"};
  return k_keys;
}

Result<AdminConfig> load_flytectl_config(const std::string& path) {
  // A directory (a ConfigMap mounted where a file was expected) makes YAML::LoadFile throw an
  // I/O exception, not a YAML::Exception.
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    return make_error(ErrorCode::invalid_input,
                      "flytectl config " + path + ": is a directory (expected a YAML file)");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::invalid_input, "flytectl config " + path + ":" +
                                                    std::to_string(e.mark.line + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return make_error(ErrorCode::invalid_input,
                      "flytectl config " + path + ": cannot be read: " + e.what());
  }
  AdminConfig cfg;
  YAML::Node admin = root["admin"];
  if (!admin || !admin.IsMap()) return cfg;
  for (const auto& kv : admin) {
    std::vector<std::string> values;
    if (kv.second.IsSequence()) {
      for (const auto& item : kv.second) values.push_back(item.as<std::string>(""));
    } else if (kv.second.IsScalar()) {
      values.push_back(kv.second.Scalar());
    } else if (!kv.second.IsNull()) {
      continue;  // nested sections such as pkceConfig
    }
    if (auto s = apply_admin_key(cfg, kv.first.Scalar(), values); !s)
      return make_error(
          ErrorCode::invalid_input,
          path + ":" + std::to_string(kv.first.Mark().line + 1) + ": " + s.error().message);
  }
  return cfg;
}

Result<std::string> read_client_secret(const AdminConfig& cfg) {
  if (!cfg.client_secret_env_var.empty()) {
    if (const char* v = std::getenv(cfg.client_secret_env_var.c_str()); v && *v) return trim(v);
    return make_error(ErrorCode::unauthenticated, "client secret: environment variable " +
                                                      cfg.client_secret_env_var + " is not set");
  }
  std::ifstream in(cfg.client_secret_location);
  if (!in)
    return make_error(ErrorCode::unauthenticated,
                      "client secret: cannot read " + cfg.client_secret_location);
  std::stringstream ss;
  ss << in.rdbuf();
  return trim(ss.str());
}

}  // namespace flytecd::sinks::flyteadmin
