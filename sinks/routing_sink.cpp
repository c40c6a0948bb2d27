#include "sinks/routing_sink.hpp"

#include <algorithm>
#include <set>

namespace flytecd::sinks {

Result<std::unique_ptr<RoutingSink>> RoutingSink::create(std::vector<Route> routes,
                                                         std::vector<std::unique_ptr<Sink>> owned) {
  auto bad = [](const std::string& what) {
    return make_error(ErrorCode::invalid_input, "routing sink: " + what);
  };
  if (routes.empty()) return bad("no routes");
  Capabilities all;
  for (const auto& r : routes) {
    if (!r.sink) return bad("a route has no sink");
    if (!r.parts.any()) return bad(r.sink->describe() + ": a route for nothing");
    if ((r.parts & r.sink->capabilities()) != r.parts)
      return bad(r.sink->describe() + " holds " + to_string(r.sink->capabilities()) + ", not " +
                 to_string(r.parts));
    if ((all & r.parts).any())
      return bad(to_string(all & r.parts) + " routed twice (" + r.sink->describe() + ")");
    all = all | r.parts;
  }
  std::unique_ptr<RoutingSink> out(new RoutingSink());
  out->m_routes = std::move(routes);
  out->m_owned = std::move(owned);
  out->m_capabilities = all;
  return out;
}

Result<sinks::State> RoutingSink::merge_routes(
    const std::function<Result<sinks::State>(const Route&)>& read) const {
  sinks::State merged;
  for (const auto& r : m_routes) {
    auto live = read(r);
    if (!live) return live.error();
    sinks::State part = held_part(std::move(*live), r.parts);
    merged.projects.merge(part.projects);
    merged.overrides.merge(part.overrides);
    merged.objects.merge(part.objects);
  }
  return merged;
}

Result<sinks::State> RoutingSink::observe() {
  return merge_routes([](const Route& r) { return r.sink->observe(); });
}

Result<sinks::State> RoutingSink::observe_scoped(const ObserveScope& scope) {
  return merge_routes([&](const Route& r) {
    if (scope.everything() || r.parts.overrides || r.parts.platform_defaults)
      return r.sink->observe_scoped(scope);
    // held_part would drop every override row it read.
    return r.sink->observe_scoped(ObserveScope{scope.projects, {}});
  });
}

void RoutingSink::expect(const std::set<std::string>& object_keys) {
  std::set<const Sink*> done;
  for (const auto& r : m_routes) {
    if (r.parts.objects.empty() || !done.insert(r.sink).second) continue;
    std::set<std::string> held;
    for (const auto& k : object_keys)
      if (holds_object(r.parts, k)) held.insert(k);
    r.sink->expect(held);
  }
}

const RoutingSink::Route* RoutingSink::route_for(const sinks::Step& step) const {
  for (const auto& r : m_routes)
    if (holds(r.parts, step)) return &r;
  return nullptr;
}

Status RoutingSink::execute(const sinks::Step& step) {
  const Route* r = route_for(step);
  if (!r)
    return make_error(ErrorCode::internal,
                      "routing sink: no sink holds " + step.key + " (" + describe() + ")");
  return r->sink->execute(step);
}

int RoutingSink::async_window() const {
  int window = 0;
  for (size_t i = 0; i < m_routes.size(); ++i) {
    const int w = m_routes[i].sink->async_window();
    if (w <= 0) return 0;
    window = i == 0 ? w : std::min(window, w);
  }
  return window;
}

void RoutingSink::execute_async(const sinks::Step& step, std::function<void(Status)> done) {
  const Route* r = route_for(step);
  if (!r)
    return done(make_error(ErrorCode::internal,
                           "routing sink: no sink holds " + step.key + " (" + describe() + ")"));
  r->sink->execute_async(step, std::move(done));
}

uint64_t RoutingSink::written_version(const std::string& key) const {
  const std::string kind = key.substr(0, key.find('/'));
  for (const auto& r : m_routes)
    if (r.parts.objects.count(kind)) return r.sink->written_version(key);
  return 0;
}

Status RoutingSink::commit(const std::string& revision) {
  Status first = ok_status();
  std::set<const Sink*> done;  // a sink routed for several parts commits once
  for (const auto& r : m_routes) {
    if (!done.insert(r.sink).second) continue;
    Status st = r.sink->commit(revision);
    if (!st && first) first = st;
  }
  return first;
}

EntitySink* RoutingSink::entities() {
  for (const auto& r : m_routes)
    if (r.parts.registrations) return r.sink->entities();
  return nullptr;
}

std::string RoutingSink::describe() const {
  std::string out;
  for (const auto& r : m_routes) {
    if (!out.empty()) out += " + ";
    out += r.sink->describe() + " (" + to_string(r.parts) + ")";
  }
  return out;
}

}  // namespace flytecd::sinks
