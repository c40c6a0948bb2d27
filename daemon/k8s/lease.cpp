#include "daemon/k8s/lease.hpp"

#include <ctime>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/log.hpp"

namespace flytecd::k8s {

std::string micro_time(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06lldZ", static_cast<long long>(us % 1000000));
  return std::string(buf) + frac;
}

Result<ObservedLease> parse_lease(const std::string& json) {
  // Every field's type is checked before it is read: json::value() throws on a wrong type, and
  // an API server (or a proxy) answering something else is an error, not an abort.
  auto j = nlohmann::json::parse(json, nullptr, false);
  const auto is_string_at = [](const nlohmann::json& o, const char* k) {
    return o.is_object() && o.contains(k) && o[k].is_string();
  };
  if (!j.is_object() || !is_string_at(j, "kind") || j["kind"] != "Lease" ||
      !j.contains("metadata") || !j["metadata"].is_object())
    return make_error(ErrorCode::invalid_input, "kubernetes: response is not a Lease");
  const auto& meta = j["metadata"];
  if (meta.contains("resourceVersion") && !is_string_at(meta, "resourceVersion"))
    return make_error(ErrorCode::invalid_input,
                      "kubernetes: Lease metadata.resourceVersion is not a string");
  ObservedLease o;
  if (is_string_at(meta, "resourceVersion"))
    o.resource_version = meta["resourceVersion"].get<std::string>();
  if (j.contains("spec") && j["spec"].is_object()) {
    const auto& s = j["spec"];
    auto str = [&](const char* k) {
      return s.contains(k) && s[k].is_string() ? s[k].get<std::string>() : std::string();
    };
    auto num = [&](const char* k) {
      return s.contains(k) && s[k].is_number_integer() ? s[k].get<int>() : 0;
    };
    o.record.holder = str("holderIdentity");
    o.record.acquire_time = str("acquireTime");
    o.record.renew_time = str("renewTime");
    o.record.lease_duration_seconds = num("leaseDurationSeconds");
    o.record.transitions = num("leaseTransitions");
  }
  return o;
}

nlohmann::json lease_object(const std::string& name, const std::string& lease_namespace,
                            const std::string& resource_version, const LeaseRecord& r) {
  nlohmann::json metadata = {{"name", name}, {"namespace", lease_namespace}};
  if (!resource_version.empty()) metadata["resourceVersion"] = resource_version;
  nlohmann::json spec = {{"holderIdentity", r.holder},
                         {"leaseDurationSeconds", r.lease_duration_seconds},
                         {"leaseTransitions", r.transitions}};
  if (!r.acquire_time.empty()) spec["acquireTime"] = r.acquire_time;
  if (!r.renew_time.empty()) spec["renewTime"] = r.renew_time;
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", metadata},
          {"spec", spec}};
}

std::optional<LeaseRecord> next_record(const LeaseRecord& current, const std::string& identity,
                                       std::chrono::milliseconds unchanged_for,
                                       int lease_duration_seconds, const std::string& now) {
  const bool mine = current.holder == identity;
  const bool expired =
      unchanged_for >= std::chrono::seconds(std::max(current.lease_duration_seconds, 0));
  if (!current.holder.empty() && !mine && !expired) return std::nullopt;
  LeaseRecord next = current;
  next.holder = identity;
  next.lease_duration_seconds = lease_duration_seconds;
  next.renew_time = now;
  if (!mine) {
    next.acquire_time = now;
    next.transitions = current.transitions + 1;
  }
  return next;
}

std::unique_ptr<LeaderElector> LeaderElector::start(std::shared_ptr<Client> client,
                                                    LeaderElectionSettings settings,
                                                    std::string identity,
                                                    ElectorCallbacks callbacks) {
  std::unique_ptr<LeaderElector> e(new LeaderElector(std::move(client), std::move(settings),
                                                     std::move(identity), std::move(callbacks)));
  e->m_thread = std::thread([p = e.get()] { p->loop(); });
  return e;
}

LeaderElector::LeaderElector(std::shared_ptr<Client> client, LeaderElectionSettings settings,
                             std::string identity, ElectorCallbacks callbacks)
    : m_client(std::move(client)),
      m_settings(std::move(settings)),
      m_identity(std::move(identity)),
      m_callbacks(std::move(callbacks)) {}

LeaderElector::~LeaderElector() { stop(); }

void LeaderElector::stop() {
  {
    std::lock_guard<std::mutex> lock(m_mu);
    m_stop = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

bool LeaderElector::is_leader() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_leading &&
         Steady::now() - m_last_renew < std::chrono::milliseconds(m_settings.renew_deadline_ms);
}

std::string LeaderElector::leader() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_observed ? m_observed->record.holder : std::string();
}

bool LeaderElector::healthy() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_last_contact != Steady::time_point{} &&
         Steady::now() - m_last_contact < std::chrono::milliseconds(m_settings.lease_duration_ms);
}

std::string LeaderElector::last_error() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_error;
}

std::string LeaderElector::lease_path() const {
  return "/apis/coordination.k8s.io/v1/namespaces/" + m_settings.lease_namespace + "/leases";
}

// Time left for this attempt: a leader must finish before its renew deadline; a follower gets
// one renew deadline per attempt.
int LeaderElector::deadline_ms(Steady::time_point start) const {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  std::lock_guard<std::mutex> lock(m_mu);
  auto budget = milliseconds(m_settings.renew_deadline_ms);
  if (m_leading)
    budget = std::min(budget, milliseconds(m_settings.renew_deadline_ms) -
                                  duration_cast<milliseconds>(start - m_last_renew));
  auto left = budget - duration_cast<milliseconds>(Steady::now() - start);
  return static_cast<int>(std::max<long long>(left.count(), 100));
}

