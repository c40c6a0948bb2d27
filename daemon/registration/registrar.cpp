#include "daemon/registration/registrar.hpp"

#include <algorithm>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "daemon/common/log.hpp"
#include "daemon/common/worker_pool.hpp"
#include "daemon/model/package_ref.hpp"
#include "daemon/registration/compile.hpp"
#include "daemon/registration/hydrate.hpp"
#include "daemon/registration/package.hpp"
#include "daemon/registration/registrar_context.hpp"
#include "daemon/registration/upload.hpp"

namespace flytecd::registration {
namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;
using namespace detail;  // registrar_context.hpp: this file's own helpers

namespace {

// What the ledger calls registered, checked against the target: the launch plans registered at
// each recorded (project, domain, version) still wanted. One ListLaunchPlans names several
// versions of a scope, as many as fill about one page by the ledger's launch-plan counts.
// FlyteAdmin answers on a thread of its own while observation reads the packages (for their
// digests); a package's check waits for the answers once its digest matches the ledger's.
class HeldLaunchPlans {
 public:
  HeldLaunchPlans(Context& ctx, const std::vector<model::Registration>& desired,
                  const std::map<std::string, ledger::RegistrationRecord>& records)
      : m_ctx(ctx) {
    std::map<ProjectDomain, std::vector<std::pair<std::string, size_t>>> by_scope;
    for (const auto& r : desired)
      if (auto rec = records.find(registration_key(r));
          rec != records.end() && rec->second.project == r.project &&
          rec->second.domain == r.domain && rec->second.version == r.version &&
          m_held.emplace(Version{r.project, r.domain, r.version}, std::nullopt).second)
        by_scope[{r.project, r.domain}].emplace_back(r.version, rec->second.launch_plans.size());
    for (const auto& [scope, versions] : by_scope) {
      constexpr size_t k_page = 500, k_max_versions = 100;
      size_t plans = 0;
      for (const auto& [version, count] : versions) {
        if (m_queries.empty() || m_queries.back().scope != scope || plans + count > k_page ||
            m_queries.back().versions.size() == k_max_versions) {
          m_queries.push_back({scope, {}});
          plans = 0;
        }
        m_queries.back().versions.push_back(version);
        plans += count;
      }
    }
    m_answered = std::async(std::launch::async, [this] { ask(); }).share();
  }
  HeldLaunchPlans(const HeldLaunchPlans&) = delete;
  HeldLaunchPlans& operator=(const HeldLaunchPlans&) = delete;
  ~HeldLaunchPlans() { m_answered.wait(); }

  // The launch-plan names FlyteAdmin holds at a version, or why that could not be read; nullptr
  // for a version not asked (nothing recorded at it). Waits for the answers.
  const Result<std::set<std::string>>* at(const std::string& project, const std::string& domain,
                                          const std::string& version) const {
    m_answered.wait();
    auto it = m_held.find({project, domain, version});
    return it == m_held.end() || !it->second ? nullptr : &*it->second;
  }
  void wait() const { m_answered.get(); }  // rethrows what the asking thread threw

 private:
  using Version = std::tuple<std::string, std::string, std::string>;
  struct Query {
    ProjectDomain scope;
    std::vector<std::string> versions;
  };

  void ask() {
    std::vector<std::optional<Result<sinks::EntitySink::VersionedLaunchPlans>>> answers(
        m_queries.size());
    run_jobs(m_queries.size(), m_ctx.packages_in_flight(), [&](size_t i) {
      answers[i] = m_ctx.admin.launch_plans_at(m_queries[i].scope.first, m_queries[i].scope.second,
                                               m_queries[i].versions);
    });
    for (size_t i = 0; i < m_queries.size(); ++i)
      for (const auto& version : m_queries[i].versions) {
        auto& slot = m_held[{m_queries[i].scope.first, m_queries[i].scope.second, version}];
        if (!*answers[i]) {
          slot = Result<std::set<std::string>>(answers[i]->error());
        } else {
          auto found = answers[i]->value().find(version);
          slot = found == answers[i]->value().end() ? std::set<std::string>{} : found->second;
        }
      }
  }

