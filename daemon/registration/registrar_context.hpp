#pragma once

// What the registrar's planning and execution share within one call (registrar.cpp): FlyteAdmin
// behind the circuit breaker, the options, memory budget and RPC count, and the small functions
// both use. Internal to daemon/registration.

#include <algorithm>
#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "daemon/registration/hydrate.hpp"
#include "daemon/registration/package.hpp"
#include "daemon/registration/registrar.hpp"

namespace flytecd::registration::detail {
namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;

// Every FlyteAdmin call of a registration pass goes through the breaker: it counts calls that
// found FlyteAdmin unreachable (each already retried by the transport) and, once open, fails the
// calls not yet made at once instead of retrying each against a target that is gone.
class GuardedSink final : public sinks::EntitySink {
 public:
  GuardedSink(sinks::EntitySink& inner, CircuitBreaker& breaker)
      : m_inner(inner), m_breaker(breaker) {}

  Result<sinks::Created> create_task(const fa::TaskCreateRequest& req) override {
    return guard([&] { return m_inner.create_task(req); });
  }
  Result<sinks::Created> create_workflow(const fa::WorkflowCreateRequest& req) override {
    return guard([&] { return m_inner.create_workflow(req); });
  }
  Result<sinks::Created> create_launch_plan(const fa::LaunchPlanCreateRequest& req) override {
    return guard([&] { return m_inner.create_launch_plan(req); });
  }
  Result<std::map<std::string, std::string>> active_launch_plans(
      const std::string& project, const std::string& domain) override {
    return guard([&] { return m_inner.active_launch_plans(project, domain); });
  }
  Result<bool> launch_plan_exists(const fc::Identifier& id) override {
    return guard([&] { return m_inner.launch_plan_exists(id); });
  }
  Result<VersionedLaunchPlans> launch_plans_at(const std::string& project,
                                               const std::string& domain,
                                               const std::vector<std::string>& versions) override {
    return guard([&] { return m_inner.launch_plans_at(project, domain, versions); });
  }
  Status set_launch_plan_state(const fc::Identifier& id, bool active) override {
    return guard([&] { return m_inner.set_launch_plan_state(id, active); });
  }
  bool looks_up_entities() const override { return m_inner.looks_up_entities(); }
  Result<bool> task_interface(const fc::Identifier& id, fc::TypedInterface& out) override {
    return guard([&] { return m_inner.task_interface(id, out); });
  }
  Result<bool> launch_plan_interface(const fc::Identifier& id,
                                     sinks::compiler::LaunchPlanInterface& out) override {
    return guard([&] { return m_inner.launch_plan_interface(id, out); });
  }
  Result<sinks::UploadLocation> create_upload_location(const std::string& project,
                                                       const std::string& domain,
                                                       const std::string& filename,
                                                       const std::string& content_md5) override {
    return guard(
        [&] { return m_inner.create_upload_location(project, domain, filename, content_md5); });
  }

 private:
  template <typename Fn>
  auto guard(Fn fn) -> decltype(fn()) {
    if (auto down = m_breaker.error()) return down->wrap("flyteadmin: not attempted");
    auto res = fn();
    if (res)
      m_breaker.record_success();
    else
      m_breaker.record(res.error());
    return res;
  }
  sinks::EntitySink& m_inner;
  CircuitBreaker& m_breaker;
};

// What one call of the public functions shares: the guarded sink, options, memory, RPC count.
struct Context {
  Context(sinks::EntitySink& sink, PackageResolver& packages_, ledger::Ledger& ledger_,
          const RegistrarOptions& options, MemoryBudget& memory_, CircuitBreaker& breaker_)
      : admin(sink, breaker_),
        breaker(breaker_),
        packages(packages_),
        ledger(ledger_),
        opt(options),
        memory(memory_) {}

