#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "daemon/common/result.hpp"
#include "daemon/k8s/client.hpp"
#include "daemon/k8s/settings.hpp"

namespace flytecd::k8s {

// The spec of a coordination.k8s.io/v1 Lease.
struct LeaseRecord {
  std::string holder;  // holderIdentity; empty = free (released)
  int lease_duration_seconds = 0;
  std::string acquire_time;  // MicroTime, RFC 3339 with microseconds
  std::string renew_time;
  int transitions = 0;  // leaseTransitions
  bool operator==(const LeaseRecord&) const = default;
};

struct ObservedLease {
  std::string resource_version;
  LeaseRecord record;
};

// Kubernetes MicroTime: "2026-11-29T13:10:48.123456Z".
std::string micro_time(std::chrono::system_clock::time_point t);

// Reads a Lease object (JSON). Errors: invalid_input on a body that is not a Lease.
Result<ObservedLease> parse_lease(const std::string& json);

// The Lease object to create (empty resource_version) or update (optimistic concurrency: the
// API server answers 409 Conflict when resource_version is stale).
nlohmann::json lease_object(const std::string& name, const std::string& lease_namespace,
                            const std::string& resource_version, const LeaseRecord& record);

// client-go's acquire-or-renew rule, pure. `unchanged_for` is how long (on this process's own
// monotonic clock) the record has been observed unchanged: expiry is judged by that, never by
// comparing renewTime with the local wall clock, so clock skew between replicas does not matter.
// Returns the record to write, or nullopt when another holder's lease is still valid.
std::optional<LeaseRecord> next_record(const LeaseRecord& current, const std::string& identity,
                                       std::chrono::milliseconds unchanged_for,
                                       int lease_duration_seconds, const std::string& now);

struct ElectorCallbacks {
  std::function<void()> started_leading;  // on the elector thread
  std::function<void()> stopped_leading;  // on the elector thread; stop writing now
};

// Leader election over one Lease, on its own thread: every retryPeriod it reads the Lease and
// creates, takes over (free or expired) or renews it with an update carrying resourceVersion
// (a 409 loses the race). A leader whose renewals fail for renewDeadline stops leading — which,
// with renewDeadline < leaseDuration, happens before anyone else may take the lease. stop()
// releases a held lease (holderIdentity emptied) so a follower takes over at once.
class LeaderElector {
 public:
  // `settings` resolved (lease_namespace set); starts the thread.
  static std::unique_ptr<LeaderElector> start(std::shared_ptr<Client> client,
                                              LeaderElectionSettings settings, std::string identity,
                                              ElectorCallbacks callbacks);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Stops the thread and releases the lease if held. Idempotent.
  void stop();
  // True while this process holds the lease and its last renewal is within renewDeadline.
  bool is_leader() const;
  // The holder last observed ("" before the first read or when free).
  std::string leader() const;
  const std::string& identity() const { return m_identity; }
  // The Lease API answered within the last leaseDuration.
  bool healthy() const;
  std::string last_error() const;

 private:
  LeaderElector(std::shared_ptr<Client> client, LeaderElectionSettings settings,
                std::string identity, ElectorCallbacks callbacks);
  void loop();
  bool try_acquire_or_renew();
  void release();
  std::string lease_path() const;
  int deadline_ms(std::chrono::steady_clock::time_point start) const;

  using Steady = std::chrono::steady_clock;
  std::shared_ptr<Client> m_client;
  LeaderElectionSettings m_settings;
  std::string m_identity;
  ElectorCallbacks m_callbacks;

  mutable std::mutex m_mu;
  std::condition_variable m_cv;
  bool m_stop = false;
  bool m_leading = false;
  Steady::time_point m_last_renew{};
  Steady::time_point m_last_contact{};
  std::optional<ObservedLease> m_observed;
  Steady::time_point m_observed_at{};
  std::string m_error;
  std::thread m_thread;
};

}  // namespace flytecd::k8s
