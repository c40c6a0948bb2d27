#pragma once

#include <optional>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/registration/hydrate.hpp"
#include "daemon/registration/package.hpp"

namespace flytecd::sinks {
class EntitySink;
}  // namespace flytecd::sinks

// Compiling a read package as FlyteAdmin would compile each of its workflows (flytectl
// `compile`; the rules are sinks/workflow_compiler.hpp's), plus FlyteAdmin's launch-plan input
// checks (launch_plan_validator.go checkAndFetchExpectedInputForLaunchPlan). References are
// resolved inside the package. A task or launch plan the package does not hold: with a live
// target (a sink that looks entities up) it is fetched, as FlyteAdmin's CreateWorkflow fetches it
// from its database, and the nodes using it are type-checked against its interface (one that is
// not registered is an error, as FlyteAdmin's "not found"); offline it may already be
// registered, so it is a warning and those nodes are not type-checked.

namespace flytecd::registration {

struct CompileReport {
  // "valid-register.tgz: workflow core.x.wf: node n1 input a: STRING is not castable from
  // INTEGER (n0.o0)"; "…: launch plan core.x.lp: default input b: …"
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  // A lookup of a referenced entity failed (the target is unreachable): nothing is known.
  std::optional<Error> lookup_error;
  bool ok() const { return errors.empty() && !lookup_error; }
};

// Compiles every workflow and launch plan of `pkg` (hydrated or not: references are compared
// whole, and hydration rewrites them alike). `name` starts every message. Pure; thread-safe.
// `live`, when given and able to look entities up, resolves references the package does not hold.
CompileReport compile_package(const Package& pkg, const std::string& name,
                              sinks::EntitySink* live = nullptr);

// Messages as they are shown: in order, at most `max_each` of each distinct message, the last of
// them followed by "… and 999,980 more of the same"; at most `max_lines` lines in all, the last
// then "… and N more (M messages in all)". A hostile workflow (a million nodes without an id)
// gives one error per node: this keeps what is printed, logged and stored short.
std::vector<std::string> group_messages(const std::vector<std::string>& messages,
                                        size_t max_each = 20, size_t max_lines = 1000);

// compile_package as a Status: invalid_input "the package does not compile (…):" with the
// errors, one a line, grouped (group_messages; never retried). What the registration executor
// checks before any Create.
Status check_compiles(const Package& pkg, const std::string& name,
                      sinks::EntitySink* live = nullptr);

// Hydrates `pkg` with `params` (a fast source's location may be unknown yet: a stand-in is
// used) and compiles it. Errors: invalid_input with hydration's error, or every compile error,
// one a line. `pkg` is left hydrated. What the registration planner and `validate` call.
Status hydrate_and_compile(Package& pkg, HydrateParams params, const std::string& name,
                           sinks::EntitySink* live = nullptr);

}  // namespace flytecd::registration
