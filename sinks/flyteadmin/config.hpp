#pragma once

#include <string>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::sinks::flyteadmin {

// FlyteAdmin connection settings, with the same keys as flytectl's `admin:` section of
// ~/.flyte/config.yaml. Secrets are referenced (file / environment variable), never inlined.
struct AdminConfig {
  std::string endpoint;               // "dns:///host:port", "host:port"; empty = embedded emulator
  bool insecure = false;              // plaintext gRPC (only when asked)
  bool insecure_skip_verify = false;  // not supported by gRPC C++; rejected at connect time
  std::string ca_cert_file_path;      // custom CA bundle; empty = system CAs
  std::string auth_type;              // "" (no auth) or "ClientSecret"
  std::string client_id = "flytepropeller";
  std::string client_secret_location = "/etc/secrets/client_secret";
  std::string client_secret_env_var;  // takes precedence over the file
  std::vector<std::string> scopes;
  std::string audience;
  std::string token_url;             // skips discovery when set
  std::string authorization_header;  // metadata key; default from /config/v1/flyte_client, else
                                     // flyte-authorization
  std::string http_endpoint;         // base URL for discovery; default https://<endpoint host>
  int per_rpc_timeout_ms = 15000;
  int max_retries = 4;
  // RPCs in flight at once (maxInFlight). FlyteAdmin serves each on a database connection, and
  // its pool defaults to 100 open ones.
  int max_in_flight = 64;
};

// Reads the `admin:` section of a flytectl config file (YAML). Unknown keys are ignored, as
// flytectl ignores sections it does not use; wrong types are errors naming the key.
Result<AdminConfig> load_flytectl_config(const std::string& path);

// Applies keys from a parsed YAML `admin:` mapping given as (key, scalar or list) pairs.
// Pure helper for load_flytectl_config and flytecd's own config file.
Status apply_admin_key(AdminConfig& cfg, const std::string& key,
                       const std::vector<std::string>& values);

// The keys apply_admin_key reads, in its order ("endpoint", "insecure", …): a section that is
// flytecd's own (flyte2:) refuses any other, where flytectl's admin: ignores them.
const std::vector<std::string>& admin_keys();

// Reads the client secret from the configured env var or file (whitespace-trimmed).
// The error names the source, never the value.
Result<std::string> read_client_secret(const AdminConfig& cfg);

}  // namespace flytecd::sinks::flyteadmin
