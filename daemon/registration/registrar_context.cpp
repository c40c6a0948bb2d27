#include "daemon/registration/registrar_context.hpp"

#include <algorithm>

#include "daemon/model/package_ref.hpp"

namespace flytecd::registration::detail {

std::string id_text(const char* kind, const std::string& project, const std::string& domain,
                    const fc::Identifier& id) {
  return std::string(kind) + " " + project + "/" + domain + "/" + id.name() + "@" + id.version();
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

SharedLoads::SharedLoads(Context& ctx, const std::vector<model::Registration>& desired)
    : m_ctx(ctx), m_desired(desired), m_identity(desired.size()), m_order(desired.size()) {
  for (size_t i = 0; i < desired.size(); ++i) {
    m_identity[i] = ctx.packages.identity(desired[i]);
    if (!m_identity[i].empty()) ++m_users[m_identity[i]];
    m_order[i] = i;
  }
  std::stable_sort(m_order.begin(), m_order.end(),
                   [&](size_t a, size_t b) { return m_identity[a] < m_identity[b]; });
}

SharedLoads::Loaded SharedLoads::get(size_t i) {
  const std::string& id = m_identity[i];
  auto load = [&] {
    return std::make_shared<const Result<LoadedPackage>>(
        m_ctx.packages.load(m_desired[i], m_ctx.load_control()));
  };
  if (id.empty()) return load();
  std::optional<std::promise<Loaded>> first;
  std::shared_future<Loaded> loaded;
  {
    std::lock_guard<std::mutex> lock(m_mu);
    auto it = m_loads.find(id);
    if (it == m_loads.end()) {
      first.emplace();
      it = m_loads.emplace(id, Entry{first->get_future().share(), m_users.at(id)}).first;
    }
    loaded = it->second.loaded;
    if (--it->second.waiting == 0) m_loads.erase(it);
  }
  if (first) first->set_value(load());
  return loaded.get();
}

void SharedLoads::skip(size_t i) {
  const std::string& id = m_identity[i];
  if (id.empty()) return;
  std::lock_guard<std::mutex> lock(m_mu);
  auto it = m_loads.find(id);
  if (it == m_loads.end()) {
    --m_users.at(id);  // not loaded yet: its first loader waits for one registration fewer
    return;
  }
  if (--it->second.waiting == 0) m_loads.erase(it);
}

size_t SharedLoads::held() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_loads.size();
}

PackageFacts facts_of(const LoadedPackage& loaded) {
  PackageFacts f;
  f.reference = loaded.reference;
  f.digest = loaded.digest;
  f.manifest_digest = loaded.manifest_digest;
  f.signer = loaded.signer;
  return f;
}

void add_facts(const PackageSummary& sum, PackageFacts& f) {
  f.read = true;
  f.tasks = sum.tasks;
  f.workflows = sum.workflows;
  f.launch_plans = sum.launch_plans.size();
  f.fast_source = sum.fast_source_name;
  for (const auto& lp : sum.launch_plans) f.plans.push_back({lp.name, lp.scheduled});
}

void add_facts(const Package& pkg, PackageFacts& f) {
  f.read = true;
  f.tasks = pkg.count(EntityKind::task);
  f.workflows = pkg.count(EntityKind::workflow);
  f.launch_plans = pkg.count(EntityKind::launch_plan);
  f.fast_source = pkg.fast_source_name;
  for (const auto& e : pkg.entities)
    if (e.kind == EntityKind::launch_plan)
      f.plans.push_back({e.id().name(), e.launch_plan.spec().entity_metadata().has_schedule()});
}

model::Registration pinned(const model::Registration& r, const PackageFacts& f) {
  std::string error;
  auto ref = model::parse_package_ref(f.reference, error);
  if (!ref || ref->kind == model::PackageRef::Kind::path || ref->pinned()) return r;
  if (ref->kind == model::PackageRef::Kind::oci) {
    if (f.manifest_digest.empty()) return r;
    ref->digest = f.manifest_digest;
  } else {
    ref->digest = f.digest;
  }
  model::Registration out = r;
  out.package = ref->to_string();
  out.registry_relative = false;
  if (!model::parse_package_ref(out.package, error)) return r;
  return out;
}

Result<Package> load_planned(Context& ctx, const model::Registration& r, const PackageFacts& f) {
  auto loaded = ctx.packages.load(pinned(r, f), ctx.load_control());
  if (!loaded) return loaded.error();
  if (loaded->digest != f.digest)
    return make_error(ErrorCode::unavailable,
                      "package " + f.reference + " changed while the pass ran: it is now " +
                          loaded->digest + ", the plan was made for " + f.digest +
                          " (the next reconcile plans it again)");
  auto pkg = read_package(loaded->bytes, f.reference, ctx.limits());
  std::string().swap(loaded->bytes);  // decoded now; the archive is not needed any more
  return pkg;
}

}  // namespace flytecd::registration::detail
