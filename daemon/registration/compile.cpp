#include "daemon/registration/compile.hpp"

#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "sinks/entity_sink.hpp"
#include "sinks/workflow_compiler.hpp"

namespace flytecd::registration {
namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;
namespace comp = ::flytecd::sinks::compiler;

namespace {

// A protobuf map in key order (its own order is unspecified): messages come out stable.
template <typename V>
std::map<std::string, const V*> sorted(const google::protobuf::Map<std::string, V>& m) {
  std::map<std::string, const V*> out;
  for (const auto& [k, v] : m) out[k] = &v;
  return out;
}

std::string names_of(const google::protobuf::Map<std::string, fc::Variable>& vars) {
  std::string s;
  for (const auto& [k, v] : sorted(vars)) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none" : s;
}

// The launch plan's inputs against the interface of the workflow it launches; fills `expected`
// with what the launch plan then expects (FlyteAdmin's closure.expected_inputs).
void check_launch_plan(const fa::LaunchPlanSpec& spec, const fc::TypedInterface& wf,
                       const std::string& prefix, CompileReport& report,
                       fc::ParameterMap& expected) {
  const auto& inputs = wf.inputs().variables();
  for (const auto& [name, pp] : sorted(spec.default_inputs().parameters())) {
    const fc::Parameter& p = *pp;
    auto it = inputs.find(name);
    if (it == inputs.end())
      report.errors.push_back(prefix + "default input " + name +
                              ": the workflow has no such input (inputs: " + names_of(inputs) +
                              ")");
    else if (!comp::castable(p.var().type(), it->second.type()))
      report.errors.push_back(prefix + "default input " + name + ": " +
                              comp::type_text(it->second.type()) + " is not castable from " +
                              comp::type_text(p.var().type()));
  }
  for (const auto& [name, lit] : sorted(spec.fixed_inputs().literals())) {
    const fc::Literal& literal = *lit;
    auto it = inputs.find(name);
    auto t = comp::type_of(literal);
    if (it == inputs.end())
      report.errors.push_back(prefix + "fixed input " + name +
                              ": the workflow has no such input (inputs: " + names_of(inputs) +
                              ")");
    else if (!t)
      report.errors.push_back(prefix + "fixed input " + name + ": the value has no known type");
    else if (!comp::castable(*t, it->second.type()))
      report.errors.push_back(prefix + "fixed input " + name + ": " +
                              comp::type_text(it->second.type()) + " is not castable from " +
                              comp::type_text(*t));
  }
  for (const auto& [name, v] : inputs) {
    auto d = spec.default_inputs().parameters().find(name);
    if (d != spec.default_inputs().parameters().end()) {
      (*expected.mutable_parameters())[name] = d->second;
    } else if (!spec.fixed_inputs().literals().count(name)) {
      fc::Parameter p;
      *p.mutable_var()->mutable_type() = v.type();
      p.set_required(true);
      (*expected.mutable_parameters())[name] = p;
    }
  }
}

}  // namespace

namespace {

// References the package does not hold, fetched from the live target once each. Afterwards the
// references are complete: a missing one is FlyteAdmin's "not found".
void look_up_references(const Package& pkg, sinks::EntitySink& live, comp::References& refs,
                        CompileReport& report) {
  std::set<std::string> asked;
  for (const auto& e : pkg.entities) {
    if (e.kind != EntityKind::workflow) continue;
    const auto needs = comp::requirements(e.workflow);
    for (const auto& id : needs.tasks) {
      const auto key = comp::id_key(id);
      if (refs.tasks.count(key) || !asked.insert("t" + key).second) continue;
      fc::TypedInterface iface;
      auto found = live.task_interface(id, iface);
      if (!found) {
        report.lookup_error = found.error().wrap("look up task " + id.name() + "@" + id.version());
        return;
      }
      if (*found) refs.tasks[key] = std::move(iface);
    }
    for (const auto& id : needs.launch_plans) {
      const auto key = comp::id_key(id);
      if (refs.launch_plans.count(key) || !asked.insert("l" + key).second) continue;
      comp::LaunchPlanInterface lp;
      auto found = live.launch_plan_interface(id, lp);
      if (!found) {
        report.lookup_error =
            found.error().wrap("look up launch plan " + id.name() + "@" + id.version());
        return;
      }
      if (*found) refs.launch_plans[key] = std::move(lp);
    }
  }
  refs.complete = true;
}

}  // namespace

CompileReport compile_package(const Package& pkg, const std::string& name,
                              sinks::EntitySink* live) {
  CompileReport report;
  comp::References refs;
  refs.complete = false;
  std::map<std::string, const Entity*> workflows;
  for (const auto& e : pkg.entities) {
    if (e.kind == EntityKind::task) {
      // CreateTask runs the task compiler (compiler.CompileTask).
      for (const auto& issue : comp::compile_task(e.task.template_()))
        report.errors.push_back(name + ": task " + e.id().name() + ": " + issue.text);
      refs.tasks[comp::id_key(e.id())] = e.task.template_().interface();
    } else if (e.kind == EntityKind::workflow)
      workflows[comp::id_key(e.id())] = &e;
  }
  for (const auto& e : pkg.entities) {
    if (e.kind != EntityKind::launch_plan) continue;
    const std::string prefix = name + ": launch plan " + e.id().name() + ": ";
    const auto& spec = e.launch_plan.spec();
    auto wf = workflows.find(comp::id_key(spec.workflow_id()));
    if (wf == workflows.end()) {
      report.warnings.push_back(prefix + "workflow " + spec.workflow_id().name() + "@" +
                                spec.workflow_id().version() +
                                " is not in the package; inputs not checked (it must be "
                                "registered already)");
      continue;
    }
    const auto& iface = wf->second->workflow.template_().interface();
    comp::LaunchPlanInterface lp;
    check_launch_plan(spec, iface, prefix, report, lp.inputs);
    *lp.outputs.mutable_variables() = iface.outputs().variables();
    refs.launch_plans[comp::id_key(e.id())] = std::move(lp);
  }
  if (live && live->looks_up_entities()) {
    look_up_references(pkg, *live, refs, report);
    if (report.lookup_error) return report;
  }
  for (const auto& e : pkg.entities) {
    if (e.kind != EntityKind::workflow) continue;
    const std::string prefix = name + ": workflow " + e.id().name() + ": ";
    for (const auto& issue : comp::compile_workflow(e.workflow, refs))
      (issue.warning ? report.warnings : report.errors).push_back(prefix + issue.text);
  }
  return report;
}

Status hydrate_and_compile(Package& pkg, HydrateParams params, const std::string& name,
                           sinks::EntitySink* live) {
  if (pkg.has_fast_source() && params.remote_package_path.empty())
    params.remote_package_path = "fast-source://" + pkg.fast_source_name;  // not uploaded yet
  if (auto s = hydrate(pkg, params); !s) return s;
  return check_compiles(pkg, name, live);
}

namespace {

// 999980 -> "999,980"
std::string with_commas(size_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::vector<std::string> group_messages(const std::vector<std::string>& messages, size_t max_each,
                                        size_t max_lines) {
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> count;  // total, shown
  for (const auto& m : messages) ++count[m].first;
  std::vector<std::string> out;
  size_t covered = 0;  // messages the lines so far stand for
  for (const auto& m : messages) {
    auto& [total, shown] = count[m];
    if (shown >= max_each) continue;
    if (out.size() + 1 >= max_lines && covered + 1 < messages.size()) {
      out.push_back("… and " + with_commas(messages.size() - covered) + " more (" +
                    with_commas(messages.size()) + " messages in all)");
      return out;
    }
    out.push_back(m);
    ++covered;
    if (++shown == max_each && total > max_each) {
      out.push_back("… and " + with_commas(total - max_each) + " more of the same");
      covered += total - max_each;
    }
  }
  return out;
}

Status check_compiles(const Package& pkg, const std::string& name, sinks::EntitySink* live) {
  CompileReport report = compile_package(pkg, name, live);
  if (report.lookup_error) return *report.lookup_error;
  if (report.ok()) return ok_status();
  std::string msg = "the package does not compile (FlyteAdmin would refuse it):";
  for (const auto& e : group_messages(report.errors)) msg += "\n  " + e;
  return make_error(ErrorCode::invalid_input, msg);
}

}  // namespace flytecd::registration
