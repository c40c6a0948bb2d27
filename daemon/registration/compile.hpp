#pragma once

#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/registration/hydrate.hpp"
#include "daemon/registration/package.hpp"

// Compiling a read package as FlyteAdmin would compile each of its workflows (flytectl
// `compile`; the rules are sinks/workflow_compiler.hpp's), plus FlyteAdmin's launch-plan input
// checks (launch_plan_validator.go checkAndFetchExpectedInputForLaunchPlan). References are
// resolved inside the package; a task or launch plan the package does not hold may already be
// registered, so it is a warning and the nodes using it are not type-checked.

namespace flytecd::registration {

struct CompileReport {
  // "valid-register.tgz: workflow core.x.wf: node n1 input a: STRING is not castable from
  // INTEGER (n0.o0)"; "…: launch plan core.x.lp: default input b: …"
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  bool ok() const { return errors.empty(); }
};

// Compiles every workflow and launch plan of `pkg` (hydrated or not: references are compared
// whole, and hydration rewrites them alike). `name` starts every message. Pure; thread-safe.
CompileReport compile_package(const Package& pkg, const std::string& name);

// Messages as they are shown: in order, at most `max_each` of each distinct message, the last of
// them followed by "… and 999,980 more of the same"; at most `max_lines` lines in all, the last
// then "… and N more (M messages in all)". A hostile workflow (a million nodes without an id)
// gives one error per node: this keeps what is printed, logged and stored short.
std::vector<std::string> group_messages(const std::vector<std::string>& messages,
                                        size_t max_each = 20, size_t max_lines = 1000);

// compile_package as a Status: invalid_input "the package does not compile (…):" with the
// errors, one a line, grouped (group_messages; never retried). What the registration executor
// checks before any Create.
Status check_compiles(const Package& pkg, const std::string& name);

// Hydrates `pkg` with `params` (a fast source's location may be unknown yet: a stand-in is
// used) and compiles it. Errors: invalid_input with hydration's error, or every compile error,
// one a line. `pkg` is left hydrated. What the registration planner and `validate` call.
Status hydrate_and_compile(Package& pkg, HydrateParams params, const std::string& name);

}  // namespace flytecd::registration