  Context& m_ctx;
  std::map<Version, std::optional<Result<std::set<std::string>>>> m_held;
  std::vector<Query> m_queries;
  std::shared_future<void> m_answered;
};

// Observation: what the plan needs, and nothing more (package facts, not packages).
Observation observe(Context& ctx, const std::vector<model::Registration>& desired,
                    std::map<std::string, ledger::RegistrationRecord> records) {
  Observation obs;
  obs.records = std::move(records);
  std::set<ProjectDomain> scopes;
  for (const auto& r : desired) scopes.insert({r.project, r.domain});
  std::set<std::string> keys;
  for (const auto& r : desired) keys.insert(registration_key(r));
  if (ctx.opt.prune)
    for (const auto& [key, rec] : obs.records)
      if (!keys.count(key)) scopes.insert({rec.project, rec.domain});

  const std::vector<ProjectDomain> scope_list(scopes.begin(), scopes.end());
  std::vector<std::optional<LiveLaunchPlans>> live(scope_list.size());
  run_jobs(scope_list.size(), ctx.packages_in_flight(), [&](size_t i) {
    live[i] = ctx.admin.active_launch_plans(scope_list[i].first, scope_list[i].second);
  });
  size_t unreachable = 0;
  for (size_t i = 0; i < scope_list.size(); ++i) {
    if (!*live[i] && CircuitBreaker::is_unreachable(live[i]->error())) ++unreachable;
    obs.live.emplace(scope_list[i], std::move(*live[i]));
  }
  // Every read of live state found FlyteAdmin unreachable: conclusive, start nothing.
  if (unreachable && unreachable == scope_list.size())
    ctx.breaker.trip(obs.live.begin()->second.error());

  HeldLaunchPlans held(ctx, desired, obs.records);

  std::vector<std::optional<Result<PackageFacts>>> facts(desired.size());
  std::vector<std::optional<Result<std::vector<std::string>>>> missing(desired.size());
  // 200 registrations of one package read and hash it once.
  SharedLoads loads(ctx, desired);
  run_jobs(desired.size(), ctx.packages_in_flight(), [&](size_t k) {
    const size_t i = loads.order()[k];
    const model::Registration& r = desired[i];
    facts[i] = [&]() -> Result<PackageFacts> {
      if (auto no = ctx.not_startable()) {
        loads.skip(i);
        return *no;
      }
      const auto& scope_live = obs.live.at({r.project, r.domain});
      if (!scope_live) {
        loads.skip(i);
        return scope_live.error().wrap("reading active launch plans");
      }
      const SharedLoads::Loaded shared = loads.get(i);
      const Result<LoadedPackage>& loaded = *shared;
      if (!loaded) return loaded.error();
      PackageFacts f = facts_of(*loaded);
      auto prev = obs.records.find(registration_key(r));
      if (prev != obs.records.end() &&
          prev->second.fingerprint == registration_fingerprint(r, loaded->digest)) {
        // Registered before, says the ledger: in sync only if FlyteAdmin holds it.
        const Result<std::set<std::string>>* q = held.at(r.project, r.domain, r.version);
        if (q == nullptr) return f;
        if (!*q) {
          missing[i] = q->error();
          return f;
        }
        std::vector<std::string> absent;
        for (const auto& name : prev->second.launch_plans)
          if (!q->value().count(name)) absent.push_back(name);
        missing[i] = absent;
        if (absent.empty()) return f;  // its digest is all the plan needs
        // Missing in FlyteAdmin: planned as a registration, so the package is read below.
      }
      if (ctx.opt.dry_run) {
        // Nothing executes after a dry run: read the package in full and compile it as
        // FlyteAdmin would, so the plan reports every problem the executor would meet (an
        // undecodable task, a corrupt fast source, a workflow FlyteAdmin would refuse).
        auto pkg = read_package(loaded->bytes, loaded->reference, ctx.limits());
        if (!pkg) return pkg.error();
        if (auto s = hydrate_and_compile(*pkg, hydrate_params(r), loaded->reference, &ctx.admin);
            !s)
          return s.error();
        add_facts(*pkg, f);
        return f;  // the decoded package (and its memory lease) is dropped here
      }
      // What the plan needs (counts, launch plans): a summary, not the decoded package; the
      // executor reads the package in full (and compiles it), and fails the registration if
      // that fails.
      auto sum = summarize_package(loaded->bytes, loaded->reference, ctx.limits());
      if (!sum) return sum.error();
      add_facts(*sum, f);
      return f;
    }();
  });
  held.wait();
  for (size_t i = 0; i < desired.size(); ++i) {
    obs.packages.emplace(registration_key(desired[i]), std::move(*facts[i]));
    if (missing[i]) obs.missing.emplace(registration_key(desired[i]), std::move(*missing[i]));
  }
  return obs;
}

// Carries out the steps of plan items.
class Executor {
 public:
  explicit Executor(Context& ctx) : m_ctx(ctx) {}