bool LeaderElector::try_acquire_or_renew() {
  const auto start = Steady::now();
  auto fail = [&](const std::string& why) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_error = why;
    return false;
  };
  const int lease_s = m_settings.lease_duration_ms / 1000;
  const std::string path = lease_path() + "/" + m_settings.lease_name;
  auto got = m_client->request("GET", path, "", "", deadline_ms(start));
  if (!got) return fail(got.error().message);
  if (got->status == 404) {
    std::string now = micro_time(std::chrono::system_clock::now());
    LeaseRecord mine{m_identity, lease_s, now, now, 0};
    auto created = m_client->request(
        "POST", lease_path(),
        dump_json(lease_object(m_settings.lease_name, m_settings.lease_namespace, "", mine)),
        "application/json", deadline_ms(start));
    if (!created) return fail(created.error().message);
    if (created->status == 409) return false;  // another replica created it first
    if (created->status != 201 && created->status != 200)
      return fail("create lease: " + status_message(*created));
    auto obs = parse_lease(created->body);
    std::lock_guard<std::mutex> lock(m_mu);
    m_last_contact = Steady::now();
    m_observed = obs ? *obs : ObservedLease{"", mine};
    m_observed_at = m_last_contact;
    m_error.clear();
    return true;
  }
  if (got->status != 200) return fail("get lease: " + status_message(*got));
  auto obs = parse_lease(got->body);
  if (!obs) return fail(obs.error().message);
  std::chrono::milliseconds unchanged{};
  {
    std::lock_guard<std::mutex> lock(m_mu);
    m_last_contact = Steady::now();
    if (!m_observed || !(m_observed->record == obs->record)) m_observed_at = m_last_contact;
    m_observed = *obs;
    unchanged =
        std::chrono::duration_cast<std::chrono::milliseconds>(m_last_contact - m_observed_at);
  }
  auto next = next_record(obs->record, m_identity, unchanged, lease_s,
                          micro_time(std::chrono::system_clock::now()));
  if (!next) return false;  // held by someone else and not expired
  auto put =
      m_client->request("PUT", path,
                        dump_json(lease_object(m_settings.lease_name, m_settings.lease_namespace,
                                               obs->resource_version, *next)),
                        "application/json", deadline_ms(start));
  if (!put) return fail(put.error().message);
  if (put->status == 409) return false;  // lost the race (stale resourceVersion)
  if (put->status != 200) return fail("update lease: " + status_message(*put));
  auto written = parse_lease(put->body);
  std::lock_guard<std::mutex> lock(m_mu);
  m_observed = written ? *written : ObservedLease{"", *next};
  m_observed_at = Steady::now();
  m_error.clear();
  return true;
}

void LeaderElector::release() {
  const std::string path = lease_path() + "/" + m_settings.lease_name;
  const int timeout = std::min(m_settings.renew_deadline_ms, 2000);
  auto got = m_client->request("GET", path, "", "", timeout);
  if (!got || got->status != 200) return;
  auto obs = parse_lease(got->body);
  if (!obs || obs->record.holder != m_identity) return;
  LeaseRecord r = obs->record;
  std::string now = micro_time(std::chrono::system_clock::now());
  r.holder.clear();
  r.lease_duration_seconds = 1;
  r.renew_time = now;
  r.acquire_time = now;
  auto put =
      m_client->request("PUT", path,
                        dump_json(lease_object(m_settings.lease_name, m_settings.lease_namespace,
                                               obs->resource_version, r)),
                        "application/json", timeout);
  if (put && put->status == 200)
    log::get("flytecd")->info("leader election: released lease {}/{}", m_settings.lease_namespace,
                              m_settings.lease_name);
}

void LeaderElector::loop() {
  auto log = log::get("flytecd");
  const auto renew_deadline = std::chrono::milliseconds(m_settings.renew_deadline_ms);
  while (true) {
    const bool ok = try_acquire_or_renew();
    bool started = false, stopped = false;
    std::string holder, error;
    {
      std::lock_guard<std::mutex> lock(m_mu);
      const auto now = Steady::now();
      if (ok) {
        m_last_renew = now;
        started = !m_leading;
        m_leading = true;
      } else if (m_leading && (now - m_last_renew >= renew_deadline ||
                               (m_observed && m_observed->record.holder != m_identity))) {
        // Out of time, or the lease visibly belongs to someone else: stop writing now.
        m_leading = false;
        stopped = true;
      }
      holder = m_observed ? m_observed->record.holder : "";
      error = m_error;
    }
    if (started) {
      log->info("leader election: {} acquired lease {}/{}", m_identity, m_settings.lease_namespace,
                m_settings.lease_name);
      if (m_callbacks.started_leading) m_callbacks.started_leading();
    }
    if (stopped) {
      log->warn(
          "leader election: {} could not renew lease {}/{} within {} ms ({}); stopped "
          "leading",
          m_identity, m_settings.lease_namespace, m_settings.lease_name,
          m_settings.renew_deadline_ms, error.empty() ? "lost the lease" : error);
      if (m_callbacks.stopped_leading) m_callbacks.stopped_leading();
    }
    std::unique_lock<std::mutex> lock(m_mu);
    if (m_cv.wait_for(lock, std::chrono::milliseconds(m_settings.retry_period_ms),
                      [&] { return m_stop; }))
      break;
  }
  bool was_leading = false;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    was_leading = m_leading;
    m_leading = false;
  }
  if (was_leading) {
    if (m_callbacks.stopped_leading) m_callbacks.stopped_leading();
    release();
  }
}

}  // namespace flytecd::k8s
