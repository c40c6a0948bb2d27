#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "daemon/config/config.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/pass/pass.hpp"
#include "daemon/wiring/reconciler.hpp"

namespace flytecd::run {

// When the daemon's pass after a Git change may be targeted at the projects the change touched
// (pass::Options::targeted; the pass itself checks that the change's base converged). Not
// thread-safe: the reconcile thread owns it.
class Targeting {
 public:
  using Clock = std::chrono::steady_clock;

  // A new valid revision `after` replaces `before` (null: none was in force). Remembers the
  // projects the change touched for the next pass; returns why that pass must be whole when the
  // change touched what is in no project ("" otherwise).
  std::string on_revision(const wiring::LoadedRevision* before, const wiring::LoadedRevision& after,
                          const config::Config& cfg);
  // The offer for the pass about to start (the remembered change is used once): only when Git
  // moved by itself (a poll: "interval", or a webhook; not a start, a reload, a new leader or an
  // API request, which ask for everything), writes are not suspended, and the periodic whole pass
  // (every `drift_scan_seconds`) is not due at `now`.
  std::optional<pass::Options::Targeted> offer(const std::string& reason, bool suspended,
                                               double drift_scan_seconds, Clock::time_point now);
  // The pass that started at `started` ended with `report`: a whole one that observed is the
  // drift scan the next offers count from.
  void after(const pass::Report& report, Clock::time_point started);

 private:
  std::optional<pass::Options::Targeted> m_change;
  std::optional<Clock::time_point> m_last_whole;
};

// Each managed object's revision and time of its last write (status objects), by key.
using AppliedMap = std::map<std::string, ledger::Ledger::Applied>;

// What the daemon keeps across a targeted pass of `report` (identity after a whole one). Pure.
// Each object's last write: `before` with the targeted projects' keys replaced by `part` (the
// ledger's rows of those projects, read after the pass); `part` alone after a whole pass or with
// no `before` (then `part` is the whole ledger's).
AppliedMap applied_after(const pass::Report& report, const AppliedMap* before, AppliedMap part);
// The drift known after the pass: what it saw drifted, and what was known outside its projects.
std::set<std::string> known_drift_after(const pass::Report& report, std::set<std::string> drifted,
                                        const std::set<std::string>& known);

}  // namespace flytecd::run