  bool cancelled() const { return opt.cancel && opt.cancel->load(); }
  // Package loads stop with the pass: a transfer in flight is aborted on cancel.
  LoadControl load_control() const { return LoadControl{opt.cancel}; }
  void count_rpc(size_t n = 1) { rpcs.fetch_add(n); }
  int packages_in_flight() const { return std::max(1, opt.parallelism / 2); }
  ReaderLimits limits() const {
    ReaderLimits l;
    l.max_total_bytes = opt.max_package_bytes;
    l.budget = &memory;
    l.cancel = opt.cancel;
    return l;
  }
  // Why a registration does not start now (cancelled, FlyteAdmin unreachable), if it does not.
  std::optional<Error> not_startable() const {
    if (cancelled()) return Error{ErrorCode::unavailable, "cancelled before it started"};
    if (auto down = breaker.error()) return down->wrap("flyteadmin: not attempted");
    return std::nullopt;
  }

  GuardedSink admin;
  CircuitBreaker& breaker;
  PackageResolver& packages;
  ledger::Ledger& ledger;
  const RegistrarOptions& opt;
  MemoryBudget& memory;
  std::atomic<size_t> rpcs{0};
};

// A breaker and memory budget of the call's own when the options bring none.
struct Shared {
  explicit Shared(const RegistrarOptions& o)
      : local_memory(k_default_memory_budget_bytes),
        breaker(o.breaker ? *o.breaker : own_breaker),
        memory(o.memory ? *o.memory : local_memory) {}
  MemoryBudget local_memory;
  CircuitBreaker own_breaker;
  CircuitBreaker& breaker;
  MemoryBudget& memory;
};

// "LAUNCH_PLAN project/domain/name@version", as the ledger records an entity.
std::string id_text(const char* kind, const std::string& project, const std::string& domain,
                    const fc::Identifier& id);

// FlyteAdmin refused a create because an entity of that id exists with another structure.
bool is_conflict(const Error& e);

// The launch plan project/domain/name@version's identifier.
fc::Identifier lp_id(const std::string& project, const std::string& domain, const std::string& name,
                     const std::string& version);

// The facts of a loaded package (reference, digests, signer), before it is read.
PackageFacts facts_of(const LoadedPackage& loaded);
// The counts and launch plans of a package summary, or of a decoded package, into `f`.
void add_facts(const PackageSummary& sum, PackageFacts& f);
void add_facts(const Package& pkg, PackageFacts& f);

// The registration as the executor loads it: pinned to the content observation saw, so a tag
// moved or a URL changed since cannot bring other bytes, and nothing is downloaded twice (OCI
// blobs and manifests are cached by digest; a pinned https package is found in the cache).
// Repository paths are read from the revision being reconciled, which does not change.
model::Registration pinned(const model::Registration& r, const PackageFacts& f);

// The packages of one plan, each loaded once however many registrations name it (equal
// PackageResolver::identity): order() puts the registrations that share a package next to each
// other, so run in that order its bytes live while they are planned and no longer. Thread-safe.
class SharedLoads {
 public:
  using Loaded = std::shared_ptr<const Result<LoadedPackage>>;
  SharedLoads(Context& ctx, const std::vector<model::Registration>& desired);
  // Registration indices, those of one package together.
  const std::vector<size_t>& order() const { return m_order; }
  // desired[i]'s package: loaded by its first registration, waited for by the others.
  Loaded get(size_t i);
  // desired[i] will not ask for its package (skipped before reading it): its share is released,
  // so the package's bytes go with the last registration that does ask. Call at most once, and
  // never for an i that called get().
  void skip(size_t i);
  // Packages loaded and still held for registrations that have not asked yet.
  size_t held() const;

 private:
  struct Entry {
    std::shared_future<Loaded> loaded;
    size_t waiting = 0;  // registrations still to get it; the entry goes at 0
  };
  Context& m_ctx;
  const std::vector<model::Registration>& m_desired;
  std::vector<std::string> m_identity;
  std::vector<size_t> m_order;
  std::map<std::string, size_t> m_users;
  mutable std::mutex m_mu;
  std::map<std::string, Entry> m_loads;
};

// A package loaded for execution and decoded; its digest must be the one planned.
Result<Package> load_planned(Context& ctx, const model::Registration& r, const PackageFacts& f);

}  // namespace flytecd::registration::detail
