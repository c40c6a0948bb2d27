#include "daemon/k8s/events.hpp"

#include <condition_variable>
#include <ctime>
#include <deque>
#include <thread>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/log.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "daemon/pass/pass.hpp"

namespace flytecd::k8s {
namespace {

// A commit id short (as `history` shows it); a directory revision ("dir:/path") whole.
std::string short_revision(const std::string& rev) {
  const bool commit =
      rev.size() == 40 && rev.find_first_not_of("0123456789abcdef") == std::string::npos;
  return commit ? rev.substr(0, 12) : rev;
}

Event make(const char* type, const char* reason, const std::string& message) {
  return Event{type, reason, scan::printable(message, k_max_event_message - 32)};
}

std::string drift_message(const pass::Report& r, const std::string& rev) {
  const auto& drift = r.plan.drift;
  size_t healed = 0;
  for (const auto& d : drift) healed += d.healed;
  std::string how;
  if (r.mode == pass::Mode::plan)
    how = "suspended, left in place";
  else if (healed == drift.size())
    how = "reverted";
  else if (healed == 0)
    how = "self-heal off, left in place";
  else
    how = std::to_string(healed) + " reverted, " + std::to_string(drift.size() - healed) +
          " left in place";
  std::string m =
      rev + ": " + std::to_string(drift.size()) + " object(s) changed outside Git (" + how + "): ";
  constexpr size_t k_named = 3;
  for (size_t i = 0; i < drift.size() && i < k_named; ++i)
    m += (i ? ", " : "") + scan::printable(drift[i].key, 120);
  if (drift.size() > k_named) m += " and " + std::to_string(drift.size() - k_named) + " more";
  return m;
}

// Kubernetes Time: RFC 3339, whole seconds, UTC.
std::string k8s_time(std::chrono::system_clock::time_point t) {
  return text::rfc3339_utc(static_cast<int64_t>(std::chrono::system_clock::to_time_t(t)));
}

}  // namespace

std::optional<Event> event_for(const pass::Report& r) {
  const std::string rev = "revision " + short_revision(r.revision);
  if (r.outcome == pass::Outcome::failed) {
    std::string m = rev + " failed";
    if (r.applied.failed)
      m += " (" + std::to_string(r.applied.failed) + " of " +
           std::to_string(r.applied.results.size()) + " steps failed)";
    m += ": " + (r.error ? r.error->message : std::string("did not converge"));
    return make("Warning", "ReconciliationFailed", m);
  }
  if (r.outcome == pass::Outcome::refused)
    return make("Warning", "RevisionRefused",
                rev + " refused, nothing executed: " +
                    (r.guard.reason.empty() && r.error ? r.error->message : r.guard.reason));
  if (!r.plan.drift.empty()) return make("Warning", "DriftDetected", drift_message(r, rev));
  if (!r.executed()) return std::nullopt;
  // What the pass did (steps that ran and succeeded), not what it planned: a registration
  // orphaned with prune off, or an adoption, is not a change.
  auto count = [&](sinks::Action a, sinks::ObjectKind k) {
    size_t c = 0;
    for (const auto& s : r.applied.results) c += s.status && s.step.action == a && s.step.kind == k;
    return c;
  };
  auto n = [&](sinks::Action a, sinks::ObjectKind k) { return std::to_string(count(a, k)); };
  size_t registered = 0, activated = 0, removed = 0, steps = 0;
  for (const auto& s : r.applied.results)
    steps += s.status && s.step.action != sinks::Action::adopt;
  for (const auto& o : r.registrations.items) {
    using RS = registration::RegistrationState;
    registered += o.state == RS::registered;
    activated += o.state == RS::activated;
    removed += o.state == RS::removed;
  }
  if (steps + registered + activated + removed == 0) return std::nullopt;
  using sinks::Action;
  using sinks::ObjectKind;
  std::string m = rev + " applied: projects +" + n(Action::create, ObjectKind::project) + " ~" +
                  n(Action::update, ObjectKind::project) + " archived " +
                  n(Action::remove, ObjectKind::project) + " · overrides +" +
                  n(Action::create, ObjectKind::override_attr) + " ~" +
                  std::to_string(count(Action::update, ObjectKind::override_attr) +
                                 count(Action::replace, ObjectKind::override_attr)) +
                  " -" + n(Action::remove, ObjectKind::override_attr);
  if (registered + activated + removed)
    m += " · registrations: " + std::to_string(registered) + " registered, " +
         std::to_string(activated) + " activated, " + std::to_string(removed) + " removed";
  return make("Normal", "ReconciliationSucceeded", m);
}

nlohmann::json event_object(const Event& e, const InvolvedObject& about,
                            const std::string& instance, int count,
                            std::chrono::system_clock::time_point first,
                            std::chrono::system_clock::time_point last) {
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(last.time_since_epoch()).count();
  char hex[24];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(nanos));
  nlohmann::json involved = {{"apiVersion", about.api_version},
                             {"kind", about.kind},
                             {"name", about.name},
                             {"namespace", about.ns}};
  if (!about.uid.empty()) involved["uid"] = about.uid;
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", about.name + "." + hex},
            {"namespace", about.ns},
            {"labels", {{"app.kubernetes.io/managed-by", "flytecd"}}}}},
          {"involvedObject", involved},
          {"reason", e.reason},
          {"message", e.message},
          {"type", e.type},
          {"source", {{"component", "flytecd"}}},
          // core/v1's name for events.k8s.io's reportingController.
          {"reportingComponent", "flytecd"},
          {"reportingInstance", instance},
          {"action", "Reconcile"},
          {"firstTimestamp", k8s_time(first)},
          {"lastTimestamp", k8s_time(last)},
          {"count", count}};
}

