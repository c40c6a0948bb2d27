#include "daemon/notify/notifier.hpp"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

#include "daemon/common/http/client.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/common/log.hpp"
#include "daemon/common/text.hpp"
#include "daemon/http/webhooks.hpp"
#include "daemon/metrics/flytecd_metrics.hpp"

namespace flytecd::notify {
namespace {

// Slack Block Kit limits: header text 150 chars, section text 3000 chars.
constexpr size_t k_slack_header_max = 150;
constexpr size_t k_slack_section_max = 3000;
constexpr size_t k_slack_max_detail_lines = 20;

std::string_view title(EventKind kind) {
  switch (kind) {
    case EventKind::drift_detected:
      return "Drift detected";
    case EventKind::sync_failed:
      return "Sync failed";
    case EventKind::sync_recovered:
      return "Sync recovered";
    case EventKind::revision_refused:
      return "Revision refused";
  }
  return "Event";
}

std::string_view emoji(EventKind kind) {
  switch (kind) {
    case EventKind::drift_detected:
      return ":warning:";
    case EventKind::sync_failed:
      return ":x:";
    case EventKind::sync_recovered:
      return ":white_check_mark:";
    case EventKind::revision_refused:
      return ":no_entry:";
  }
  return ":information_source:";
}

// Cuts to at most `max` bytes on a UTF-8 boundary, marking the cut with "…".
std::string truncate_utf8(std::string s, size_t max) {
  if (s.size() <= max) return s;
  constexpr std::string_view k_ellipsis = "\xE2\x80\xA6";
  size_t cut = max > k_ellipsis.size() ? max - k_ellipsis.size() : 0;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  // Do not leave half an entity ("&am") from escape_mrkdwn behind.
  if (const auto amp = s.rfind('&'); amp != std::string::npos && s.find(';', amp) == s.npos) {
    s.resize(amp);
  }
  return s + std::string(k_ellipsis);
}

// Slack mrkdwn treats &, < and > as control characters.
std::string escape_mrkdwn(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string dump(const nlohmann::ordered_json& j) { return dump_json(j); }

std::string render_slack(const Event& e) {
  using nlohmann::ordered_json;
  const std::string revision = e.revision.empty() ? "unknown" : e.revision;
  const std::string summary = e.summary.empty() ? std::string(title(e.kind)) : e.summary;
  std::string text = std::string(emoji(e.kind)) + " flytecd: " + std::string(title(e.kind)) +
                     " at revision " + escape_mrkdwn(revision) + ": " + escape_mrkdwn(summary);

  ordered_json blocks = ordered_json::array();
  blocks.push_back(
      {{"type", "header"},
       {"text",
        {{"type", "plain_text"},
         {"text", truncate_utf8("flytecd: " + std::string(title(e.kind)), k_slack_header_max)},
         {"emoji", true}}}});
  blocks.push_back({{"type", "section"},
                    {"text",
                     {{"type", "mrkdwn"},
                      {"text", truncate_utf8(escape_mrkdwn(summary), k_slack_section_max)}}}});
  if (!e.details.empty()) {
    std::string lines;
    const size_t shown = std::min(e.details.size(), k_slack_max_detail_lines);
    for (size_t i = 0; i < shown; ++i)
      lines += "\xE2\x80\xA2 " + escape_mrkdwn(e.details[i]) + "\n";
    if (e.details.size() > shown) {
      lines += "_and " + std::to_string(e.details.size() - shown) + " more_\n";
    }
    lines.pop_back();
    blocks.push_back(
        {{"type", "section"},
         {"text", {{"type", "mrkdwn"}, {"text", truncate_utf8(lines, k_slack_section_max)}}}});
  }
  blocks.push_back({{"type", "context"},
                    {"elements", ordered_json::array(
                                     {{{"type", "mrkdwn"},
                                       {"text", "revision `" + escape_mrkdwn(revision) +
                                                    "` \xC2\xB7 " + format_rfc3339(e.time)}}})}});
  ordered_json j;
  j["text"] = truncate_utf8(text, k_slack_section_max);
  j["blocks"] = std::move(blocks);
  return dump(j);
}

// "https://hooks.slack.com/…": enough to tell receivers apart; the path may be a secret.
std::string loggable_url(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return "(invalid url)";
  const auto host_start = scheme + 3;
  auto end = url.find_first_of("/?#", host_start);
  if (end == std::string::npos) end = url.size();
  std::string authority = url.substr(host_start, end - host_start);
  if (const auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  return url.substr(0, host_start) + authority + (end < url.size() ? "/\xE2\x80\xA6" : "");
}

bool valid_url(const std::string& url) {
  std::string lower = url.substr(0, std::min<size_t>(url.size(), 8));
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t host_start = lower.starts_with("https://")  ? 8
                            : lower.starts_with("http://") ? 7
                                                           : 0;
  return host_start != 0 && url.size() > host_start && url[host_start] != '/';
}

struct Attempt {
  bool ok = false;
  bool retryable = false;
  std::string what;  // "HTTP 500", "Connection refused", … — never the response body
};

// One POST, no redirects and no retries here: deliver() retries with its own backoff, which a
// stop() cuts short.
Attempt post(http::Client& client, const NotifyTarget& target, std::string_view event,
             const std::string& body, std::chrono::milliseconds timeout,
             const std::atomic<bool>& stopping) {
  http::ClientRequest req;
  req.method = "POST";
  req.url = target.url;
  req.headers = {"Content-Type: application/json", "X-Flytecd-Event: " + std::string(event)};
  if (!target.hmac_secret.empty()) {
    const std::string sig = http::hmac_sha256_hex(target.hmac_secret, body);
    req.headers.push_back("X-Flytecd-Signature: sha256=" + sig);
  }
  req.body = body;
  req.on_body = [](const char*, size_t) { return true; };  // the answer is not read
  req.timeout = timeout;
  req.cancel = &stopping;
  auto r = client.execute(req);
  if (!r) {
    // Transport failures (refused, reset, timeout) are worth another try; a stop is not.
    return {false, r.error().message != "cancelled", r.error().message};
  }
  const long status = r->status;
  if (status >= 200 && status < 300) return {true, false, "HTTP " + std::to_string(status)};
  const bool retry = status == 408 || status == 429 || status >= 500;
  return {false, retry, "HTTP " + std::to_string(status)};
}

}  // namespace

std::string_view to_string(EventKind kind) {
  switch (kind) {
    case EventKind::drift_detected:
      return "drift_detected";
    case EventKind::sync_failed:
      return "sync_failed";
    case EventKind::sync_recovered:
      return "sync_recovered";
    case EventKind::revision_refused:
      return "revision_refused";
  }
  return "unknown";
}

std::string_view to_string(NotifyTarget::Kind kind) {
  return kind == NotifyTarget::Kind::slack ? "slack" : "generic";
}

std::string format_rfc3339(std::chrono::system_clock::time_point t) {
  return text::rfc3339_utc(static_cast<int64_t>(std::chrono::system_clock::to_time_t(t)));
}

std::string render_payload(NotifyTarget::Kind kind, const Event& event) {
  if (kind == NotifyTarget::Kind::slack) return render_slack(event);
  nlohmann::ordered_json j;
  j["event"] = to_string(event.kind);
  j["revision"] = event.revision;
  j["summary"] = event.summary;
  j["details"] = event.details;
  j["time"] = format_rfc3339(event.time);
  return dump(j);
}

Result<std::unique_ptr<Notifier>> Notifier::start(std::vector<NotifyTarget> targets,
                                                  NotifierOptions options,
                                                  metrics::FlytecdMetrics* metrics) {
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!valid_url(targets[i].url)) {
      return make_error(ErrorCode::invalid_input,
                        "notify: target " + std::to_string(i + 1) + " (" +
                            std::string(to_string(targets[i].kind)) +
                            "): url must be http:// or https:// with a host, got " +
                            loggable_url(targets[i].url));
    }
  }
  if (options.queue_capacity == 0 || options.max_retries < 0 ||
      options.attempt_timeout.count() <= 0) {
    return make_error(ErrorCode::invalid_input,
                      "notify: queue_capacity and attempt_timeout must be positive, "
                      "max_retries not negative");
  }
  std::unique_ptr<Notifier> n(new Notifier(std::move(targets), options, metrics));
  n->m_thread = std::thread([p = n.get()] { p->run(); });
  return n;
}

Notifier::Notifier(std::vector<NotifyTarget> targets, NotifierOptions options,
                   metrics::FlytecdMetrics* metrics)
    : m_targets(std::move(targets)), m_options(options), m_metrics(metrics) {}

Notifier::~Notifier() { stop(); }

void Notifier::count(const NotifyTarget& target, std::string_view result) {
  if (m_metrics != nullptr) {
    m_metrics->notifications_total.with({to_string(target.kind), result}).inc();
  }
}

bool Notifier::notify(const Event& event) {
  bool all_queued = true;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    for (size_t i = 0; i < m_targets.size(); ++i) {
      if (m_stopping || m_queue.size() >= m_options.queue_capacity) {
        count(m_targets[i], "dropped");
        log::get("notify")->warn("{} {}: dropped {}: {}", to_string(m_targets[i].kind),
                                 loggable_url(m_targets[i].url), to_string(event.kind),
                                 m_stopping ? "notifier stopped" : "queue full");
        all_queued = false;
        continue;
      }
      m_queue.push_back(Delivery{i, event});
    }
  }
  m_cv.notify_one();
  return all_queued;
}

