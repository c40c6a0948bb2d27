#pragma once

#include <string>

#include "daemon/common/result.hpp"
#include "daemon/model/loader.hpp"
#include "daemon/reconcile/plan.hpp"
#include "sinks/flyteadmin/config.hpp"

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
struct Config {
  std::string repo = ".";
  std::string state_dir;
  sinks::flyteadmin::AdminConfig admin;
  reconcile::Policy policy;
  model::Policy documents;
  int parallelism = 8;
};

// Defaults: state dir $XDG_STATE_HOME/flytecd or ~/.local/state/flytecd.
Config defaults();

// Reads a config file over `cfg`. Errors name the file, line and key.
Status load_file(const std::string& path, Config& cfg);

// Environment: FLYTECD_REPO, FLYTECD_STATE_DIR, FLYTECD_ADMIN_ENDPOINT, FLYTECD_ADMIN_INSECURE,
// FLYTECD_FLYTECTL_CONFIG (flytectl file), FLYTECD_SELF_HEAL, FLYTECD_PRUNE.
Status apply_env(Config& cfg);

}  // namespace flytecd::config
