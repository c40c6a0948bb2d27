#include "daemon/k8s/in_cluster.hpp"

#include "daemon/common/log.hpp"
#include "daemon/k8s/record_store.hpp"
#include "daemon/pass/applied_record.hpp"

namespace flytecd::k8s {

Result<std::unique_ptr<InCluster>> InCluster::start(const Settings& settings,
                                                    ElectorCallbacks callbacks) {
  const bool api_used = settings.leader_election.enabled || settings.config_map.enabled;
  if (!api_used && !settings.applied_record.on(false)) return std::unique_ptr<InCluster>();
  auto resolved = resolve_in_cluster(settings);
  if (!resolved) return resolved.error();
  auto client = Client::create(*resolved);
  if (!client) return client.error();
  std::unique_ptr<InCluster> ic(new InCluster());
  ic->m_settings = *resolved;
  ic->m_client = std::shared_ptr<Client>(std::move(*client));
  auto log = log::get("flytecd");
  if (resolved->config_map.enabled) {
    const auto& cm = resolved->config_map;
    log->info("ConfigMap mode: overrides go to configmap {}/{} ({}) via {}{}", cm.cm_namespace,
              cm.name, cm.key, resolved->api_server,
              resolved->config_map.restart_deployment.empty()
                  ? ""
                  : ", restarting deployment " + resolved->config_map.restart_deployment);
  }
  const auto& ar = resolved->applied_record;
  if (ar.on(true))
    log->info("applied-revision record: ConfigMap {}/{}", ar.record_namespace, ar.name);
  if (resolved->events.enabled) {
    // About the record's ConfigMap, so `kubectl describe cm NAME` lists them beside the record.
    // With the record off the name is still the involved object (an Event may name an object
    // that does not exist; `kubectl get events` lists it).
    InvolvedObject about{"v1", "ConfigMap", ar.name, ar.record_namespace, ""};
    ic->m_events = make_event_recorder(ic->m_client, std::move(about),
                                       resolve_identity(resolved->leader_election),
                                       std::chrono::milliseconds(resolved->events.interval_ms));
    log->info("kubernetes events: about ConfigMap {}/{}, the same event at most every {} s",
              ar.record_namespace, ar.name, resolved->events.interval_ms / 1000);
  }
  if (resolved->leader_election.enabled) {
    const auto& le = resolved->leader_election;
    std::string identity = resolve_identity(le);
    log->info(
        "leader election: lease {}/{} at {} as {} (duration {} ms, renew deadline {} ms, "
        "retry {} ms)",
        le.lease_namespace, le.lease_name, resolved->api_server, identity, le.lease_duration_ms,
        le.renew_deadline_ms, le.retry_period_ms);
    ic->m_elector =
        LeaderElector::start(ic->m_client, le, std::move(identity), std::move(callbacks));
  }
  return ic;
}

InCluster::~InCluster() { stop(); }

void InCluster::stop() {
  if (m_elector) m_elector->stop();
}

nlohmann::json InCluster::status() const {
  if (!m_elector) return {{"enabled", false}, {"isLeader", true}};
  const auto& le = m_settings.leader_election;
  nlohmann::json j = {{"enabled", true},
                      {"identity", m_elector->identity()},
                      {"isLeader", m_elector->is_leader()},
                      {"leader", m_elector->leader()},
                      {"lease", le.lease_namespace + "/" + le.lease_name}};
  if (auto e = m_elector->last_error(); !e.empty()) j["error"] = e;
  return j;
}

std::unique_ptr<pass::RecordStore> InCluster::record_store() const {
  const auto& ar = m_settings.applied_record;
  if (!ar.on(true)) return nullptr;
  return make_config_map_record_store(m_client, ar.record_namespace, ar.name);
}

std::string InCluster::describe_record() const {
  const auto& ar = m_settings.applied_record;
  return ar.on(true) ? "ConfigMap " + ar.record_namespace + "/" + ar.name : std::string();
}

void InCluster::on_pass(const pass::Report& report) {
  if (m_events) (void)m_events->on_pass(report);
}

}  // namespace flytecd::k8s
