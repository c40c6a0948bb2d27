#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "daemon/common/result.hpp"
#include "sinks/types.hpp"

namespace flytecd::sinks {

class EntitySink;

// What a sink holds, i.e. which parts of the state it observes and which steps it executes.
struct Capabilities {
  bool projects = false;               // Project rows (register, update, archive)
  bool overrides = false;              // override rows of a project, project-domain or workflow
  bool platform_defaults = false;      // global and domain-wide override rows (an empty project)
  bool registrations = false;          // tasks, workflows, launch plans: entities() is not null
  std::set<std::string> objects = {};  // kinds of generic objects (ObjectValue::kind): "settings"

  bool any() const {
    return projects || overrides || platform_defaults || registrations || !objects.empty();
  }
  bool operator==(const Capabilities&) const = default;
};
Capabilities operator|(const Capabilities& a, const Capabilities& b);
Capabilities operator&(const Capabilities& a, const Capabilities& b);
// "projects, overrides, platform defaults, registrations" (the parts that are set; "nothing").
std::string to_string(const Capabilities& c);

// Whether `c` holds the object a step writes, an override row, or the object of a key.
bool holds(const Capabilities& c, const sinks::Step& step);
bool holds(const Capabilities& c, const sinks::OverrideState& row);
bool holds_object(const Capabilities& c, const std::string& key);
// The part of `state` that `c` holds (pass an rvalue to filter without a copy). Pure.
sinks::State held_part(sinks::State state, const Capabilities& c);

// What one observation must cover. `projects` empty: everything the sink holds. Otherwise the pass
// reconciles only these projects (a targeted pass after a Git change, pass/scope.hpp): the sink
// must return their projects and, of their override rows, at least those named in
// `override_keys` (the keys the desired state and the ledger have in them); it may return more
// (everything, by default), since the pass narrows what it gets. Generic objects are out of a
// targeted pass.
struct ObserveScope {
  std::set<std::string> projects;
  std::set<std::string> override_keys;
  bool everything() const { return projects.empty(); }
};

// Where desired state is written: FlyteAdmin over gRPC (also how the embedded emulator is
// reached), the RFC 3749 ConfigMap document, or several of them composed by capability
// (routing_sink.hpp). The reconcile pass treats every sink alike: observe, plan, execute each
// step, then commit once per round. Thread-safe: execute() may be called from several threads.
class Sink {
 public:
  virtual ~Sink() = default;

  // What this sink holds. Constant over its lifetime.
  virtual Capabilities capabilities() const = 0;

  // The keys of generic objects the next observe() must cover: the desired state's and the
  // ledger's (reconcile::expected_objects). A sink whose server can list what it holds ignores
  // them; one that cannot (Flyte 2's settings service has no List) observes exactly these. Called
  // before each pass's first observe(); not concurrent with observe() or execute().
  virtual void expect(const std::set<std::string>& object_keys) { (void)object_keys; }

  // Reads the live state of the parts it holds (nothing else). Errors: unavailable/timeout
  // (retryable), unauthenticated, invalid_input (a live document it cannot read), internal.
  virtual Result<sinks::State> observe() = 0;
  // observe() limited to `scope` (see ObserveScope); the default reads everything. A sink whose
  // full read is costly (FlyteAdmin lists every row of every attribute type) reads only the
  // scope's rows.
  virtual Result<sinks::State> observe_scoped(const ObserveScope& scope) {
    (void)scope;
    return observe();
  }

  // Carries out (or, for a whole-document sink, stages until commit()) one plan step of a part it
  // holds. Idempotent: repeating a step that already took effect succeeds. Errors keep their
  // category (invalid_input and conflicts are permanent; unavailable retryable).
  virtual Status execute(const sinks::Step& step) = 0;

  // How many steps this sink keeps in flight through execute_async() without a thread each; 0
  // (the default): it has no asynchronous transport, and the pass runs execute() on its worker
  // threads instead.
  virtual int async_window() const { return 0; }
  // execute() that reports by calling `done` instead of returning: exactly once, on any thread
  // (gRPC's, or this one before it returns), and `done` must not block. The caller keeps `step`
  // alive until then. Called from several threads at once, `done` included (the pass starts the
  // next step from a step's `done`). The default runs execute() here.
  virtual void execute_async(const sinks::Step& step, std::function<void(Status)> done) {
    done(execute(step));
  }

  // Called once after the steps of a round ran (none may have): a sink that writes a whole
  // document writes it here. Idempotent; a no-op by default. Not concurrent with execute().
  virtual Status commit(const std::string& revision) {
    (void)revision;
    return ok_status();
  }

  // The server's version of the record the last successful write of object `key` left, for a
  // sink whose writes are conditional on a version (Flyte 2 settings): recorded in the ledger
  // beside the hash. 0 when the server keeps none (the default). Thread-safe.
  virtual uint64_t written_version(const std::string& key) const {
    (void)key;
    return 0;
  }

  // The registration facet (task / workflow / launch-plan writes), or null when the sink cannot
  // register (the ConfigMap, a settings service). Owned by the sink.
  virtual EntitySink* entities() { return nullptr; }

  // "flyteadmin dns:///host:port", "configmap flyte/flyte-admin-overrides (overrides.yaml)".
  virtual std::string describe() const = 0;

  // Calls made so far, keyed "Method CODE" ("UpdateProjectAttributes OK"), for the daemon's
  // flytecd_rpc_total; monotonic. Empty for a sink that does not count. Thread-safe.
  virtual std::map<std::string, uint64_t> rpc_counts() const { return {}; }
};

}  // namespace flytecd::sinks
