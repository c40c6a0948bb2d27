// Compiling the packages registrations name, as FlyteAdmin compiles them (validate, plan --git).
#include "daemon/cli/package_compile.hpp"

#include "daemon/registration/compile.hpp"
#include "daemon/registration/packages.hpp"
#include "daemon/registration/plan.hpp"

namespace flytecd::cli {
namespace reg = ::flytecd::registration;

model::Diagnostics compile_repository_packages(const std::string& dir,
                                               const std::vector<model::Registration>& regs) {
  return compile_repository_packages(reg::directory_reader(dir), regs);
}

namespace {

// Reads, hydrates and compiles each registration's package that `load` gives (nullopt: skipped).
model::Diagnostics compile_each(
    const std::vector<model::Registration>& regs,
    const std::function<std::optional<Result<std::pair<std::string, std::string>>>(
        const model::Registration&)>& load) {
  model::Diagnostics out;
  std::vector<std::pair<const model::Registration*, std::vector<std::string>>> launch_plans;
  for (const auto& r : regs) {
    auto diag = [&](model::Severity sev, const std::string& message) {
      model::Diagnostic d;
      d.severity = sev;
      d.kind = model::DiagKind::invalid_value;
      d.where = r.where;
      d.path = "package";
      d.message = message;
      out.push_back(std::move(d));
    };
    auto loaded = load(r);
    if (!loaded) continue;
    if (!*loaded) {
      diag(model::Severity::error, loaded->error().message);
      continue;
    }
    const auto& [bytes, label] = **loaded;
    auto pkg = reg::read_package(bytes, label);
    if (!pkg) {
      diag(model::Severity::error, pkg.error().message);
      continue;
    }
    auto p = reg::hydrate_params(r);
    if (pkg->has_fast_source()) p.remote_package_path = "fast-source://" + pkg->fast_source_name;
    if (auto s = reg::hydrate(*pkg, p); !s) {
      diag(model::Severity::error, s.error().message);
      continue;
    }
    auto report = reg::compile_package(*pkg, label);
    for (const auto& e : reg::group_messages(report.errors)) diag(model::Severity::error, e);
    for (const auto& w : reg::group_messages(report.warnings)) diag(model::Severity::warning, w);
    // The launch plans this registration keeps ACTIVE (its activate mode).
    std::vector<std::string> names;
    for (const auto& e : pkg->entities)
      if (e.kind == reg::EntityKind::launch_plan &&
          (r.activate == model::Activate::all ||
           (r.activate == model::Activate::scheduled &&
            e.launch_plan.spec().entity_metadata().has_schedule())))
        names.push_back(e.id().name());
    launch_plans.emplace_back(&r, std::move(names));
  }
  // A launch plan two registrations of one project and domain both keep ACTIVE: each pass would
  // take its activation from the other. The revision is refused at the second, naming the first.
  for (const auto& clash : reg::launch_plan_clashes(launch_plans)) {
    model::Diagnostic d;
    d.severity = model::Severity::error;
    d.kind = model::DiagKind::invalid_value;
    d.where = clash.second->where;
    d.related = clash.first->where;
    d.path = "package";
    d.message = reg::describe(clash);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

model::Diagnostics compile_repository_packages(
    const std::function<Result<std::string>(const std::string& path)>& read,
    const std::vector<model::Registration>& regs) {
  return compile_each(
      regs,
      [&](const model::Registration& r)
          -> std::optional<Result<std::pair<std::string, std::string>>> {
        std::string why;
        auto ref = model::parse_package_ref(r.package, why);
        if (!ref || r.registry_relative || ref->kind != model::PackageRef::Kind::path)
          return std::nullopt;
        auto bytes = read(ref->path);
        if (!bytes) return Result<std::pair<std::string, std::string>>(bytes.error());
        return Result<std::pair<std::string, std::string>>(std::pair{std::move(*bytes), ref->path});
      });
}

model::Diagnostics compile_packages(registration::PackageResolver& packages,
                                    const std::vector<model::Registration>& regs) {
  return compile_each(regs,
                      [&](const model::Registration& r)
                          -> std::optional<Result<std::pair<std::string, std::string>>> {
                        auto loaded = packages.load(r);
                        if (!loaded)
                          return Result<std::pair<std::string, std::string>>(loaded.error());
                        return Result<std::pair<std::string, std::string>>(
                            std::pair{std::move(loaded->bytes), loaded->reference});
                      });
}

}  // namespace flytecd::cli