  RegistrationOutcome run(const PlanItem& it) {
    RegistrationOutcome o = outcome_of(it);
    if (it.state == ItemState::in_sync || it.state == ItemState::orphaned ||
        it.state == ItemState::failed)
      return o;
    // From here the outcome says what was done, not what would be.
    o.activated.clear();
    o.deactivated.clear();
    if (auto no = m_ctx.not_startable()) return fail(o, *no);
    switch (it.state) {
      case ItemState::remove:
        return remove(it, o);
      case ItemState::register_:
        return register_item(it, o, nullptr);
      case ItemState::activate:
        return activate_item(it, o);
      default:
        return o;
    }
  }

 private:
  static RegistrationOutcome fail(RegistrationOutcome& o, const Error& e,
                                  RegistrationState state = RegistrationState::failed) {
    o.state = state;
    o.message = e.message;
    return o;
  }

  ledger::RegistrationRecord record_of(const PlanItem& it, const std::string& reference) const {
    const model::Registration& r = *it.registration;
    ledger::RegistrationRecord rec;
    rec.key = it.key;
    rec.fingerprint = it.fingerprint;
    rec.digest = it.package.digest;
    rec.package = reference;
    rec.project = r.project;
    rec.domain = r.domain;
    rec.version = r.version;
    rec.revision = m_ctx.opt.revision;
    rec.launch_plans = it.launch_plans;
    rec.activated = it.wanted;
    rec.signer = ledger::signer_text(it.package.signer);
    return rec;
  }

  // `decoded`: the package already read (the recovery path), else it is loaded here.
  RegistrationOutcome register_item(const PlanItem& it, RegistrationOutcome& o, Package* decoded) {
    const model::Registration& r = *it.registration;
    std::optional<Package> own;
    if (!decoded) {
      auto pkg = load_planned(m_ctx, r, it.package);
      if (!pkg) return fail(o, pkg.error());
      own.emplace(std::move(*pkg));
      decoded = &*own;
    }
    ledger::RegistrationRecord rec = record_of(it, it.package.reference);
    if (auto s = register_package(r, *decoded, o, rec); !s)
      return fail(o, s.error(),
                  is_conflict(s.error()) ? RegistrationState::conflict : RegistrationState::failed);
    o.tasks = decoded->count(EntityKind::task);
    o.workflows = decoded->count(EntityKind::workflow);
    o.launch_plans = decoded->count(EntityKind::launch_plan);
    own.reset();  // registered: the memory goes back to the budget before activation
    if (auto s = activation(it, o); !s) return fail(o, s.error());
    if (auto s = m_ctx.ledger.record_registration(rec); !s) return fail(o, s.error());
    o.state = RegistrationState::registered;
    return o;
  }

  RegistrationOutcome activate_item(const PlanItem& it, RegistrationOutcome& o) {
    // Observation checked that FlyteAdmin holds the launch plans at this version; NOT_FOUND here
    // means they went away during the pass: the next pass plans the registration again.
    if (auto s = activation(it, o); !s) return fail(o, s.error());
    ledger::RegistrationRecord rec = record_of(it, it.package.reference);
    rec.entities = it.previous->entities;
    if (auto s = m_ctx.ledger.record_registration(rec); !s) return fail(o, s.error());
    o.state = RegistrationState::activated;
    return o;
  }

  Status activation(const PlanItem& it, RegistrationOutcome& o) {
    const model::Registration& r = *it.registration;
    for (const auto& step : it.steps) {
      if (step.kind != StepKind::activate && step.kind != StepKind::deactivate) continue;
      const bool on = step.kind == StepKind::activate;
      if (auto s = m_ctx.admin.set_launch_plan_state(
              lp_id(r.project, r.domain, step.launch_plan, step.version), on);
          !s)
        return s.error().wrap(std::string(on ? "activating" : "deactivating") + " launch plan " +
                              step.launch_plan + "@" + step.version);
      m_ctx.count_rpc();
      (on ? o.activated : o.deactivated).push_back(step.launch_plan);
      if (on) o.active.push_back(step.launch_plan);
    }
    return ok_status();
  }

