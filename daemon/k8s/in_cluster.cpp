#include "daemon/k8s/in_cluster.hpp"

#include "daemon/common/log.hpp"

namespace flytecd::k8s {

Result<std::unique_ptr<InCluster>> InCluster::start(const Settings& settings,
                                                    ElectorCallbacks callbacks) {
  if (!settings.leader_election.enabled && !settings.config_map.enabled)
    return std::unique_ptr<InCluster>();
  auto resolved = resolve_in_cluster(settings);
  if (!resolved) return resolved.error();
  auto client = Client::create(*resolved);
  if (!client) return client.error();
  std::unique_ptr<InCluster> ic(new InCluster());
  ic->m_settings = *resolved;
  ic->m_client = std::shared_ptr<Client>(std::move(*client));
  auto log = log::get("flytecd");
  if (resolved->config_map.enabled) {
    ic->m_configmap = std::make_unique<ConfigMapSink>(ic->m_client, resolved->config_map);
    log->info("ConfigMap mode: overrides go to {} via {}{}", ic->m_configmap->describe(),
              resolved->api_server,
              resolved->config_map.restart_deployment.empty()
                  ? ""
                  : ", restarting deployment " + resolved->config_map.restart_deployment);
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

Result<ConfigMapSink::Outcome> InCluster::apply_overrides(const std::string& document,
                                                          const std::string& revision) {
  if (!m_configmap) return make_error(ErrorCode::internal, "ConfigMap mode is off");
  return m_configmap->apply(document, revision);
}

std::string InCluster::describe_configmap() const {
  return m_configmap ? m_configmap->describe() : std::string();
}

}  // namespace flytecd::k8s
