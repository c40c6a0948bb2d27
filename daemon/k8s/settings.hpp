#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "daemon/common/result.hpp"

namespace flytecd::k8s {

// Leader election with a coordination.k8s.io/v1 Lease (client-go's default timings).
struct LeaderElectionSettings {
  bool enabled = false;
  std::string lease_name = "flytecd";
  std::string lease_namespace;    // empty = the API settings' namespace
  std::string identity;           // empty = $POD_NAME, else "<host name>-<pid>"
  int lease_duration_ms = 15000;  // whole seconds on the wire (leaseDurationSeconds)
  int renew_deadline_ms = 10000;  // a leader that cannot renew for this long stops writing
  int retry_period_ms = 2000;
};

// ConfigMap mode (Flyte RFC 3749): overrides go to the ConfigMap FlyteAdmin mounts.
struct ConfigMapSettings {
  bool enabled = false;
  std::string cm_namespace;  // empty = the API settings' namespace
  std::string name = "flyte-admin-overrides";
  std::string key = "overrides.yaml";
  std::string restart_deployment;  // FlyteAdmin's Deployment (same namespace); empty = no restart
};

// The applied-revision record (daemon/pass/applied_record.hpp) as a ConfigMap in flytecd's
// namespace, written with resourceVersion (daemon/k8s/record_store.hpp).
struct AppliedRecordSettings {
  // Unset = on when leader election or ConfigMap mode is (flytecd talks to the API anyway);
  // true alone also starts the Kubernetes client (a single replica without either).
  std::optional<bool> enabled;
  std::string name = "flytecd-applied-revision";
  std::string record_namespace;  // empty = the API settings' namespace
  bool on(bool in_cluster) const { return enabled.value_or(in_cluster); }
};

// Kubernetes Events about passes (daemon/k8s/events.hpp), posted while flytecd uses the API.
struct EventSettings {
  bool enabled = true;
  int interval_ms = 300000;  // the same reason and message are not posted again within this
};

// The `kubernetes:` section of flytecd's configuration. API access defaults to in-cluster:
// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the service account token and CA
// under /var/run/secrets/kubernetes.io/serviceaccount (files, re-read so rotation works).
//   kubernetes:
//     apiServer: https://10.0.0.1:443     # optional
//     tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
//     caFile: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
//     namespace: flytecd                  # default: the service account's namespace file
//     leaderElection: {enabled: true, leaseName: flytecd, leaseDuration: 15s,
//                      renewDeadline: 10s, retryPeriod: 2s, identity: …}
//     configMap: {enabled: true, namespace: flyte, name: flyte-admin-overrides,
//                 key: overrides.yaml, restartDeployment: flyteadmin}
//     appliedRecord: {enabled: true, name: flytecd-applied-revision, namespace: flytecd}
//     events: {enabled: true, interval: 5m}
struct Settings {
  std::string api_server;
  std::string token_file;
  std::string ca_file;
  std::string api_namespace;
  LeaderElectionSettings leader_election;
  ConfigMapSettings config_map;
  AppliedRecordSettings applied_record;
  EventSettings events;
};

inline constexpr const char* k_service_account_dir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// Reads the `kubernetes:` mapping over `out`. `where` prefixes errors ("config FILE:LINE").
// Unknown keys, bad durations and renewDeadline >= leaseDuration are errors.
Status parse_settings(const YAML::Node& node, const std::string& where, Settings& out);

// Fills the in-cluster defaults for unset API fields (environment, service account files).
// Errors: no API server (not in a cluster and none configured).
Result<Settings> resolve_in_cluster(Settings s);

// The leader-election identity: configured, else $POD_NAME, else "<host name>-<pid>".
std::string resolve_identity(const LeaderElectionSettings& s);

}  // namespace flytecd::k8s
