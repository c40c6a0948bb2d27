#pragma once

// An in-memory sinks::Sink for unit tests of anything that drives sinks (the reconcile pass,
// the routing sink): observe() returns its state (the parts it holds), execute() applies a step
// to it and counts RPCs, failures can be injected per object key, commit() is counted.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sinks/sink.hpp"

namespace flytecd::testing {

class MemorySink final : public sinks::Sink {
 public:
  explicit MemorySink(sinks::Capabilities holds = {.projects = true, .overrides = true},
                      sinks::State initial = {}, std::string name = "memory")
      : m_holds(holds), m_state(std::move(initial)), m_name(std::move(name)) {}

  // FlyteAdmin's Delete at a scope also deletes the narrower rows of that type; set to model it.
  bool cascading_deletes = false;

  sinks::Capabilities capabilities() const override { return m_holds; }

  Result<sinks::State> observe() override {
    std::lock_guard<std::mutex> lock(m_mu);
    ++m_observes;
    if (m_observe_error) return *m_observe_error;
    return sinks::held_part(m_state, m_holds);
  }

  // Like a sink whose full read is costly: only the scope's projects and the override keys asked
  // for (each scope is kept: scoped_observes()).
  Result<sinks::State> observe_scoped(const sinks::ObserveScope& scope) override {
    if (scope.everything()) return observe();
    std::lock_guard<std::mutex> lock(m_mu);
    m_scoped.push_back(scope);
    if (m_observe_error) return *m_observe_error;
    sinks::State all = sinks::held_part(m_state, m_holds), out;
    for (const auto& [id, p] : all.projects)
      if (scope.projects.count(id)) out.projects.emplace(id, p);
    for (const auto& [key, o] : all.overrides)
      if (scope.projects.count(o.scope.project) && scope.override_keys.count(key))
        out.overrides.emplace(key, o);
    return out;
  }
  std::vector<sinks::ObserveScope> scoped_observes() const {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_scoped;
  }

  Status execute(const sinks::Step& step) override {
    std::lock_guard<std::mutex> lock(m_mu);
    m_executed.push_back(step);
    if (!sinks::holds(m_holds, step))
      return make_error(ErrorCode::internal, m_name + ": does not hold " + step.key);
    if (auto it = m_failures.find(step.key); it != m_failures.end() && it->second.times != 0) {
      if (it->second.times > 0) --it->second.times;
      m_rpcs += step.rpc_count();
      return it->second.error;
    }
    m_rpcs += step.rpc_count();
    apply(step);
    return ok_status();
  }

  Status commit(const std::string& revision) override {
    std::lock_guard<std::mutex> lock(m_mu);
    m_commits.push_back(revision);
    if (m_commit_error) return *m_commit_error;
    return ok_status();
  }

  std::string describe() const override { return m_name; }

  // ---- test controls (thread-safe) ----
  // execute() of `key` fails with `error` the next `times` times (-1: always).
  void fail_key(const std::string& key, Error error, int times = -1) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_failures[key] = Failure{std::move(error), times};
  }
  void fail_observe(std::optional<Error> error) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_observe_error = std::move(error);
  }
  void fail_commit(std::optional<Error> error) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_commit_error = std::move(error);
  }
  sinks::State state() const {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_state;
  }
  void set_state(sinks::State s) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_state = std::move(s);
  }
  // RPCs the executed steps stand for (Step::rpc_count: adopt 0, replace 2), failed ones too.
  int rpcs() const {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_rpcs;
  }
  std::vector<sinks::Step> executed() const {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_executed;
  }
  std::vector<std::string> commits() const {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_commits;
  }
  int observes() const {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_observes;
  }

 private:
  struct Failure {
    Error error;
    int times = -1;
  };
  std::vector<sinks::ObserveScope> m_scoped;

  void apply(const sinks::Step& step) {
    using sinks::Action;
    if (step.action == Action::adopt) return;
    if (step.kind == sinks::ObjectKind::project) {
      if (!step.project) return;
      auto p = *step.project;
      if (step.action == Action::remove) p.archived = true;  // FlyteAdmin archives projects
      m_state.projects[p.id] = p;
      return;
    }
    if (step.action == Action::remove || step.action == Action::replace) {
      const sinks::OverrideState* row = step.live      ? &*step.live
                                        : step.desired ? &*step.desired
                                                       : nullptr;
      m_state.overrides.erase(step.key);
      if (cascading_deletes && row) cascade(*row);
    }
    if (step.action != Action::remove && step.desired) m_state.overrides[step.key] = *step.desired;
  }

  void cascade(const sinks::OverrideState& at) {
    for (auto it = m_state.overrides.begin(); it != m_state.overrides.end();) {
      const auto& s = it->second.scope;
      bool covered = it->second.type == at.type && s.project == at.scope.project &&
                     (at.scope.domain.empty() || s.domain == at.scope.domain) &&
                     (at.scope.workflow.empty() || s.workflow == at.scope.workflow);
      it = covered ? m_state.overrides.erase(it) : std::next(it);
    }
  }

  sinks::Capabilities m_holds;
  mutable std::mutex m_mu;
  sinks::State m_state;
  std::string m_name;
  std::map<std::string, Failure> m_failures;
  std::optional<Error> m_observe_error;
  std::optional<Error> m_commit_error;
  std::vector<sinks::Step> m_executed;
  std::vector<std::string> m_commits;
  int m_rpcs = 0;
  int m_observes = 0;
};

}  // namespace flytecd::testing
