#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/k8s/configmap_sink.hpp"
#include "daemon/k8s/lease.hpp"
#include "daemon/k8s/settings.hpp"

namespace flytecd::k8s {

// What the daemon uses when it runs in Kubernetes: the API client, the leader elector and the
// ConfigMap-mode sink, built from the `kubernetes:` configuration. Thread-safe where the parts
// are (leading(), healthy() and status() from any thread; apply_overrides() from one).
class InCluster {
 public:
  // nullptr when neither leader election nor ConfigMap mode is enabled. Errors: no API server,
  // unreadable CA file.
  static Result<std::unique_ptr<InCluster>> start(const Settings& settings,
                                                  ElectorCallbacks callbacks);
  ~InCluster();

  // May this replica write? Always true without leader election.
  bool leading() const { return !m_elector || m_elector->is_leader(); }
  // Followers are ready while the Lease API answers.
  bool healthy() const { return !m_elector || m_elector->healthy(); }
  bool configmap_mode() const { return m_configmap != nullptr; }
  // {"enabled", "identity", "isLeader", "leader", "lease", "error"} for /api/v1/status.
  nlohmann::json status() const;
  Result<ConfigMapSink::Outcome> apply_overrides(const std::string& document,
                                                 const std::string& revision);
  std::string describe_configmap() const;
  // ConfigMap mode's sink (overrides and platform defaults; route it with
  // wiring::route_overrides), or null when ConfigMap mode is off. Owned by this object.
  sinks::configmap::ConfigMapSink* configmap_sink() const {
    return m_configmap ? m_configmap->sink().get() : nullptr;
  }
  // Stops the elector (releasing a held lease). Idempotent.
  void stop();

 private:
  InCluster() = default;
  Settings m_settings;
  std::shared_ptr<Client> m_client;
  std::unique_ptr<LeaderElector> m_elector;
  std::unique_ptr<ConfigMapSink> m_configmap;
};

}  // namespace flytecd::k8s
