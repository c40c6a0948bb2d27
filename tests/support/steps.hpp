#pragma once
// Plan steps for tests that drive a sink directly (no plan): create a project, create a workflow
// override of EXECUTION_CLUSTER_LABEL in development.
#include <string>

#include "sinks/types.hpp"

namespace flytecd::testing {

inline sinks::Step project_step(const std::string& id, const std::string& name) {
  sinks::ProjectState p;
  p.id = id;
  p.name = name;
  sinks::Step s;
  s.kind = sinks::ObjectKind::project;
  s.action = sinks::Action::create;
  s.key = sinks::project_key(id);
  s.project = sinks::share(p);
  return s;
}

inline sinks::Step label_step(const std::string& project, const std::string& workflow,
                              const std::string& label) {
  sinks::OverrideState o;
  o.scope = sinks::Scope{project, "development", workflow};
  o.type = flyteidl::admin::EXECUTION_CLUSTER_LABEL;
  o.value.mutable_execution_cluster_label()->set_value(label);
  sinks::Step s;
  s.kind = sinks::ObjectKind::override_attr;
  s.action = sinks::Action::create;
  s.key = sinks::override_key(o.scope, o.type);
  s.desired = sinks::share(o);
  return s;
}

}  // namespace flytecd::testing