  // A registration gone from Git: deactivate what it activated (nothing is deleted).
  RegistrationOutcome remove(const PlanItem& it, RegistrationOutcome& o) {
    const ledger::RegistrationRecord& rec = *it.previous;
    for (const auto& step : it.steps) {
      if (step.kind != StepKind::deactivate) continue;
      if (auto s = m_ctx.admin.set_launch_plan_state(
              lp_id(rec.project, rec.domain, step.launch_plan, step.version), false);
          !s)
        return fail(o, s.error());
      m_ctx.count_rpc();
      o.deactivated.push_back(step.launch_plan);
    }
    if (auto s = m_ctx.ledger.forget_registration(rec.key); !s) return fail(o, s.error());
    o.state = RegistrationState::removed;
    return o;
  }

  Status register_package(const model::Registration& r, Package& pkg, RegistrationOutcome& o,
                          ledger::RegistrationRecord& rec) {
    HydrateParams params = hydrate_params(r);
    if (pkg.has_fast_source()) {
      // flytectl uploads the source once, before any entity (reference §1.6).
      auto where = m_ctx.admin.create_upload_location(
          r.project, r.domain, pkg.fast_source_name,
          std::string(reinterpret_cast<const char*>(pkg.fast_source_md5.data()),
                      pkg.fast_source_md5.size()));
      if (!where) return where.error().wrap("fast-registration upload location");
      m_ctx.count_rpc();
      if (auto s = put_upload(
              *where, pkg.fast_source_size, [&pkg] { return open_fast_source(pkg); },
              pkg.fast_source_md5);
          !s)
        return s;
      m_ctx.count_rpc();
      params.remote_package_path = where->native_url;
    }
    if (auto s = hydrate(pkg, params); !s) return s;
    // FlyteAdmin compiles every workflow: a package it would refuse fails before any Create.
    // References the package does not hold are fetched from FlyteAdmin and type-checked.
    if (auto s = check_compiles(pkg, rec.package, &m_ctx.admin); !s) return s;

    auto order = registration_order(pkg);
    if (!order) return order.error();
    std::vector<Entity*> tasks, rest;
    for (size_t i : *order) {
      Entity& e = pkg.entities[i];
      (e.kind == EntityKind::task ? tasks : rest).push_back(&e);
    }

    // Tasks have no dependencies on each other: several in flight.
    std::mutex mu;
    std::optional<Error> first_error;
    auto has_error = [&] {
      std::lock_guard<std::mutex> lock(mu);
      return first_error.has_value();
    };
    run_jobs(
        tasks.size(), m_ctx.opt.parallelism,
        [&](size_t i) {
          if (auto s = create(r, *tasks[i], o, mu); !s) {
            std::lock_guard<std::mutex> lock(mu);
            if (!first_error) first_error = s.error();
          }
        },
        has_error);
    if (first_error) return *first_error;
    // Workflows and launch plans in dependency order (pyflyte's file order, verified).
    for (Entity* e : rest) {
      if (m_ctx.cancelled()) return make_error(ErrorCode::unavailable, "cancelled");
      if (auto s = create(r, *e, o, mu); !s) return s;
    }
    for (const Entity* e : tasks) rec.entities.push_back(entity_text(r, *e));
    for (const Entity* e : rest) rec.entities.push_back(entity_text(r, *e));
    return ok_status();
  }

  static std::string entity_text(const model::Registration& r, const Entity& e) {
    const char* kind = e.kind == EntityKind::task       ? "TASK"
                       : e.kind == EntityKind::workflow ? "WORKFLOW"
                                                        : "LAUNCH_PLAN";
    return id_text(kind, r.project, r.domain, e.id());
  }

