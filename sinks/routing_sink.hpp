#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "sinks/sink.hpp"

namespace flytecd::sinks {

// Several sinks composed by capability, e.g. projects and registrations to FlyteAdmin and
// overrides and platform defaults to the ConfigMap document. observe() merges what each route
// holds (only its parts: FlyteAdmin's override rows are not seen when the ConfigMap holds
// overrides); execute() sends a step to the route that holds its part; commit() commits every
// sink (all of them, even after one failed; the first error is returned); entities() is the
// registrations route's. Thread-safe as its sinks are.
class RoutingSink final : public Sink {
 public:
  struct Route {
    Sink* sink = nullptr;  // not owned unless also passed in `owned`
    Capabilities parts;    // what this route is used for: a subset of sink->capabilities()
  };

  // Errors: invalid_input when a route has no sink or no part, claims a part its sink does not
  // hold, or a part is routed twice.
  static Result<std::unique_ptr<RoutingSink>> create(std::vector<Route> routes,
                                                     std::vector<std::unique_ptr<Sink>> owned = {});

  Capabilities capabilities() const override { return m_capabilities; }
  // The first failing route's error, as that sink reported it.
  void expect(const std::set<std::string>& object_keys) override;
  Result<sinks::State> observe() override;
  // Each route's observe_scoped, merged as observe() merges; a route that holds neither
  // overrides nor platform defaults is not asked for override keys.
  Result<sinks::State> observe_scoped(const ObserveScope& scope) override;
  // internal when no route holds the step's part (a plan outside capabilities()).
  Status execute(const sinks::Step& step) override;
  // Asynchronous only when every routed sink is (the smallest window of theirs).
  int async_window() const override;
  void execute_async(const sinks::Step& step, std::function<void(Status)> done) override;
  uint64_t written_version(const std::string& key) const override;
  Status commit(const std::string& revision) override;
  EntitySink* entities() override;
  // "flyteadmin dns:///h:81 (projects, registrations) + configmap ns/name (key) (overrides, …)".
  std::string describe() const override;

 private:
  RoutingSink() = default;
  const Route* route_for(const sinks::Step& step) const;
  // What `read` returns for each route, each cut to the route's parts, merged.
  Result<sinks::State> merge_routes(
      const std::function<Result<sinks::State>(const Route&)>& read) const;

  std::vector<Route> m_routes;
  std::vector<std::unique_ptr<Sink>> m_owned;
  Capabilities m_capabilities;
};

}  // namespace flytecd::sinks
