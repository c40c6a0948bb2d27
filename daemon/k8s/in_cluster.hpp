#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/k8s/events.hpp"
#include "daemon/k8s/lease.hpp"
#include "daemon/k8s/settings.hpp"

namespace flytecd::pass {
class RecordStore;
struct Report;
}  // namespace flytecd::pass

namespace flytecd::k8s {

// What the daemon uses when it runs in Kubernetes: the API client, the leader elector, the
// applied-revision record's ConfigMap and the event recorder, built from the `kubernetes:`
// configuration (ConfigMap mode's sink is the target's: wiring::open_target). Thread-safe
// (leading(), healthy(), status() and on_pass() from any thread).
class InCluster {
 public:
  // nullptr when neither leader election, ConfigMap mode nor kubernetes.appliedRecord.enabled is
  // on. Errors: no API server, unreadable CA file.
  static Result<std::unique_ptr<InCluster>> start(const Settings& settings,
                                                  ElectorCallbacks callbacks);
  ~InCluster();

  // May this replica write? Always true without leader election.
  bool leading() const { return !m_elector || m_elector->is_leader(); }
  // Followers are ready while the Lease API answers.
  bool healthy() const { return !m_elector || m_elector->healthy(); }
  // This replica's leader-election identity (pod name by default), "" without leader election.
  std::string identity() const { return m_elector ? m_elector->identity() : ""; }
  // {"enabled", "identity", "isLeader", "leader", "lease", "error"} for /api/v1/status.
  nlohmann::json status() const;
  // The applied-revision record in its ConfigMap (kubernetes.appliedRecord; default
  // flytecd-applied-revision in flytecd's namespace), or null when appliedRecord is off. Each call
  // makes a new store over the shared client.
  std::unique_ptr<pass::RecordStore> record_store() const;
  std::string describe_record() const;  // "ConfigMap ns/name", or "" when off
  // After every pass (the daemon's publish step): a Kubernetes Event for a pass that changed
  // something, was refused, failed or found drift, rate-limited (kubernetes.events). Never
  // blocks on the API server and never fails: errors are logged. A no-op when events are off.
  void on_pass(const pass::Report& report);
  EventRecorder* events() const { return m_events.get(); }
  // Stops the elector (releasing a held lease). Idempotent.
  void stop();

 private:
  InCluster() = default;
  Settings m_settings;
  std::shared_ptr<Client> m_client;
  std::unique_ptr<LeaderElector> m_elector;
  std::unique_ptr<EventRecorder> m_events;
};

}  // namespace flytecd::k8s
