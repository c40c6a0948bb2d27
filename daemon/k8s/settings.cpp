#include "daemon/k8s/settings.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "daemon/common/duration.hpp"

namespace flytecd::k8s {
namespace {

// The range of each duration key (parsed by daemon/common/duration): a lease or retry period
// near zero is a busy loop against the API server; none is longer than a day.
DurationRange range_of(const std::string& key) {
  using std::chrono::hours, std::chrono::milliseconds, std::chrono::seconds;
  if (key == "leaderElection.leaseDuration") return {seconds(1), hours(24)};
  if (key == "events.interval") return {seconds(1), hours(24)};
  return {milliseconds(100), hours(24)};  // renewDeadline, retryPeriod
}

std::string trimmed_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

Status unknown(const std::string& where, const std::string& key, const char* expected) {
  return make_error(ErrorCode::invalid_input,
                    where + ": kubernetes." + key + ": unknown key (expected " + expected + ")");
}

Status read_duration(const YAML::Node& v, const std::string& where, const std::string& key,
                     int& ms) {
  auto d = parse_duration(v.as<std::string>(), range_of(key));
  if (!d)
    return make_error(ErrorCode::invalid_input,
                      where + ": kubernetes." + key + ": " + d.error().message);
  ms = static_cast<int>(d->count());  // at most 24 h: fits
  return ok_status();
}

Status not_a_mapping(const std::string& where, const char* key) {
  return make_error(ErrorCode::invalid_input,
                    where + ": kubernetes." + key + ": expected a mapping");
}

Status parse_leader_election(const YAML::Node& v, const std::string& where,
                             LeaderElectionSettings& le) {
  if (!v.IsMap()) return not_a_mapping(where, "leaderElection");
  for (const auto& f : v) {
    const std::string fk = f.first.Scalar();
    const std::string path = "leaderElection." + fk;
    Status s = ok_status();
    if (fk == "enabled")
      le.enabled = f.second.as<bool>();
    else if (fk == "leaseName")
      le.lease_name = f.second.as<std::string>();
    else if (fk == "namespace")
      le.lease_namespace = f.second.as<std::string>();
    else if (fk == "identity")
      le.identity = f.second.as<std::string>();
    else if (fk == "leaseDuration")
      s = read_duration(f.second, where, path, le.lease_duration_ms);
    else if (fk == "renewDeadline")
      s = read_duration(f.second, where, path, le.renew_deadline_ms);
    else if (fk == "retryPeriod")
      s = read_duration(f.second, where, path, le.retry_period_ms);
    else
      return unknown(where, path,
                     "enabled, leaseName, namespace, identity, leaseDuration, "
                     "renewDeadline, retryPeriod");
    if (!s) return s;
  }
  return ok_status();
}

Status parse_config_map(const YAML::Node& v, const std::string& where, ConfigMapSettings& cm) {
  if (!v.IsMap()) return not_a_mapping(where, "configMap");
  for (const auto& f : v) {
    const std::string fk = f.first.Scalar();
    if (fk == "enabled")
      cm.enabled = f.second.as<bool>();
    else if (fk == "namespace")
      cm.cm_namespace = f.second.as<std::string>();
    else if (fk == "name")
      cm.name = f.second.as<std::string>();
    else if (fk == "key")
      cm.key = f.second.as<std::string>();
    else if (fk == "restartDeployment")
      cm.restart_deployment = f.second.as<std::string>();
    else
      return unknown(where, "configMap." + fk, "enabled, namespace, name, key, restartDeployment");
  }
  return ok_status();
}

Status parse_applied_record(const YAML::Node& v, const std::string& where,
                            AppliedRecordSettings& ar) {
  if (!v.IsMap()) return not_a_mapping(where, "appliedRecord");
  for (const auto& f : v) {
    const std::string fk = f.first.Scalar();
    if (fk == "enabled")
      ar.enabled = f.second.as<bool>();
    else if (fk == "name")
      ar.name = f.second.as<std::string>();
    else if (fk == "namespace")
      ar.record_namespace = f.second.as<std::string>();
    else
      return unknown(where, "appliedRecord." + fk, "enabled, name, namespace");
  }
  if (ar.name.empty())
    return make_error(ErrorCode::invalid_input,
                      where + ": kubernetes.appliedRecord.name: must not be empty");
  return ok_status();
}

Status parse_events(const YAML::Node& v, const std::string& where, EventSettings& ev) {
  if (!v.IsMap()) return not_a_mapping(where, "events");
  for (const auto& f : v) {
    const std::string fk = f.first.Scalar();
    if (fk == "enabled") {
      ev.enabled = f.second.as<bool>();
    } else if (fk == "interval") {
      if (auto s = read_duration(f.second, where, "events.interval", ev.interval_ms); !s) return s;
    } else {
      return unknown(where, "events." + fk, "enabled, interval");
    }
  }
  return ok_status();
}

// client-go's rules for the lease timings.
Status check_leader_election(const LeaderElectionSettings& le, const std::string& where) {
  if (le.lease_duration_ms % 1000 != 0)
    return make_error(ErrorCode::invalid_input,
                      where +
                          ": kubernetes.leaderElection.leaseDuration: whole seconds only "
                          "(the Lease stores leaseDurationSeconds)");
  // The leader must give up before anyone may take the lease over.
  if (le.renew_deadline_ms >= le.lease_duration_ms)
    return make_error(ErrorCode::invalid_input,
                      where +
                          ": kubernetes.leaderElection: renewDeadline must be shorter than "
                          "leaseDuration");
  if (le.retry_period_ms >= le.renew_deadline_ms)
    return make_error(ErrorCode::invalid_input,
                      where +
                          ": kubernetes.leaderElection: retryPeriod must be shorter than "
                          "renewDeadline");
  return ok_status();
}

}  // namespace

Status parse_settings(const YAML::Node& node, const std::string& where, Settings& out) {
  if (!node.IsMap())
    return make_error(ErrorCode::invalid_input, where + ": kubernetes: expected a mapping");
  try {
    for (const auto& kv : node) {
      const std::string k = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      Status s = ok_status();
      if (k == "apiServer")
        out.api_server = v.as<std::string>();
      else if (k == "tokenFile")
        out.token_file = v.as<std::string>();
      else if (k == "caFile")
        out.ca_file = v.as<std::string>();
      else if (k == "namespace")
        out.api_namespace = v.as<std::string>();
      else if (k == "leaderElection")
        s = parse_leader_election(v, where, out.leader_election);
      else if (k == "configMap")
        s = parse_config_map(v, where, out.config_map);
      else if (k == "appliedRecord")
        s = parse_applied_record(v, where, out.applied_record);
      else if (k == "events")
        s = parse_events(v, where, out.events);
      else
        return unknown(where, k,
                       "apiServer, tokenFile, caFile, namespace, leaderElection, configMap, "
                       "appliedRecord, events");
      if (!s) return s;
    }
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::invalid_input, where + ": kubernetes: " + e.msg);
  }
  return check_leader_election(out.leader_election, where);
}

