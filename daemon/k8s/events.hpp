#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "daemon/k8s/client.hpp"

namespace flytecd::pass {
struct Report;
}

namespace flytecd::k8s {

// Kubernetes Events about reconcile passes (core/v1 Event, as Flux's and Argo CD's controllers
// post them), so `kubectl get events` and `kubectl describe` show what flytecd did.
struct Event {
  std::string type;  // "Normal" or "Warning"
  std::string reason;
  std::string message;  // one line, at most k_max_event_message bytes
  bool operator==(const Event&) const = default;
};

inline constexpr size_t k_max_event_message = 1024;

// The event a pass is worth, or none (a pass with nothing to do: no changes, no drift, no
// refusal, no failure). One per pass, the first that applies:
//   Warning ReconciliationFailed  the pass failed (observation, a step, a registration)
//   Warning RevisionRefused       the guard refused the revision; nothing of it was executed
//   Warning DriftDetected         objects changed outside Git (reverted, or left in place)
//   Normal  ReconciliationSucceeded  an executed pass changed something and converged
// The message names the revision (a commit id short, a directory whole) and the counts (of the
// steps that ran, for a success). Pure.
std::optional<Event> event_for(const pass::Report& report);

// What the events are about.
struct InvolvedObject {
  std::string api_version = "v1";
  std::string kind = "ConfigMap";
  std::string name;
  std::string ns;
  std::string uid;  // optional; `kubectl describe` matches events by it when set
};

// The core/v1 Event object to POST: named "<object>.<hex nanoseconds>" like client-go's,
// source.component and reportingComponent "flytecd", reportingInstance `instance`, the first and
// last time it happened and how many times (`count`). Pure.
nlohmann::json event_object(const Event& e, const InvolvedObject& about,
                            const std::string& instance, int count,
                            std::chrono::system_clock::time_point first,
                            std::chrono::system_clock::time_point last);

// Rate limit: an event with the same reason and message is not posted again within `interval`
// of the last time it was; repeats in between are counted and reported with the next post.
// Not thread-safe (EventRecorder locks around it).
class EventRateLimiter {
 public:
  using Time = std::chrono::system_clock::time_point;
  explicit EventRateLimiter(std::chrono::milliseconds interval) : m_interval(interval) {}
  struct Admitted {
    int count = 1;  // occurrences this post stands for (1 + the repeats held back)
    Time first;     // when the first of them happened
  };
  // nullopt: held back (posted within the interval).
  std::optional<Admitted> admit(const Event& e, Time now);

 private:
  struct Seen {
    Time posted;
    int held = 0;
    Time first_held;
  };
  std::chrono::milliseconds m_interval;
  std::map<std::pair<std::string, std::string>, Seen> m_seen;
};

// Maps passes to events, rate-limits them and hands the Event objects to `post`, which must not
// block for long (make_event_recorder's posts from its own thread). Best-effort: nothing here
// fails a pass. Thread-safe.
class EventRecorder {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;
  using Post = std::function<void(nlohmann::json event)>;
  EventRecorder(
      Post post, InvolvedObject about, std::string instance, std::chrono::milliseconds interval,
      Clock clock = [] { return std::chrono::system_clock::now(); });
  virtual ~EventRecorder() = default;

  // The daemon's one call after every pass (its publish step). Returns the event handed to
  // `post`, or nullopt (no event for this pass, or held back by the rate limit).
  std::optional<Event> on_pass(const pass::Report& report);
  // Posts `e` subject to the rate limit; returns whether it was handed to `post`.
  bool record(const Event& e);
  // Waits (at most `timeout`) until posts handed over so far have been sent. For tests and
  // shutdown; a no-op for a synchronous `post`.
  virtual void flush(std::chrono::milliseconds /*timeout*/) {}

 protected:
  Post m_post;

 private:
  InvolvedObject m_about;
  std::string m_instance;
  Clock m_clock;
  std::mutex m_mu;
  EventRateLimiter m_limiter;
};

// An EventRecorder posting to the API server (POST /api/v1/namespaces/<ns>/events) from its own
// thread: a queue of at most 32 events (more are dropped and logged), 5 s per request, failures
// logged as warnings. The involved object's uid is looked up once (GET) so `kubectl describe`
// lists the events. The destructor waits up to 2 s for what is queued, then drops the rest and
// joins the thread.
std::unique_ptr<EventRecorder> make_event_recorder(std::shared_ptr<Client> client,
                                                   InvolvedObject about, std::string instance,
                                                   std::chrono::milliseconds interval);

}  // namespace flytecd::k8s