  // Moves the spec into the request and back (no copy of a possibly large spec per call in
  // flight); `e` is unchanged afterwards.
  Status create(const model::Registration& r, Entity& e, RegistrationOutcome& o, std::mutex& mu) {
    fc::Identifier id;
    id.set_project(r.project);
    id.set_domain(r.domain);
    id.set_name(e.id().name());
    id.set_version(e.id().version());
    Result<sinks::Created> res = sinks::Created::created;
    switch (e.kind) {
      case EntityKind::task: {
        fa::TaskCreateRequest req;
        id.set_resource_type(fc::TASK);
        *req.mutable_id() = id;
        req.mutable_spec()->Swap(&e.task);
        res = m_ctx.admin.create_task(req);
        req.mutable_spec()->Swap(&e.task);
        break;
      }
      case EntityKind::workflow: {
        fa::WorkflowCreateRequest req;
        id.set_resource_type(fc::WORKFLOW);
        *req.mutable_id() = id;
        req.mutable_spec()->Swap(&e.workflow);
        res = m_ctx.admin.create_workflow(req);
        req.mutable_spec()->Swap(&e.workflow);
        break;
      }
      case EntityKind::launch_plan: {
        fa::LaunchPlanCreateRequest req;
        id.set_resource_type(fc::LAUNCH_PLAN);
        *req.mutable_id() = id;
        req.mutable_spec()->Swap(e.launch_plan.mutable_spec());
        res = m_ctx.admin.create_launch_plan(req);
        req.mutable_spec()->Swap(e.launch_plan.mutable_spec());
        break;
      }
    }
    m_ctx.count_rpc();
    if (!res) {
      const Error& err = res.error();
      std::string what = std::string(to_string(e.kind)) + " " + id.name() + "@" + id.version() +
                         " (" + e.file + ")";
      if (is_conflict(err))
        return Error{err.code, what +
                                   ": FlyteAdmin already has different content under this "
                                   "version; versions are immutable, so register the change "
                                   "under a new version. " +
                                   err.message};
      return err.wrap(what);
    }
    std::lock_guard<std::mutex> lock(mu);
    (*res == sinks::Created::created ? o.created : o.existed) += 1;
    return ok_status();
  }

