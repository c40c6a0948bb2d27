// compiler.GetRequirements: the tasks and launch plans a workflow references, for FlyteAdmin's
// CreateWorkflow (the emulator fetches them from its database) and for flytecd's own compile
// against a live target (daemon/registration/compile).
#include <map>
#include <set>

#include "sinks/workflow_compiler.hpp"

namespace flytecd::sinks::compiler {
namespace {

namespace fc = ::flyteidl::core;

struct Walk {
  Requirements out;
  std::set<std::string> seen;
  std::map<std::string, const fc::WorkflowTemplate*> sub_workflows;
  std::set<std::string> followed;
};

void walk_template(const fc::WorkflowTemplate& t, Walk& w);

void walk_node(const fc::Node& n, Walk& w) {
  if (n.has_task_node() && n.task_node().has_reference_id()) {
    const auto& id = n.task_node().reference_id();
    if (w.seen.insert("t" + id_key(id)).second) w.out.tasks.push_back(id);
  } else if (n.has_workflow_node()) {
    const auto& wn = n.workflow_node();
    if (wn.has_launchplan_ref()) {
      if (w.seen.insert("l" + id_key(wn.launchplan_ref())).second)
        w.out.launch_plans.push_back(wn.launchplan_ref());
    } else if (wn.has_sub_workflow_ref()) {
      const auto key = id_key(wn.sub_workflow_ref());
      const auto it = w.sub_workflows.find(key);
      if (it == w.sub_workflows.end()) {
        if (!w.out.missing_sub_workflow)
          w.out.missing_sub_workflow = std::make_pair(n.id(), wn.sub_workflow_ref());
      } else if (w.followed.insert(key).second) {
        walk_template(*it->second, w);
      }
    }
  } else if (n.has_branch_node()) {
    const auto& ie = n.branch_node().if_else();
    if (ie.case_().has_then_node()) walk_node(ie.case_().then_node(), w);
    for (const auto& other : ie.other())
      if (other.has_then_node()) walk_node(other.then_node(), w);
    if (ie.has_else_node()) walk_node(ie.else_node(), w);
  } else if (n.has_array_node() && n.array_node().has_node()) {
    walk_node(n.array_node().node(), w);
  }
}

void walk_template(const fc::WorkflowTemplate& t, Walk& w) {
  for (const auto& n : t.nodes()) walk_node(n, w);
  if (t.has_failure_node()) walk_node(t.failure_node(), w);
}

}  // namespace

Requirements requirements(const flyteidl::admin::WorkflowSpec& spec) {
  Walk w;
  for (const auto& sub : spec.sub_workflows()) w.sub_workflows[id_key(sub.id())] = &sub;
  walk_template(spec.template_(), w);
  return std::move(w.out);
}

}  // namespace flytecd::sinks::compiler
