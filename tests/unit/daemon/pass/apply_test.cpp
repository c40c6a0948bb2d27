// apply() against a scripted in-process sink: the circuit breaker and per-object status.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "daemon/pass/apply.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::reconcile;
using namespace flytecd::pass;
namespace admin = flyteidl::admin;

namespace {

OverrideState label(const std::string& p, const std::string& d, const std::string& value) {
  OverrideState o;
  o.scope = model::Scope{p, d, ""};
  o.type = admin::EXECUTION_CLUSTER_LABEL;
  o.value.mutable_execution_cluster_label()->set_value(value);
  return o;
}

State desired_of(int n) {
  State s;
  for (int i = 0; i < n; ++i) {
    auto o = label("p" + std::to_string(i), "development", "v");
    s.overrides[override_key(o.scope, o.type)] = o;
  }
  return s;
}

// Behaves like FlyteAdmin that applies writes to `live`, and that becomes unreachable after
// `writes_before_down` successful writes (-1: never); observe() fails with `observe_error` if set.
class ScriptedSink final : public sinks::Sink {
 public:
  int writes_before_down = -1;
  std::optional<Error> observe_error;
  std::atomic<int> executed{0};
  State live;

  sinks::Capabilities capabilities() const override {
    return {.projects = true, .overrides = true};
  }
  Result<State> observe() override {
    if (observe_error) return *observe_error;
    std::lock_guard<std::mutex> lock(m_mu);
    if (writes_before_down >= 0 && m_ok >= writes_before_down)
      return Error{ErrorCode::unavailable, "flyteadmin: ListProjects: UNAVAILABLE"};
    return live;
  }
  Status execute(const Step& s) override {
    ++executed;
    std::lock_guard<std::mutex> lock(m_mu);
    if (writes_before_down >= 0 && m_ok >= writes_before_down)
      return Error{ErrorCode::unavailable,
                   "flyteadmin: UpdateProjectDomainAttributes: UNAVAILABLE: connection refused"};
    ++m_ok;
    if (s.desired) live.overrides[s.key] = *s.desired;
    return ok_status();
  }
  std::string describe() const override { return "scripted"; }

 private:
  std::mutex m_mu;
  int m_ok = 0;
};

// A sink with asynchronous steps whose calls all end together: it holds each step until
// `window` are in flight, then ends them all (on the thread that started the last one, before it
// returns), as FlyteAdmin's answers to a group commit arrive.
class TogetherSink final : public sinks::Sink {
 public:
  explicit TogetherSink(int window) : m_window(window) {}
  ScriptedSink inner;

  sinks::Capabilities capabilities() const override { return inner.capabilities(); }
  Result<State> observe() override { return inner.observe(); }
  Status execute(const Step& s) override { return inner.execute(s); }
  std::string describe() const override { return "together"; }
  int async_window() const override { return m_window; }
  void execute_async(const Step& s, std::function<void(Status)> done) override {
    m_held.emplace_back(&s, std::move(done));
    if (static_cast<int>(m_held.size()) < m_window) return;
    auto held = std::move(m_held);
    m_held.clear();
    for (auto& [step, ended] : held) ended(inner.execute(*step));
  }

 private:
  int m_window;
  std::vector<std::pair<const Step*, std::function<void(Status)>>> m_held;
};

// A sink with asynchronous steps that end on a thread of its own, as gRPC's callbacks do: each
// step runs there in the order started, then its `done` is called there. Records which thread
// started each step.
class ThreadedSink final : public sinks::Sink {
 public:
  explicit ThreadedSink(int window) : m_window(window), m_thread([this] { run(); }) {}
  ~ThreadedSink() override {
    {
      std::lock_guard<std::mutex> lock(m_mu);
      m_stop = true;
    }
    m_cv.notify_one();
    m_thread.join();
  }
  ScriptedSink inner;
  std::atomic<int> started_on_sink_thread{0};
  std::atomic<int> started_elsewhere{0};

