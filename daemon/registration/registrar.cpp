#include "daemon/registration/registrar.hpp"

#include "daemon/common/scan.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "daemon/common/log.hpp"
#include "daemon/registration/hydrate.hpp"
#include "daemon/registration/package.hpp"
#include "daemon/registration/upload.hpp"
#include "sources/oci/digest.hpp"

namespace flytecd::registration {
namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;

std::string registration_key(const model::Registration& r) {
  return "registration/" + r.project + "/" + r.domain + "/" + r.name;
}

bool RegistrationReport::has_changes() const {
  for (const auto& i : items)
    if (i.state != "in-sync") return true;
  return false;
}

std::string describe(const RegistrationOutcome& o) {
  std::string s = o.key + ": ";
  auto counts = [&] {
    return std::to_string(o.tasks) + " tasks, " + std::to_string(o.workflows) + " workflows, " +
           std::to_string(o.launch_plans) + " launch plans";
  };
  auto names = [](const std::vector<std::string>& v) {
    std::string out =
        std::to_string(v.size()) + (v.size() == 1 ? " launch plan (" : " launch plans (");
    for (size_t i = 0; i < v.size() && i < 3; ++i) out += (i ? ", " : "") + v[i];
    return out + (v.size() > 3 ? ", …)" : ")");
  };
  std::string pkg = o.package;
  if (auto pin = pkg.find("#sha256:"); pin != std::string::npos) pkg.resize(pin);
  if (!o.digest.empty()) pkg += " (" + sources::oci::short_digest(o.digest) + ")";
  if (o.state == "failed" || o.state == "conflict")
    return s + (o.state == "failed" ? "FAILED: " : "CONFLICT: ") +
           (o.source.empty() ? "" : "(" + o.source + ") ") + o.message;
  if (o.state == "orphaned") return s + "orphaned: " + o.message;
  if (o.state == "removed")
    return s + "removed from Git; deactivated " +
           (o.deactivated.empty() ? "nothing (no launch plan was ACTIVE at " + o.version + ")"
                                  : names(o.deactivated));
  if (o.state == "register")
    s += "would register " + o.version + " from " + pkg + ": " + counts();
  else if (o.state == "registered")
    s += "registered " + o.version + " from " + pkg + ": " + counts() + " (" +
         std::to_string(o.created) + " created, " + std::to_string(o.existed) + " already existed)";
  else
    s += (o.state == "in-sync" ? "in sync at " : "") + o.version + " from " + pkg + ": " + counts();
  if (!o.activated.empty())
    s += (o.state == "register" || o.state == "activate" ? "; would activate " : "; activated ") +
         names(o.activated);
  if (!o.deactivated.empty())
    s += (o.state == "register" || o.state == "activate" ? "; would deactivate "
                                                         : "; deactivated ") +
         names(o.deactivated);
  if (o.activated.empty() && o.state == "in-sync")
    s += "; " + std::to_string(o.active.size()) + " launch plans ACTIVE";
  // Names and messages come from documents and packages: escape them, one line per item.
  s = scan::printable(s, 4096);
  for (const auto& d : o.drift) s += "\n  ! drift: " + scan::printable(d, 1024);
  return s;
}

nlohmann::json to_json(const RegistrationOutcome& o) {
  return nlohmann::json{
      {"key", o.key},
      {"name", o.name},
      {"kind", o.source_kind},
      {"source", o.source},
      {"project", o.project},
      {"domain", o.domain},
      {"version", o.version},
      {"package", o.package},
      {"digest", o.digest},
      {"manifestDigest", o.manifest_digest},
      {"activate", std::string(model::to_string(o.activate))},
      {"counts", {{"tasks", o.tasks}, {"workflows", o.workflows}, {"launchPlans", o.launch_plans}}},
      {"created", o.created},
      {"existed", o.existed},
      {"activated", o.activated},
      {"deactivated", o.deactivated},
      {"active", o.active},
      {"drift", o.drift},
      {"state", o.state},
      {"message", o.message}};
}

namespace {

std::string id_text(const char* kind, const std::string& project, const std::string& domain,
                    const fc::Identifier& id) {
  return std::string(kind) + " " + project + "/" + domain + "/" + id.name() + "@" + id.version();
}

// Everything that decides what gets registered: a change to any of it registers again.
std::string fingerprint_of(const model::Registration& r, const std::string& digest) {
  std::string s;
  for (const std::string& part :
       {digest, r.project, r.domain, r.version, r.service_account, r.iam_role, r.raw_output_prefix,
        r.destination_dir, std::string(model::to_string(r.activate))})
    s += std::to_string(part.size()) + ":" + part + ";";
  return sources::oci::sha256_digest(s);
}

bool is_conflict(const Error& e) {
  return e.code == ErrorCode::invalid_input &&
         e.message.find("different structure") != std::string::npos;
}

fc::Identifier lp_id(const std::string& project, const std::string& domain, const std::string& name,
                     const std::string& version) {
  fc::Identifier id;
  id.set_resource_type(fc::LAUNCH_PLAN);
  id.set_project(project);
  id.set_domain(domain);
  id.set_name(name);
  id.set_version(version);
  return id;
}

size_t count_prefix(const std::vector<std::string>& ids, std::string_view prefix) {
  return static_cast<size_t>(std::count_if(ids.begin(), ids.end(), [&](const std::string& s) {
    return s.compare(0, prefix.size(), prefix) == 0;
  }));
}

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
  Status set_launch_plan_state(const fc::Identifier& id, bool active) override {
    return guard([&] { return m_inner.set_launch_plan_state(id, active); });
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

class Run {
 public:
  Run(sinks::EntitySink& sink, PackageSource& packages, ledger::Ledger& ledger,
      const RegistrarOptions& options, MemoryBudget& memory, CircuitBreaker& breaker)
      : m_sink(sink, breaker),
        m_breaker(breaker),
        m_packages(packages),
        m_ledger(ledger),
        m_opt(options),
        m_memory(memory) {}

  bool cancelled() const { return m_opt.cancel && m_opt.cancel->load(); }

  void count_rpc(size_t n = 1) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_rpcs += n;
  }
  size_t rpcs() const { return m_rpcs; }

  // `force_register`: ignore the ledger's "already registered" (FlyteAdmin lost entities).
  RegistrationOutcome reconcile_one(const model::Registration& r,
                                    const ledger::RegistrationRecord* prev,
                                    bool force_register = false) {
    RegistrationOutcome o;
    o.key = registration_key(r);
    o.name = r.name;
    o.source_kind = r.source_kind;
    o.project = r.project;
    o.domain = r.domain;
    o.version = r.version;
    o.package = r.package;
    o.activate = r.activate;
    o.source = r.where.file.empty() ? "" : r.where.file + ":" + std::to_string(r.where.line);
    auto fail = [&](const Error& e, const char* state = "failed") {
      o.state = state;
      o.message = e.message;
      return o;
    };
    if (cancelled()) return fail(Error{ErrorCode::unavailable, "cancelled before it started"});
    if (auto down = m_breaker.error()) return fail(down->wrap("flyteadmin: not attempted"));

    auto loaded = m_packages.load(r);
    if (!loaded) return fail(loaded.error());
    o.package = loaded->reference;
    o.digest = loaded->digest;
    o.manifest_digest = loaded->manifest_digest;
    const std::string fingerprint = fingerprint_of(r, loaded->digest);
    const bool registered_before = !force_register && prev && prev->fingerprint == fingerprint;
    if (registered_before) std::string().swap(loaded->bytes);  // only its digest was needed

    ledger::RegistrationRecord rec;
    rec.key = o.key;
    rec.fingerprint = fingerprint;
    rec.digest = loaded->digest;
    rec.package = loaded->reference;
    rec.project = r.project;
    rec.domain = r.domain;
    rec.version = r.version;
    rec.revision = m_opt.revision;

    if (registered_before) {
      rec.entities = prev->entities;
      rec.launch_plans = prev->launch_plans;
      rec.activated = prev->activated;
    } else {
      ReaderLimits limits;
      limits.max_total_bytes = m_opt.max_package_bytes;
      limits.budget = &m_memory;
      limits.cancel = m_opt.cancel;
      auto pkg = read_package(loaded->bytes, loaded->reference, limits);
      std::string().swap(loaded->bytes);  // decoded now; the archive is not needed any more
      if (!pkg) return fail(pkg.error());
      for (const auto& e : pkg->entities) {
        if (e.kind != EntityKind::launch_plan) continue;
        rec.launch_plans.push_back(e.id().name());
        const bool scheduled = e.launch_plan.spec().entity_metadata().has_schedule();
        if (r.activate == model::Activate::all ||
            (r.activate == model::Activate::scheduled && scheduled))
          rec.activated.push_back(e.id().name());
      }
      if (m_opt.dry_run) {
        o.tasks = pkg->count(EntityKind::task);
        o.workflows = pkg->count(EntityKind::workflow);
        o.launch_plans = pkg->count(EntityKind::launch_plan);
      } else if (auto s = register_package(r, *pkg, o, rec); !s) {
        return fail(s.error(), is_conflict(s.error()) ? "conflict" : "failed");
      }
    }
    if (registered_before || !m_opt.dry_run) {
      o.tasks = count_prefix(rec.entities, "TASK ");
      o.workflows = count_prefix(rec.entities, "WORKFLOW ");
      o.launch_plans = count_prefix(rec.entities, "LAUNCH_PLAN ");
    }

    if (auto s = reconcile_activation(r, prev, registered_before, rec.activated, o); !s) {
      if (s.error().code == ErrorCode::not_found && registered_before && !m_opt.dry_run) {
        // The ledger says this was registered, but FlyteAdmin does not have it (its database
        // was reset or restored): register again rather than trust the ledger.
        log::get("registration")
            ->warn("{}: {}; registering the package again", o.key, s.error().message);
        auto again = reconcile_one(r, prev, true);
        again.drift.insert(again.drift.begin(),
                           "FlyteAdmin lacks entities registered earlier (database reset?): "
                           "registered again");
        return again;
      }
      return fail(s.error());
    }
    if (!m_opt.dry_run && (!registered_before || !o.activated.empty() || !o.deactivated.empty())) {
      if (auto s = m_ledger.record_registration(rec); !s) return fail(s.error());
    }
    if (m_opt.dry_run)
      o.state = !registered_before                               ? "register"
                : (o.activated.empty() && o.deactivated.empty()) ? "in-sync"
                                                                 : "activate";
    else
      o.state = !registered_before                               ? "registered"
                : (o.activated.empty() && o.deactivated.empty()) ? "in-sync"
                                                                 : "activated";
    return o;
  }

  // A registration gone from Git: deactivate what it activated (nothing is deleted).
  RegistrationOutcome remove_one(const ledger::RegistrationRecord& rec) {
    RegistrationOutcome o;
    o.key = rec.key;
    o.name = rec.key.substr(rec.key.rfind('/') + 1);
    o.project = rec.project;
    o.domain = rec.domain;
    o.version = rec.version;
    o.package = rec.package;
    o.digest = rec.digest;
    o.tasks = count_prefix(rec.entities, "TASK ");
    o.workflows = count_prefix(rec.entities, "WORKFLOW ");
    o.launch_plans = count_prefix(rec.entities, "LAUNCH_PLAN ");
    if (!m_opt.prune) {
      o.state = "orphaned";
      o.message = "removed from Git; prune is off, so its launch plans stay as they are";
      return o;
    }
    auto live = m_sink.active_launch_plans(rec.project, rec.domain);
    if (!live) {
      o.state = "failed";
      o.message = live.error().message;
      return o;
    }
    for (const auto& name : rec.activated) {
      auto it = live->find(name);
      if (it == live->end() || it->second != rec.version) continue;  // someone else's now
      o.deactivated.push_back(name);
      if (m_opt.dry_run) continue;
      if (auto s = m_sink.set_launch_plan_state(lp_id(rec.project, rec.domain, name, rec.version),
                                                false);
          !s) {
        o.state = "failed";
        o.message = s.error().message;
        return o;
      }
      count_rpc();
    }
    if (!m_opt.dry_run)
      if (auto s = m_ledger.forget_registration(rec.key); !s) {
        o.state = "failed";
        o.message = s.error().message;
        return o;
      }
    o.state = "removed";
    return o;
  }

 private:
  Status register_package(const model::Registration& r, Package& pkg, RegistrationOutcome& o,
                          ledger::RegistrationRecord& rec) {
    HydrateParams params;
    params.project = r.project;
    params.domain = r.domain;
    params.version = r.version;
    params.service_account = r.service_account;
    params.iam_role = r.iam_role;
    params.raw_output_prefix = r.raw_output_prefix;
    params.destination_dir = r.destination_dir;
    if (pkg.has_fast_source()) {
      // flytectl uploads the source once, before any entity (reference §1.6).
      auto where = m_sink.create_upload_location(
          r.project, r.domain, pkg.fast_source_name,
          std::string(reinterpret_cast<const char*>(pkg.fast_source_md5.data()),
                      pkg.fast_source_md5.size()));
      if (!where) return where.error().wrap("fast-registration upload location");
      count_rpc();
      if (auto s = put_upload(
              *where, pkg.fast_source_size, [&pkg] { return open_fast_source(pkg); },
              pkg.fast_source_md5);
          !s)
        return s;
      count_rpc();
      params.remote_package_path = where->native_url;
    }
    if (auto s = hydrate(pkg, params); !s) return s;

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
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next.fetch_add(1)) < tasks.size();) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error) return;
        }
        auto s = create(r, *tasks[i], o, mu);
        if (!s) {
          std::lock_guard<std::mutex> lock(mu);
          if (!first_error) first_error = s.error();
          return;
        }
      }
    };
    const size_t n =
        std::min<size_t>(tasks.size(), static_cast<size_t>(std::max(1, m_opt.parallelism)));
    std::vector<std::thread> pool;
    for (size_t i = 1; i < n; ++i) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    if (first_error) return *first_error;
    // Workflows and launch plans in dependency order (pyflyte's file order, verified).
    for (Entity* e : rest) {
      if (cancelled()) return make_error(ErrorCode::unavailable, "cancelled");
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
        res = m_sink.create_task(req);
        req.mutable_spec()->Swap(&e.task);
        break;
      }
      case EntityKind::workflow: {
        fa::WorkflowCreateRequest req;
        id.set_resource_type(fc::WORKFLOW);
        *req.mutable_id() = id;
        req.mutable_spec()->Swap(&e.workflow);
        res = m_sink.create_workflow(req);
        req.mutable_spec()->Swap(&e.workflow);
        break;
      }
      case EntityKind::launch_plan: {
        fa::LaunchPlanCreateRequest req;
        id.set_resource_type(fc::LAUNCH_PLAN);
        *req.mutable_id() = id;
        req.mutable_spec()->Swap(e.launch_plan.mutable_spec());
        res = m_sink.create_launch_plan(req);
        req.mutable_spec()->Swap(e.launch_plan.mutable_spec());
        break;
      }
    }
    count_rpc();
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

  Status reconcile_activation(const model::Registration& r, const ledger::RegistrationRecord* prev,
                              bool registered_before, const std::vector<std::string>& want,
                              RegistrationOutcome& o) {
    auto live = m_sink.active_launch_plans(r.project, r.domain);
    if (!live) return live.error().wrap("reading active launch plans");
    const std::set<std::string> wanted(want.begin(), want.end());
    const std::set<std::string> managed_before =
        prev ? std::set<std::string>(prev->activated.begin(), prev->activated.end())
             : std::set<std::string>{};
    for (const auto& name : want) {
      auto it = live->find(name);
      if (it != live->end() && it->second == r.version) {
        o.active.push_back(name);
        continue;
      }
      const bool drift = registered_before && managed_before.count(name);
      if (drift)
        o.drift.push_back("launch plan " + name + ": " +
                          (it == live->end() ? std::string("no version is ACTIVE")
                                             : "version " + it->second + " is ACTIVE") +
                          ", Git says " + r.version);
      if (drift && !m_opt.self_heal) continue;
      o.activated.push_back(name);
      if (m_opt.dry_run) continue;
      if (auto s = m_sink.set_launch_plan_state(lp_id(r.project, r.domain, name, r.version), true);
          !s)
        return s.error().wrap("activating launch plan " + name + "@" + r.version);
      count_rpc();
      o.active.push_back(name);
    }
    // Launch plans this registration kept active before but no longer wants (activate mode
    // changed, or the new version dropped them): deactivate if still ACTIVE at the old version.
    if (prev) {
      for (const auto& name : prev->activated) {
        if (wanted.count(name)) continue;
        auto it = live->find(name);
        if (it == live->end() || it->second != prev->version) continue;
        o.deactivated.push_back(name);
        if (m_opt.dry_run) continue;
        if (auto s = m_sink.set_launch_plan_state(lp_id(r.project, r.domain, name, prev->version),
                                                  false);
            !s)
          return s.error().wrap("deactivating launch plan " + name + "@" + prev->version);
        count_rpc();
      }
    }
    return ok_status();
  }

  GuardedSink m_sink;
  CircuitBreaker& m_breaker;
  PackageSource& m_packages;
  ledger::Ledger& m_ledger;
  const RegistrarOptions& m_opt;
  MemoryBudget& m_memory;
  std::mutex m_mu;
  size_t m_rpcs = 0;
};

}  // namespace