Result<Settings> resolve_in_cluster(Settings s) {
  const std::string sa = k_service_account_dir;
  if (s.api_server.empty()) {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host)
      return make_error(ErrorCode::invalid_input,
                        "kubernetes: not running in a cluster (KUBERNETES_SERVICE_HOST unset) "
                        "and kubernetes.apiServer is not configured");
    std::string h = host;
    if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
    s.api_server = "https://" + h + ":" + (port && *port ? port : "443");
  }
  if (s.token_file.empty()) s.token_file = sa + "/token";
  if (s.ca_file.empty()) s.ca_file = sa + "/ca.crt";
  if (s.api_namespace.empty()) s.api_namespace = trimmed_file(sa + "/namespace");
  if (s.api_namespace.empty()) s.api_namespace = "default";
  if (s.leader_election.lease_namespace.empty())
    s.leader_election.lease_namespace = s.api_namespace;
  if (s.config_map.cm_namespace.empty()) s.config_map.cm_namespace = s.api_namespace;
  if (s.applied_record.record_namespace.empty())
    s.applied_record.record_namespace = s.api_namespace;
  return s;
}

std::string resolve_identity(const LeaderElectionSettings& s) {
  if (!s.identity.empty()) return s.identity;
  if (const char* pod = std::getenv("POD_NAME"); pod && *pod) return pod;
  // Host name plus pid: two processes on one host must not share an identity.
  char host[256] = {};
  std::string h = gethostname(host, sizeof(host) - 1) == 0 && host[0] ? host : "flytecd";
  return h + "-" + std::to_string(::getpid());
}

}  // namespace flytecd::k8s