  sinks::Capabilities capabilities() const override { return inner.capabilities(); }
  Result<State> observe() override { return inner.observe(); }
  Status execute(const Step& s) override { return inner.execute(s); }
  std::string describe() const override { return "threaded"; }
  int async_window() const override { return m_window; }
  void execute_async(const Step& s, std::function<void(Status)> done) override {
    ++(std::this_thread::get_id() == m_thread.get_id() ? started_on_sink_thread
                                                       : started_elsewhere);
    {
      std::lock_guard<std::mutex> lock(m_mu);
      m_queue.emplace_back(&s, std::move(done));
    }
    m_cv.notify_one();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(m_mu);
    for (;;) {
      m_cv.wait(lock, [&] { return m_stop || !m_queue.empty(); });
      if (m_queue.empty()) return;
      auto [step, done] = std::move(m_queue.front());
      m_queue.pop_front();
      lock.unlock();
      done(inner.execute(*step));  // may start the next step, on this thread
      lock.lock();
    }
  }
  int m_window;
  std::mutex m_mu;
  std::condition_variable m_cv;
  std::deque<std::pair<const Step*, std::function<void(Status)>>> m_queue;
  bool m_stop = false;
  std::thread m_thread;  // last: starts once the rest is built
};

std::unique_ptr<ledger::Ledger> memory_ledger() {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l.ok());
  return std::move(*l);
}

std::map<std::string, ObjectState> states(const ApplyReport& r) {
  std::map<std::string, ObjectState> out;
  for (const auto& o : r.objects) out[o.key] = o.state;
  return out;
}

}  // namespace

TEST_CASE(
    "apply: a target that goes away mid-apply stops the pass, no step starts after the "
    "breaker opens",
    "[apply][breaker]") {
  ScriptedSink sink;
  sink.writes_before_down = 30;
  auto ledger = memory_ledger();
  const State desired = desired_of(400);
  ApplyOptions o;
  o.revision = "r1";
  o.parallelism = 4;
  auto r = apply(sink, *ledger, desired, o);
  CHECK_FALSE(r.ok());
  CHECK(r.target_down());
  CHECK(r.error_code == ErrorCode::unavailable);
  CHECK(r.error.find("target unreachable") != std::string::npos);
  INFO(r.error);
  // The breaker (5 consecutive) opens within the steps in flight: 30 ok + at most 5 + 4 more.
  CHECK(sink.executed.load() <= 30 + CircuitBreaker::k_default_threshold + o.parallelism);
  CHECK(r.results.size() == static_cast<size_t>(sink.executed.load()));
  CHECK(r.not_started == 400 - r.results.size());
  // What succeeded is in the ledger; nothing else is.
  auto managed = ledger->managed();
  REQUIRE(managed.ok());
  CHECK(managed->size() == 30);
  // Status: written-but-unverified and never-started objects are pending, failed ones failed;
  // none is synced (no observation after the writes).
  size_t pending = 0, failed = 0;
  for (const auto& obj : r.objects) {
    CHECK(obj.state != ObjectState::synced);
    pending += obj.state == ObjectState::pending;
    failed += obj.state == ObjectState::failed;
  }
  CHECK(failed == r.failed);
  CHECK(pending + failed == 400);

  // The next pass against a healthy target converges from where this one stopped.
  sink.writes_before_down = -1;
  auto again = apply(sink, *ledger, desired, o);
  REQUIRE(again.ok());
  CHECK(again.first_plan.steps.size() == 370);
  for (const auto& [k, st] : states(again)) CHECK(st == ObjectState::synced);
}

TEST_CASE("apply: a shared breaker already open starts nothing", "[apply][breaker]") {
  ScriptedSink sink;
  auto ledger = memory_ledger();
  CircuitBreaker breaker;
  breaker.trip(Error{ErrorCode::unavailable, "earlier"});
  ApplyOptions o;
  o.breaker = &breaker;
  auto r = apply(sink, *ledger, desired_of(3), o);
  CHECK(r.target_down());
  CHECK(sink.executed.load() == 0);
  for (const auto& obj : r.objects) CHECK(obj.state == ObjectState::unknown);
}