std::optional<EventRateLimiter::Admitted> EventRateLimiter::admit(const Event& e, Time now) {
  auto key = std::make_pair(e.reason, e.message);
  auto it = m_seen.find(key);
  if (it != m_seen.end() && now - it->second.posted < m_interval) {
    if (it->second.held++ == 0) it->second.first_held = now;
    return std::nullopt;
  }
  Admitted a{1, now};
  if (it != m_seen.end() && it->second.held > 0) {
    a.count = it->second.held + 1;
    a.first = it->second.first_held;
  }
  // Forget what is past its interval so the map stays small over months of passes (repeats held
  // back are kept a while longer, to be counted when the event comes again).
  for (auto s = m_seen.begin(); s != m_seen.end();) {
    const auto age = now - s->second.posted;
    const bool stale = s->second.held == 0 ? age >= m_interval : age >= 10 * m_interval;
    s = stale && s->first != key ? m_seen.erase(s) : std::next(s);
  }
  m_seen[key] = Seen{now, 0, {}};
  return a;
}

EventRecorder::EventRecorder(Post post, InvolvedObject about, std::string instance,
                             std::chrono::milliseconds interval, Clock clock)
    : m_post(std::move(post)),
      m_about(std::move(about)),
      m_instance(std::move(instance)),
      m_clock(std::move(clock)),
      m_limiter(interval) {}

std::optional<Event> EventRecorder::on_pass(const pass::Report& report) {
  auto e = event_for(report);
  if (!e || !record(*e)) return std::nullopt;
  return e;
}

bool EventRecorder::record(const Event& e) {
  nlohmann::json obj;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    const auto now = m_clock();
    auto admitted = m_limiter.admit(e, now);
    if (!admitted) return false;
    obj = event_object(e, m_about, m_instance, admitted->count, admitted->first, now);
  }
  m_post(std::move(obj));
  return true;
}