  Context& m_ctx;
};

}  // namespace

namespace {

Result<RegistrationPlan> plan_with(Context& ctx, const std::vector<model::Registration>& desired) {
  auto records = ctx.ledger.registrations();
  if (!records) return records.error();
  if (ctx.opt.in_scope)
    std::erase_if(*records, [&](const auto& kv) {
      return !ctx.opt.in_scope(kv.second.project, kv.second.domain);
    });
  Observation obs = observe(ctx, desired, std::move(*records));
  RegistrationPlan plan =
      compute_plan(desired, std::move(obs), PlanPolicy{ctx.opt.self_heal, ctx.opt.prune});
  plan.target_down = ctx.breaker.error();
  // A version change back to a version the history registered under this key is a rollback.
  for (auto& it : plan.items)
    if (it.registration && it.previous && it.previous->version != it.registration->version) {
      auto versions = ctx.ledger.registered_versions(it.key);
      if (!versions) return versions.error();
      it.rollback = versions->count(it.registration->version) > 0;
    }
  return plan;
}

RegistrationReport execute_with(Context& ctx, const RegistrationPlan& plan,
                                const std::function<void(const RegistrationOutcome&)>& on_item) {
  RegistrationReport report;
  report.items.resize(plan.items.size());
  Executor exec(ctx);
  std::mutex cb_mu;
  auto one = [&](size_t i) {
    report.items[i] = exec.run(plan.items[i]);
    if (on_item) {
      std::lock_guard<std::mutex> lock(cb_mu);
      on_item(report.items[i]);
    }
  };
  // Desired registrations first, a few at a time (each also runs its tasks concurrently), then
  // the removals one by one.
  const size_t desired =
      static_cast<size_t>(std::find_if(plan.items.begin(), plan.items.end(),
                                       [](const PlanItem& it) { return !it.registration; }) -
                          plan.items.begin());
  run_jobs(desired, ctx.packages_in_flight(), one);
  for (size_t i = desired; i < plan.items.size(); ++i) one(i);
  report.rpcs = ctx.rpcs.load();
  report.target_down = ctx.breaker.error();
  return report;
}

RegistrationReport ledger_failure(const Error& e) {
  RegistrationReport report;
  RegistrationOutcome o;
  o.key = "registration/*";
  o.state = RegistrationState::failed;
  o.message = e.message;
  report.items.push_back(o);
  return report;
}

}  // namespace

Result<RegistrationPlan> plan_registrations(const std::vector<model::Registration>& desired,
                                            sinks::EntitySink& sink, PackageResolver& packages,
                                            ledger::Ledger& ledger,
                                            const RegistrarOptions& options) {
  Shared shared(options);
  Context ctx(sink, packages, ledger, options, shared.memory, shared.breaker);
  return plan_with(ctx, desired);
}

RegistrationReport execute_registrations(
    const RegistrationPlan& plan, sinks::EntitySink& sink, PackageResolver& packages,
    ledger::Ledger& ledger, const RegistrarOptions& options,
    const std::function<void(const RegistrationOutcome&)>& on_item) {
  Shared shared(options);
  Context ctx(sink, packages, ledger, options, shared.memory, shared.breaker);
  return execute_with(ctx, plan, on_item);
}

RegistrationReport reconcile_registrations(
    const std::vector<model::Registration>& desired, sinks::EntitySink& sink,
    PackageResolver& packages, ledger::Ledger& ledger, const RegistrarOptions& options,
    const std::function<void(const RegistrationOutcome&)>& on_item) {
  Shared shared(options);  // one breaker and budget for both phases
  Context ctx(sink, packages, ledger, options, shared.memory, shared.breaker);
  auto plan = plan_with(ctx, desired);
  if (!plan) return ledger_failure(plan.error());
  if (!options.dry_run) return execute_with(ctx, *plan, on_item);
  RegistrationReport report = report_of(*plan);
  if (on_item)
    for (const auto& o : report.items) on_item(o);
  return report;
}

RebuiltRegistrations rebuild_registration_records(const std::vector<model::Registration>& declared,
                                                  const std::string& revision,
                                                  sinks::EntitySink& sink,
                                                  PackageResolver& packages, ledger::Ledger& ledger,
                                                  const RegistrarOptions& options) {
  Shared shared(options);
  Context ctx(sink, packages, ledger, options, shared.memory, shared.breaker);
  RebuiltRegistrations out;
  std::map<ProjectDomain, LiveLaunchPlans> live;
  const PlanPolicy policy{options.self_heal, options.prune};
  for (const auto& r : declared) {
    const std::string key = registration_key(r);
    auto skip = [&](const std::string& why) { out.skipped.push_back(key + ": " + why); };
    if (auto no = ctx.not_startable()) {
      skip(no->message);
      continue;
    }
    auto scope = live.find({r.project, r.domain});
    if (scope == live.end())
      scope = live.emplace(ProjectDomain{r.project, r.domain},
                           ctx.admin.active_launch_plans(r.project, r.domain))
                  .first;
    if (!scope->second) {
      skip("reading active launch plans: " + scope->second.error().message);
      continue;
    }
    auto loaded = ctx.packages.load(r, ctx.load_control());
    if (!loaded) {
      skip(loaded.error().message);
      continue;
    }
    PackageFacts facts = facts_of(*loaded);
    auto sum = summarize_package(loaded->bytes, loaded->reference, ctx.limits());
    if (!sum) {
      skip(sum.error().message);
      continue;
    }
    add_facts(*sum, facts);
    const PlanItem item = plan_registration(r, nullptr, facts, &scope->second, policy);
    if (item.launch_plans.empty()) {
      skip("the package has no launch plan to look up; it is registered again");
      continue;
    }
    ledger::RegistrationRecord rec;
    rec.key = key;
    rec.fingerprint = item.fingerprint;
    rec.digest = facts.digest;
    rec.package = facts.reference;
    rec.project = r.project;
    rec.domain = r.domain;
    rec.version = r.version;
    rec.revision = revision;
    rec.launch_plans = item.launch_plans;
    rec.activated = item.wanted;
    rec.signer = ledger::signer_text(facts.signer);
    std::string missing;
    for (const auto& name : item.launch_plans) {
      ++out.lookups;
      auto found = ctx.admin.launch_plan_exists(lp_id(r.project, r.domain, name, r.version));
      if (!found) {
        missing = "looking up launch plan " + name + "@" + r.version + ": " + found.error().message;
        break;
      }
      if (!*found) {
        missing = "launch plan " + name + "@" + r.version + " is not in FlyteAdmin";
        break;
      }
      rec.entities.push_back(
          id_text("LAUNCH_PLAN", r.project, r.domain, lp_id(r.project, r.domain, name, r.version)));
    }
    if (!missing.empty()) {
      skip(missing);
      continue;
    }
    out.records.push_back(std::move(rec));
  }
  return out;
}

}  // namespace flytecd::registration