TEST_CASE(
    "apply: an observation that fails is coded, trips the breaker, and shows every object "
    "as unknown",
    "[apply][breaker]") {
  ScriptedSink sink;
  sink.observe_error = Error{ErrorCode::unauthenticated, "oauth: token endpoint returned HTTP 401"};
  auto ledger = memory_ledger();
  CircuitBreaker breaker;
  ApplyOptions o;
  o.breaker = &breaker;
  State desired = desired_of(2);
  desired.projects["p0"] = ProjectState{"p0", "P0", "", {}, false};
  auto r = apply(sink, *ledger, desired, o);
  CHECK(r.error_code == ErrorCode::unauthenticated);
  CHECK_FALSE(r.target_down());
  CHECK_FALSE(breaker.open());  // the target answered (with a refusal)
  REQUIRE(r.objects.size() == 3);
  for (const auto& obj : r.objects) {
    CHECK(obj.state == ObjectState::unknown);
    CHECK(obj.detail.find("HTTP 401") != std::string::npos);
  }

  sink.observe_error = Error{ErrorCode::unavailable, "flyteadmin: ListProjects: UNAVAILABLE"};
  auto down = apply(sink, *ledger, desired, o);
  CHECK(down.target_down());
  CHECK(breaker.open());
}

TEST_CASE("apply: object status comes from the observation, not the plan", "[apply]") {
  State desired = desired_of(3);
  const auto keys = [&] {
    std::vector<std::string> k;
    for (const auto& [key, o] : desired.overrides) k.push_back(key);
    return k;
  }();
  // Last observation: keys[0] equal, keys[1] needs an update that failed, keys[2] an update that
  // succeeded but was never re-observed.
  Plan p;
  for (size_t i = 1; i < 3; ++i) {
    Step s;
    s.action = Action::update;
    s.key = keys[i];
    s.desired = flytecd::sinks::share(desired.overrides.at(keys[i]));
    p.steps.push_back(s);
  }
  std::vector<StepResult> ran{
      StepResult{p.steps[0], Error{ErrorCode::invalid_input, "bad value"}, 1},
      StepResult{p.steps[1], ok_status(), 1}};
  auto objs = object_statuses(desired, &p, ran, "stopped");
  REQUIRE(objs.size() == 3);
  CHECK(objs[0].state == ObjectState::synced);
  CHECK(objs[1].state == ObjectState::failed);
  CHECK(objs[1].detail == "bad value");
  CHECK(objs[2].state == ObjectState::pending);
  CHECK(objs[2].detail.find("not yet verified") != std::string::npos);

  // Drift left alone (self-heal off) is not synced either.
  Plan drift;
  drift.drift.push_back(
      DriftItem{ObjectKind::override_attr, keys[0], "changed outside Git", false, {}});
  auto d = object_statuses(desired, &drift, {}, "");
  CHECK(d[0].state == ObjectState::drifted);
  CHECK(d[1].state == ObjectState::synced);

  auto none = object_statuses(desired, nullptr, {}, "flyteadmin: ListProjects: UNAVAILABLE");
  for (const auto& o : none) CHECK(o.state == ObjectState::unknown);
}

namespace {

// A sink whose live state gains rows between the first and the second observation: what an
// out-of-band writer restoring rows mid-pass looks like to a later round.
class ChangingSink final : public sinks::Sink {
 public:
  State live;
  State appears_at_second;  // merged into live on the second observe()
  int observes = 0;
  std::atomic<int> removals{0};
  sinks::Capabilities capabilities() const override {
    return {.projects = true, .overrides = true};
  }
  Result<State> observe() override {
    std::lock_guard<std::mutex> lock(m_mu);
    if (++observes == 2)
      for (const auto& [k, o] : appears_at_second.overrides) live.overrides[k] = o;
    return live;
  }
  Status execute(const Step& s) override {
    std::lock_guard<std::mutex> lock(m_mu);
    if (s.action == Action::remove) {
      ++removals;
      live.overrides.erase(s.key);
    } else if (s.desired) {
      live.overrides[s.key] = *s.desired;
    }
    return ok_status();
  }
  std::string describe() const override { return "changing"; }

 private:
  std::mutex m_mu;
};

}  // namespace

