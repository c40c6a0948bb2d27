#pragma once

#include "daemon/ledger/ledger.hpp"

#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/k8s/settings.hpp"
#include "daemon/model/loader.hpp"
#include "daemon/reconcile/plan.hpp"
#include "sinks/flyteadmin/config.hpp"
#include "sources/verify_policy.hpp"

namespace flytecd::config {

// flytecd's configuration: one YAML file, then environment variables, then flags (the caller
// applies flags last). Secrets are never values here: only file paths or variable names.
//
//   repo: /srv/flyte-gitops          # directory holding the documents
//   stateDir: /var/lib/flytecd       # ledger (SQLite) and the embedded emulator's database
//   flytectlConfig: ~/.flyte/config.yaml   # optional: read `admin:` from flytectl's file
//   admin: {endpoint: dns:///flyte.example.com:443, authType: ClientSecret, ...}  # flytectl keys
//   policy: {selfHeal: true, prune: true, maxPruneShare: 0.5, allowMassPrune: false,
//            requireDigestPins: false}
//   domains: [development, staging, production]
//   parallelism: 8
//   git: {url: https://github.com/org/flyte-config, ref: main, path: flyte, username:
//   x-access-token,
//         passwordFile: /etc/flytecd/git-token, sshKeyFile: …, sshKnownHostsFile: …,
//         allowedSignersFile: …}
//   interval: 3m
//   http: {listen: 0.0.0.0:8080, ui: true, githubSecretFile: …, gitlabTokenFile: …,
//   genericSecretFile: …, syncTokenFile: …} notifications: [{type: slack, urlFile:
//   /etc/flytecd/slack-url}, {type: generic, urlEnv: HOOK_URL, hmacSecretFile: …}]
// Where documents come from when running as a daemon: a Git remote, else the `repo` directory.
struct GitConfig {
  std::string url;  // https://, ssh://, git://, file:// or a local path; empty = use `repo` dir
  std::string ref = "main";
  std::string path;                                   // sub-path inside the repository
  std::string username, password_file, password_env;  // https
  std::string ssh_key_file, ssh_known_hosts_file, ssh_passphrase_env;  // ssh
  std::string allowed_signers_file;  // set = require SSH-signed commits from these keys
};

struct HttpConfig {
  std::string listen = "127.0.0.1:8080";
  std::string github_secret_file, gitlab_token_file, generic_secret_file, sync_token_file;
  bool ui = true;  // GET / serves the read-only web page (false: 404)
  // Environment alternatives (FLYTECD_GITHUB_SECRET etc. are read when the files are unset).
};

struct NotificationConfig {
  std::string type = "generic";  // generic | slack
  std::string url_file;          // webhook URLs carry secrets (Slack): read from a file…
  std::string url_env;           // …or an environment variable
  std::string hmac_secret_file;  // generic: X-Flytecd-Signature
};

// Where workflow packages come from and how they are fetched (see sources/oci/fetcher.hpp):
//   packages:
//     registry: registry.example.com    # FlyteRegistration's registry
//     cacheDir: /var/cache/flytecd      # default <stateDir>/packages
//     cacheMaxBytes: 1073741824
//     maxPackageBytes: 268435456        # decompressed bytes of one package (refused above)
//     memoryBudgetBytes: 268435456      # held at once by package reading, all registrations
//     caFile: /etc/flytecd/registry-ca.pem
//     dockerConfig: /etc/flytecd/docker/config.json
//     plainHttpRegistries: [127.0.0.1:5000]
//     fetchTimeout: 5m                  # one package (manifests, token, blob, retries) in all
//     stallTimeout: 30s                 # a transfer that moves no byte this long is retried
struct PackagesConfig {
  std::string registry;   // FlyteRegistration: <registry>/<workflowPackageUri>:<workflowVersion>
  std::string cache_dir;  // default <stateDir>/packages
  uint64_t cache_max_bytes = 1ull << 30;
  uint64_t max_package_bytes = 256ull << 20;    // registration::k_default_max_package_bytes
  uint64_t memory_budget_bytes = 256ull << 20;  // registration::k_default_memory_budget_bytes
  std::string ca_file;
  std::string docker_config;
  std::vector<std::string> plain_http_registries;
  int fetch_timeout_seconds = 300;  // sources::oci::FetchOptions::package_timeout
  int stall_timeout_seconds = 30;   // sources::oci::FetchOptions::stall_timeout
  // Signature policies by package address prefix (the longest matching prefix applies to a
  // registration without its own verify:), and the sigstore trusted root keyless ones check.
  std::vector<sources::VerifySpec> verify;
  std::string trusted_root_file;
};

// log:
//   level: info    # trace, debug, info, warn, error, off (--log-level wins)
//   format: json   # text (default) or json: one object per line (--log-format wins)
struct LogConfig {
  std::string level;   // "" = the command line's, else info
  std::string format;  // "" = the command line's, else text
};

// The `flyte2:` section: the target is Flyte 2's settings service instead of FlyteAdmin 1.x. Its
// keys are those of `admin:` (endpoint, insecure, caCertFilePath, authType, clientId, …); with no
// endpoint the target is the embedded Flyte 2 emulator.
struct Flyte2Config {
  bool enabled = false;  // the section is present (or FLYTECD_FLYTE2_ENDPOINT is set)
  sinks::flyteadmin::AdminConfig admin{};
};

struct Config {
  std::string repo = ".";
  std::string state_dir;
  sinks::flyteadmin::AdminConfig admin;
  Flyte2Config flyte2;
  reconcile::Policy policy;
  model::Policy documents;
  int parallelism = 8;
  double lock_wait_seconds = 10;  // how long a second writer waits for the state directory lock
  GitConfig git;
  double interval_seconds = 180;  // poll interval (1s..24h, milliseconds kept); +-10% jitter
  // How often a pass is whole even when only Git moved (a pass after a Git change observes only
  // the projects it touched, daemon): 0 = interval_seconds. 1s..24h.
  double drift_scan_seconds = 0;
  double drift_scan() const {
    return drift_scan_seconds > 0 ? drift_scan_seconds : interval_seconds;
  }
  HttpConfig http;
  std::vector<NotificationConfig> notifications;
  PackagesConfig packages;
  k8s::Settings kubernetes;   // leader election (Lease), ConfigMap mode
  ledger::Retention history;  // history.maxEntries (1000), history.maxAgeDays (90)
  LogConfig log;
};

// Defaults: state dir $XDG_STATE_HOME/flytecd or ~/.local/state/flytecd.
Config defaults();

// One plain key of the configuration file, from the schema load_file and apply_env read
// through: its dotted name ("git.url"), its environment variable ("" = none) and what it holds
// ("a duration like 30s, 5m or 1h"). Sections with their own parser (admin, kubernetes) are
// not listed key by key.
struct KeyInfo {
  std::string name;
  std::string env;
  std::string expected;
};
std::vector<KeyInfo> keys();

// Reads a config file over `cfg`. Errors name the file, line and key.
Status load_file(const std::string& path, Config& cfg);

// Values out of range (policy.maxPruneShare outside [0, 1], a negative lockWait). Errors:
// invalid_input naming the key.
Status check_ranges(const Config& cfg);

// Environment: FLYTECD_REPO, FLYTECD_STATE_DIR, FLYTECD_ADMIN_ENDPOINT, FLYTECD_ADMIN_INSECURE,
// FLYTECD_FLYTECTL_CONFIG (flytectl file), FLYTECD_SELF_HEAL, FLYTECD_PRUNE.
Status apply_env(Config& cfg);

}  // namespace flytecd::config