RegistrationReport reconcile_registrations(
    const std::vector<model::Registration>& desired, sinks::EntitySink& sink,
    PackageSource& packages, ledger::Ledger& ledger, const RegistrarOptions& options,
    const std::function<void(const RegistrationOutcome&)>& on_item) {
  RegistrationReport report;
  auto records = ledger.registrations();
  if (!records) {
    RegistrationOutcome o;
    o.key = "registration/*";
    o.state = "failed";
    o.message = records.error().message;
    report.items.push_back(o);
    return report;
  }
  std::vector<const model::Registration*> order;
  for (const auto& r : desired) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return registration_key(*a) < registration_key(*b);
  });
  MemoryBudget local_memory(k_default_memory_budget_bytes);
  CircuitBreaker own_breaker;
  CircuitBreaker& breaker = options.breaker ? *options.breaker : own_breaker;
  Run run(sink, packages, ledger, options, options.memory ? *options.memory : local_memory,
          breaker);
  std::vector<RegistrationOutcome> outs(order.size());
  std::mutex cb_mu;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < order.size();) {
      auto it = records->find(registration_key(*order[i]));
      outs[i] = run.reconcile_one(*order[i], it == records->end() ? nullptr : &it->second);
      if (on_item) {
        std::lock_guard<std::mutex> lock(cb_mu);
        on_item(outs[i]);
      }
    }
  };
  // Packages in flight: a few (each also runs its tasks concurrently).
  const size_t n =
      std::min<size_t>(order.size(), static_cast<size_t>(std::max(1, options.parallelism / 2)));
  std::vector<std::thread> pool;
  for (size_t i = 1; i < n; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  report.items = std::move(outs);

  std::set<std::string> keys;
  for (const auto* r : order) keys.insert(registration_key(*r));
  for (const auto& [key, rec] : *records) {
    if (keys.count(key)) continue;
    report.items.push_back(run.remove_one(rec));
    if (on_item) on_item(report.items.back());
  }
  report.rpcs = run.rpcs();
  report.target_down = breaker.error();
  return report;
}

}  // namespace flytecd::registration
