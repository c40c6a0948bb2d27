#include "sinks/sink.hpp"

namespace flytecd::sinks {

Capabilities operator|(const Capabilities& a, const Capabilities& b) {
  Capabilities out{a.projects || b.projects, a.overrides || b.overrides,
                   a.platform_defaults || b.platform_defaults, a.registrations || b.registrations,
                   a.objects};
  out.objects.insert(b.objects.begin(), b.objects.end());
  return out;
}

Capabilities operator&(const Capabilities& a, const Capabilities& b) {
  Capabilities out{a.projects && b.projects,
                   a.overrides && b.overrides,
                   a.platform_defaults && b.platform_defaults,
                   a.registrations && b.registrations,
                   {}};
  for (const auto& k : a.objects)
    if (b.objects.count(k)) out.objects.insert(k);
  return out;
}

std::string to_string(const Capabilities& c) {
  std::string out;
  auto add = [&](bool set, const char* name) {
    if (!set) return;
    if (!out.empty()) out += ", ";
    out += name;
  };
  add(c.projects, "projects");
  add(c.overrides, "overrides");
  add(c.platform_defaults, "platform defaults");
  add(c.registrations, "registrations");
  for (const auto& k : c.objects) add(true, k.c_str());
  return out.empty() ? "nothing" : out;
}

bool holds(const Capabilities& c, const sinks::OverrideState& row) {
  // Global and domain-wide rows have no project: FlyteAdmin keeps them in its configuration, a
  // ConfigMap document holds them as entries without a project.
  return row.scope.project.empty() ? c.platform_defaults : c.overrides;
}

bool holds_object(const Capabilities& c, const std::string& key) {
  return c.objects.count(object_kind_of(key)) > 0;
}

bool holds(const Capabilities& c, const sinks::Step& step) {
  if (step.kind == sinks::ObjectKind::project) return c.projects;
  if (step.kind == sinks::ObjectKind::object) return holds_object(c, step.key);
  const sinks::OverrideState* row = step.desired ? &*step.desired
                                    : step.live  ? &*step.live
                                                 : nullptr;
  return row ? holds(c, *row) : c.overrides;
}

sinks::State held_part(sinks::State state, const Capabilities& c) {
  // Filtered in place: the states are whole observations and desired states (tens of thousands
  // of rows), and a copy of what is kept cost as much as the read.
  if (!c.projects) state.projects.clear();
  std::erase_if(state.overrides, [&](const auto& kv) { return !holds(c, kv.second); });
  std::erase_if(state.objects, [&](const auto& kv) { return !holds_object(c, kv.first); });
  return state;
}

}  // namespace flytecd::sinks