namespace {

constexpr size_t k_queue_max = 32;
constexpr int k_post_timeout_ms = 5000;
constexpr int k_shutdown_flush_ms = 2000;

// Posts from its own thread so a slow API server never delays the reconcile loop.
class ClientEventRecorder final : public EventRecorder {
 public:
  ClientEventRecorder(std::shared_ptr<Client> client, InvolvedObject about, std::string instance,
                      std::chrono::milliseconds interval)
      : EventRecorder([this](nlohmann::json e) { enqueue(std::move(e)); }, about,
                      std::move(instance), interval),
        m_client(std::move(client)),
        m_object(std::move(about)) {
    m_thread = std::thread([this] { loop(); });
  }
  ~ClientEventRecorder() override {
    // Shutdown waits a little for queued events (a SIGTERM right after a pass), never for a slow
    // API server: what is left after that is dropped.
    flush(std::chrono::milliseconds(k_shutdown_flush_ms));
    {
      std::lock_guard<std::mutex> lock(m_qmu);
      m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
  }

  void flush(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(m_qmu);
    m_cv.wait_for(lock, timeout, [&] { return m_queue.empty() && !m_busy; });
  }

 private:
  void enqueue(nlohmann::json e) {
    {
      std::lock_guard<std::mutex> lock(m_qmu);
      if (m_queue.size() >= k_queue_max) {
        log::get("flytecd")->warn("kubernetes events: queue full, dropped event {}",
                                  e.value("reason", ""));
        return;
      }
      m_queue.push_back(std::move(e));
    }
    m_cv.notify_all();
  }

  void loop() {
    while (true) {
      nlohmann::json e;
      {
        std::unique_lock<std::mutex> lock(m_qmu);
        m_cv.wait(lock, [&] { return m_stop || !m_queue.empty(); });
        if (m_stop) return;
        e = std::move(m_queue.front());
        m_queue.pop_front();
        m_busy = true;
      }
      send(e);
      {
        std::lock_guard<std::mutex> lock(m_qmu);
        m_busy = false;
      }
      m_cv.notify_all();
    }
  }

  std::string object_path() const {
    const std::string group =
        m_object.api_version == "v1" ? "/api/v1" : "/apis/" + m_object.api_version;
    return group + "/namespaces/" + m_object.ns + "/" + text::ascii_lower(m_object.kind) + "s/" +
           m_object.name;
  }

  void send(nlohmann::json& e) {
    auto log = log::get("flytecd");
    if (m_uid.empty()) {
      // Best-effort: without a uid the event is still listed by `kubectl get events`.
      auto got = m_client->request("GET", object_path(), "", "", k_post_timeout_ms);
      if (got && got->status == 200) {
        auto j = nlohmann::json::parse(got->body, nullptr, false);
        if (j.is_object() && j.contains("metadata") && j["metadata"].is_object())
          m_uid = json_string(j["metadata"], "uid");
      }
    }
    if (!m_uid.empty()) e["involvedObject"]["uid"] = m_uid;
    const std::string path = "/api/v1/namespaces/" + m_object.ns + "/events";
    auto r = m_client->request("POST", path, dump_json(e), "application/json", k_post_timeout_ms);
    if (!r)
      log->warn("kubernetes events: {} {}: {}", e.value("reason", ""), path, r.error().message);
    else if (r->status != 201 && r->status != 200)
      log->warn("kubernetes events: {} {}: {}", e.value("reason", ""), path, status_message(*r));
  }

  std::shared_ptr<Client> m_client;
  InvolvedObject m_object;
  std::string m_uid;  // the poster thread's only
  std::mutex m_qmu;
  std::condition_variable m_cv;
  std::deque<nlohmann::json> m_queue;
  bool m_busy = false, m_stop = false;
  std::thread m_thread;
};

}  // namespace

std::unique_ptr<EventRecorder> make_event_recorder(std::shared_ptr<Client> client,
                                                   InvolvedObject about, std::string instance,
                                                   std::chrono::milliseconds interval) {
  return std::make_unique<ClientEventRecorder>(std::move(client), std::move(about),
                                               std::move(instance), interval);
}

}  // namespace flytecd::k8s
