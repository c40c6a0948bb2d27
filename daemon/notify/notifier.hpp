#pragma once

// Notifications about what the daemon saw (drift, a failing sync, recovery, a refused revision),
// sent as HTTP POSTs to generic JSON receivers or Slack incoming webhooks.
//
// render_payload() is pure and tested without a network. Notifier delivers in one background
// thread from a bounded queue: notify() never blocks (a full queue drops and counts), every
// attempt has a deadline, transport errors / 408 / 429 / 5xx are retried (2 retries by
// default, exponential backoff with jitter), other answers are final. Outcomes are counted in
// flytecd_notifications_total{kind=generic|slack, result=sent|failed|dropped} and failures
// logged with the receiver's scheme and host only (Slack webhook URLs carry a secret path).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::metrics {
struct FlytecdMetrics;
}

namespace flytecd::notify {

// revision_refused: the guard refused a revision whole (nothing of it ran); its summary is the
// guard's one-line reason (the daemon sends it once per refused revision, not sync_failed).
enum class EventKind { drift_detected, sync_failed, sync_recovered, revision_refused };
std::string_view to_string(EventKind kind);

struct Event {
  EventKind kind = EventKind::drift_detected;
  std::string revision;              // the Git revision concerned ("" = unknown)
  std::string summary;               // one line, e.g. "3 objects changed outside Git"
  std::vector<std::string> details;  // one line each, e.g. "drifted: TASK_RESOURCE p/d"
  std::chrono::system_clock::time_point time;
};

struct NotifyTarget {
  enum class Kind { generic, slack } kind = Kind::generic;
  std::string url;  // http(s)://…
  // Already-read secret; when set, requests carry X-Flytecd-Signature: sha256=<hex HMAC of
  // the body> (meant for generic receivers; Slack ignores it).
  std::string hmac_secret;
};
std::string_view to_string(NotifyTarget::Kind kind);

// The request body for a target kind. generic: {"event","revision","summary","details",
// "time"} (time in RFC 3339 UTC); slack: {"text", "blocks"} within Slack's size limits
// (20 detail lines at most, text escaped for mrkdwn). Pure; never throws.
std::string render_payload(NotifyTarget::Kind kind, const Event& event);

// "2024-05-01T12:00:00Z".
std::string format_rfc3339(std::chrono::system_clock::time_point t);

struct NotifierOptions {
  size_t queue_capacity = 64;                       // pending deliveries (event x target)
  std::chrono::milliseconds attempt_timeout{5000};  // deadline of one HTTP attempt
  int max_retries = 2;                              // attempts = 1 + max_retries
  std::chrono::milliseconds retry_backoff{500};     // first backoff; doubles, +0-50% jitter
};

class Notifier {
 public:
  // Validates the targets (http/https URLs) and starts the delivery thread. `metrics` may be
  // null. Errors: invalid_input.
  static Result<std::unique_ptr<Notifier>> start(std::vector<NotifyTarget> targets,
                                                 NotifierOptions options,
                                                 metrics::FlytecdMetrics* metrics);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // Queues `event` for every target and returns at once. False when at least one delivery
  // was dropped (queue full or stopped); drops are counted. Thread-safe.
  bool notify(const Event& event);
  // Waits until every queued delivery has finished, at most `timeout`. True when drained.
  bool flush(std::chrono::milliseconds timeout);
  // Stops the thread: the attempt in flight is aborted, queued deliveries are dropped (and
  // counted). Idempotent.
  void stop();

 private:
  struct Delivery {
    size_t target;
    Event event;
  };
  Notifier(std::vector<NotifyTarget> targets, NotifierOptions options,
           metrics::FlytecdMetrics* metrics);
  void run();
  void deliver(const Delivery& d);
  void count(const NotifyTarget& target, std::string_view result);

  const std::vector<NotifyTarget> m_targets;
  const NotifierOptions m_options;
  metrics::FlytecdMetrics* const m_metrics;

  std::mutex m_mu;
  std::condition_variable m_cv;       // work arrived / stopping
  std::condition_variable m_idle_cv;  // queue drained and nothing in flight
  std::deque<Delivery> m_queue;
  bool m_busy = false;
  std::atomic<bool> m_stopping{false};  // written under m_mu; read lock-free to abort curl
  std::thread m_thread;
};

}  // namespace flytecd::notify