TEST_CASE(
    "apply: a later round is guarded like the first (a mass prune its observation finds is "
    "refused)",
    "[apply][guard]") {
  ChangingSink sink;
  auto ledger = memory_ledger();
  // flytecd manages 10 rows that Git no longer declares and that are gone from FlyteAdmin when
  // the pass first looks; they come back before the second round looks.
  for (int i = 0; i < 10; ++i) {
    auto o = label("q" + std::to_string(i), "development", "old");
    const auto key = override_key(o.scope, o.type);
    REQUIRE(ledger->record(key, "override", "h", "r0"));
    sink.appears_at_second.overrides[key] = o;
  }
  const State desired = desired_of(1);
  auto managed = ledger->managed();
  REQUIRE(managed);
  // The caller's first plan (guarded by the caller): create the one desired row only.
  Plan first = plan(desired, sink.live, *managed, Policy{});
  std::erase_if(first.steps, [](const Step& s) { return s.action != Action::create; });
  REQUIRE(first.steps.size() == 1);
  ApplyOptions o;
  o.revision = "r1";
  o.first_plan = &first;
  auto r = apply(sink, *ledger, desired, o);
  CHECK(r.refused);
  CHECK(r.error_code == ErrorCode::conflict);
  CHECK(r.error.find("prune") != std::string::npos);
  INFO(r.error);
  CHECK(sink.removals.load() == 0);  // none of the 10 managed rows was deleted
  CHECK(r.rounds == 2);
}

TEST_CASE("apply: steps of an asynchronous sink that end together are recorded in one transaction",
          "[apply][async]") {
  TogetherSink sink(40);
  auto ledger = memory_ledger();
  const State desired = desired_of(40);  // one phase of 40 project-domain writes
  ApplyOptions o;
  o.revision = "r1";
  std::vector<std::string> reported;
  const auto before = ledger->write_groups();
  size_t calls = 0;
  auto r = apply(sink, *ledger, desired, o, [&](std::span<const StepResult> ended) {
    ++calls;
    for (const auto& sr : ended) reported.push_back(sr.step.key);
  });
  INFO(r.error);
  REQUIRE(r.ok());
  CHECK(r.results.size() == 40);
  CHECK(reported.size() == 40);
  CHECK(calls == 1);  // reported together too: the CLI writes their lines at once
  CHECK(sink.inner.executed.load() == 40);
  CHECK(ledger->write_groups() - before == 1);  // 40 rows, one transaction
  auto managed = ledger->managed();
  REQUIRE(managed.ok());
  CHECK(managed->size() == 40);
  for (const auto& [k, st] : states(r)) CHECK(st == ObjectState::synced);
}

TEST_CASE(
    "apply: a step that succeeds starts the next from its own callback, a failure leaves that "
    "to the pass (which counts it for the breaker first)",
    "[apply][async][breaker]") {
  SECTION("successes: only the first window starts on the pass's thread") {
    ThreadedSink sink(8);
    auto ledger = memory_ledger();
    const State desired = desired_of(200);
    ApplyOptions o;
    o.revision = "r1";
    auto r = apply(sink, *ledger, desired, o);
    INFO(r.error);
    REQUIRE(r.ok());
    CHECK(sink.inner.executed.load() == 200);
    CHECK(sink.started_elsewhere.load() == 8);
    CHECK(sink.started_on_sink_thread.load() == 192);
    auto managed = ledger->managed();
    REQUIRE(managed.ok());
    CHECK(managed->size() == 200);  // every row recorded, whichever thread started its step
  }
  SECTION("failures: the callback starts nothing, and nothing starts once the breaker opens") {
    ThreadedSink sink(4);
    sink.inner.writes_before_down = 0;  // every write UNAVAILABLE
    auto ledger = memory_ledger();
    const State desired = desired_of(200);
    ApplyOptions o;
    o.revision = "r1";
    auto r = apply(sink, *ledger, desired, o);
    CHECK_FALSE(r.ok());
    CHECK(r.target_down());
    CHECK(sink.started_on_sink_thread.load() == 0);
    // Opens at the 5th failure; at most a window was in flight when the pass saw it.
    CHECK(sink.inner.executed.load() <= 5 + 4);
    CHECK(r.failed == static_cast<size_t>(sink.inner.executed.load()));
  }
}

}  // namespace FLYTECD_UNITY_ID