bool Notifier::flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(m_mu);
  return m_idle_cv.wait_for(lock, timeout, [&] { return m_queue.empty() && !m_busy; });
}

void Notifier::stop() {
  {
    std::lock_guard<std::mutex> lock(m_mu);
    m_stopping = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void Notifier::run() {
  std::unique_lock<std::mutex> lock(m_mu);
  for (;;) {
    m_cv.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
    if (m_stopping) break;
    Delivery d = std::move(m_queue.front());
    m_queue.pop_front();
    m_busy = true;
    lock.unlock();
    deliver(d);
    lock.lock();
    m_busy = false;
    if (m_queue.empty()) m_idle_cv.notify_all();
  }
  for (const auto& d : m_queue) count(m_targets[d.target], "dropped");
  m_queue.clear();
  m_busy = false;
  m_idle_cv.notify_all();
}

void Notifier::deliver(const Delivery& d) {
  const NotifyTarget& target = m_targets[d.target];
  const auto logger = log::get("notify");
  const std::string where = std::string(to_string(target.kind)) + " " + loggable_url(target.url);
  const std::string body = render_payload(target.kind, d.event);
  const auto event = to_string(d.event.kind);
  http::Client client(http::ClientOptions{});  // defaults: no retries, no redirects
  std::minstd_rand rng(std::random_device{}());
  auto backoff = m_options.retry_backoff;
  Attempt a;
  int attempts = 0;
  for (;;) {
    ++attempts;
    a = post(client, target, event, body, m_options.attempt_timeout, m_stopping);
    if (a.ok) {
      count(target, "sent");
      logger->info("{}: sent {} ({} attempt(s))", where, event, attempts);
      return;
    }
    if (!a.retryable || attempts > m_options.max_retries || m_stopping) break;
    const auto jitter = std::chrono::milliseconds(
        std::uniform_int_distribution<long long>(0, backoff.count() / 2)(rng));
    logger->warn("{}: {} attempt {} failed: {}; retrying", where, event, attempts, a.what);
    std::unique_lock<std::mutex> lock(m_mu);
    if (m_cv.wait_for(lock, backoff + jitter, [&] { return m_stopping.load(); })) break;
    backoff *= 2;
  }
  count(target, "failed");
  logger->error("{}: giving up on {} after {} attempt(s): {}", where, event, attempts, a.what);
}

}  // namespace flytecd::notify
