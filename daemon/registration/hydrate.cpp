#include "daemon/registration/hydrate.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/struct.pb.h>

#include <map>
#include <set>

namespace flytecd::registration {

namespace {

using flyteidl::core::Identifier;
using flyteidl::core::Node;

class Hydrator {
 public:
  Hydrator(const HydrateParams& params, bool has_fast_source)
      : m_p(params), m_has_fast_source(has_fast_source) {}

  Status entity(Entity& e) {
    m_where = e.file + ": " + std::string(to_string(e.kind)) + " " + e.id().name();
    switch (e.kind) {
      case EntityKind::task:
        return task(e.task);
      case EntityKind::workflow:
        return workflow(e.workflow);
      case EntityKind::launch_plan:
        launch_plan(e.launch_plan);
        return ok_status();
    }
    return ok_status();
  }

 private:
  void id(Identifier* id) const {
    if (id->project().empty() || id->project() == k_project_placeholder) {
      id->set_project(m_p.project);
    }
    if (id->domain().empty() || id->domain() == k_domain_placeholder) id->set_domain(m_p.domain);
    if (m_p.force || id->version().empty() || id->version() == k_version_placeholder) {
      id->set_version(m_p.version);
    }
  }

  Error fail(const std::string& what) const {
    return make_error(ErrorCode::invalid_input, m_where + ": " + what);
  }

  // One container argument; exact matches only (runtime templates like {{.input}} stay).
  Status fast_arg(std::string* arg) const {
    if (*arg == k_remote_package_placeholder) {
      if (m_p.remote_package_path.empty()) {
        return fail(std::string(k_remote_package_placeholder) + " needs the fast source's upload " +
                    "location, but " +
                    (m_has_fast_source
                         ? "none was given; expected remote_package_path (upload the source first)"
                         : "the package has no fast*.tar.gz source archive; expected one "
                           "(pyflyte package --fast), flytectl would substitute \"\""));
      }
      *arg = m_p.remote_package_path;
    }
    if (*arg == k_dest_dir_placeholder) {
      *arg = m_p.destination_dir.empty() ? "." : m_p.destination_dir;
    }
    return ok_status();
  }

  // pod_spec is a Struct holding a k8s PodSpec: containers[*].args (not initContainers).
  Status pod_spec_args(google::protobuf::Struct* pod_spec) const {
    auto containers = pod_spec->mutable_fields()->find("containers");
    if (containers == pod_spec->mutable_fields()->end() || !containers->second.has_list_value()) {
      return ok_status();
    }
    for (auto& container : *containers->second.mutable_list_value()->mutable_values()) {
      if (!container.has_struct_value()) continue;
      auto* fields = container.mutable_struct_value()->mutable_fields();
      auto args = fields->find("args");
      if (args == fields->end() || !args->second.has_list_value()) continue;
      for (auto& arg : *args->second.mutable_list_value()->mutable_values()) {
        if (arg.kind_case() != google::protobuf::Value::kStringValue) continue;
        if (auto st = fast_arg(arg.mutable_string_value()); !st) return st;
      }
    }
    return ok_status();
  }

  Status task(flyteidl::admin::TaskSpec& spec) const {
    auto* tmpl = spec.mutable_template_();
    id(tmpl->mutable_id());
    if (tmpl->has_container()) {
      for (auto& arg : *tmpl->mutable_container()->mutable_args()) {
        if (auto st = fast_arg(&arg); !st) return st;
      }
    } else if (tmpl->has_k8s_pod() && tmpl->k8s_pod().has_pod_spec()) {
      return pod_spec_args(tmpl->mutable_k8s_pod()->mutable_pod_spec());
    }
    return ok_status();
  }

  Status node(Node* n, const std::string& path) {
    const std::string where = "node " + path;
    switch (n->target_case()) {
      case Node::kTaskNode: {
        auto* t = n->mutable_task_node();
        if (!t->has_reference_id()) return fail(where + ": task node without reference_id");
        id(t->mutable_reference_id());
        if (t->has_overrides() && t->overrides().has_pod_template() &&
            t->overrides().pod_template().has_pod_spec()) {
          return pod_spec_args(t->mutable_overrides()->mutable_pod_template()->mutable_pod_spec());
        }
        return ok_status();
      }
      case Node::kWorkflowNode: {
        auto* w = n->mutable_workflow_node();
        if (w->has_sub_workflow_ref()) {
          id(w->mutable_sub_workflow_ref());
        } else if (w->has_launchplan_ref()) {
          id(w->mutable_launchplan_ref());
        } else {
          return fail(where +
                      ": unknown type: workflow node without sub_workflow_ref or launchplan_ref");
        }
        return ok_status();
      }
      case Node::kBranchNode: {
        auto* ie = n->mutable_branch_node()->mutable_if_else();
        if (!ie->has_case_() || !ie->case_().has_then_node()) {
          return fail(where + ": branch node without if_else.case.then_node");
        }
        if (auto st = node(ie->mutable_case_()->mutable_then_node(), path + ".case"); !st) {
          return st;
        }
        for (int i = 0; i < ie->other_size(); ++i) {
          auto* other = ie->mutable_other(i);
          if (!other->has_then_node()) {
            return fail(where + ": branch node other[" + std::to_string(i) + "] without then_node");
          }
          auto st = node(other->mutable_then_node(), path + ".other[" + std::to_string(i) + "]");
          if (!st) return st;
        }
        if (ie->has_else_node()) return node(ie->mutable_else_node(), path + ".else");
        if (ie->has_error()) return ok_status();
        return fail(where + ": unknown type: branch node with neither else_node nor error");
      }
      case Node::kGateNode:
        return ok_status();
      case Node::kArrayNode:
        if (!n->array_node().has_node()) return fail(where + ": array node without inner node");
        return node(n->mutable_array_node()->mutable_node(), path + ".array");
      case Node::TARGET_NOT_SET:
        break;
    }
    return fail(where +
                ": unknown type: expected a task, workflow, branch, gate or array node target");
  }

  Status nodes(google::protobuf::RepeatedPtrField<Node>* list, Node* failure_node,
               const std::string& prefix) {
    for (auto& n : *list) {
      if (auto st = node(&n, prefix + n.id()); !st) return st;
    }
    if (failure_node != nullptr) return node(failure_node, prefix + failure_node->id());
    return ok_status();
  }

  Status workflow(flyteidl::admin::WorkflowSpec& spec) {
    auto* tmpl = spec.mutable_template_();
    auto st = nodes(tmpl->mutable_nodes(),
                    tmpl->has_failure_node() ? tmpl->mutable_failure_node() : nullptr, "");
    if (!st) return st;
    id(tmpl->mutable_id());
    for (auto& sub : *spec.mutable_sub_workflows()) {
      const std::string prefix = "sub-workflow " + sub.id().name() + " / ";
      st = nodes(sub.mutable_nodes(), sub.has_failure_node() ? sub.mutable_failure_node() : nullptr,
                 prefix);
      if (!st) return st;
      id(sub.mutable_id());
    }
    return ok_status();
  }

  void launch_plan(flyteidl::admin::LaunchPlan& lp) const {
    id(lp.mutable_id());
    auto* spec = lp.mutable_spec();
    id(spec->mutable_workflow_id());
    if (!m_p.iam_role.empty() || !m_p.service_account.empty()) {
      // Replaced wholesale, as flytectl does: other security_context fields are dropped. flytectl
      // still fills the deprecated auth_role, and the spec must match what it registers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      spec->clear_auth_role();
      spec->mutable_auth_role()->set_assumable_iam_role(m_p.iam_role);
      spec->mutable_auth_role()->set_kubernetes_service_account(m_p.service_account);
#pragma GCC diagnostic pop
      spec->clear_security_context();
      spec->mutable_security_context()->mutable_run_as()->set_iam_role(m_p.iam_role);
      spec->mutable_security_context()->mutable_run_as()->set_k8s_service_account(
          m_p.service_account);
    }
    if (!m_p.raw_output_prefix.empty()) {
      spec->clear_raw_output_data_config();
      spec->mutable_raw_output_data_config()->set_output_location_prefix(m_p.raw_output_prefix);
    }
  }

  const HydrateParams& m_p;
  bool m_has_fast_source;
  std::string m_where;
};

// --- unhydrated_references: a reflection walk over every field -----------------------------

void find_placeholders(const google::protobuf::Message& m, const std::string& path,
                       const std::string& file, std::vector<std::string>& out) {
  namespace pb = google::protobuf;
  const pb::Reflection* refl = m.GetReflection();
  const bool is_identifier = m.GetDescriptor() == Identifier::descriptor();
  std::vector<const pb::FieldDescriptor*> fields;
  refl->ListFields(m, &fields);
  auto join = [&path](const std::string& name) { return path.empty() ? name : path + "." + name; };
  auto check_string = [&](const std::string& field_path, const std::string& value) {
    const bool hit = is_identifier
                         ? value.find("{{") != std::string::npos
                         : value == k_remote_package_placeholder || value == k_dest_dir_placeholder;
    if (hit) out.push_back(file + ": " + field_path + " = " + value);
  };
  for (const auto* f : fields) {
    const std::string fp = join(f->name());
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!f->is_repeated()) {
        find_placeholders(refl->GetMessage(m, f), fp, file, out);
        continue;
      }
      for (int i = 0; i < refl->FieldSize(m, f); ++i) {
        const auto& item = refl->GetRepeatedMessage(m, f, i);
        std::string index = std::to_string(i);
        if (f->is_map()) {
          const auto* key = item.GetDescriptor()->map_key();
          if (key->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
            index = item.GetReflection()->GetString(item, key);
          }
        }
        find_placeholders(item, fp + "[" + index + "]", file, out);
      }
    } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
      if (!f->is_repeated()) {
        check_string(fp, refl->GetString(m, f));
        continue;
      }
      for (int i = 0; i < refl->FieldSize(m, f); ++i) {
        check_string(fp + "[" + std::to_string(i) + "]", refl->GetRepeatedString(m, f, i));
      }
    }
  }
}

// --- registration_order ----------------------------------------------------------------------

std::string key_of(const Identifier& id) {
  return id.project() + '\n' + id.domain() + '\n' + id.name() + '\n' + id.version();
}

std::string describe(const Identifier& id) {
  return id.project() + "/" + id.domain() + "/" + id.name() + "@" + id.version();
}

// Launch-plan and sub-workflow references anywhere under a node.
void collect_refs(const Node& n, std::vector<const Identifier*>& lps,
                  std::vector<const Identifier*>& subs) {
  switch (n.target_case()) {
    case Node::kWorkflowNode:
      if (n.workflow_node().has_launchplan_ref())
        lps.push_back(&n.workflow_node().launchplan_ref());
      if (n.workflow_node().has_sub_workflow_ref()) {
        subs.push_back(&n.workflow_node().sub_workflow_ref());
      }
      break;
    case Node::kBranchNode: {
      const auto& ie = n.branch_node().if_else();
      if (ie.case_().has_then_node()) collect_refs(ie.case_().then_node(), lps, subs);
      for (const auto& o : ie.other()) {
        if (o.has_then_node()) collect_refs(o.then_node(), lps, subs);
      }
      if (ie.has_else_node()) collect_refs(ie.else_node(), lps, subs);
      break;
    }
    case Node::kArrayNode:
      if (n.array_node().has_node()) collect_refs(n.array_node().node(), lps, subs);
      break;
    default:
      break;
  }
}

void collect_refs(const flyteidl::core::WorkflowTemplate& t, std::vector<const Identifier*>& lps,
                  std::vector<const Identifier*>& subs) {
  for (const auto& n : t.nodes()) collect_refs(n, lps, subs);
  if (t.has_failure_node()) collect_refs(t.failure_node(), lps, subs);
}

}  // namespace

Status hydrate(Package& pkg, const HydrateParams& params) {
  for (const auto& [field, value] :
       {std::pair{"project", &params.project}, std::pair{"domain", &params.domain},
        std::pair{"version", &params.version}}) {
    if (value->empty()) {
      return make_error(ErrorCode::invalid_input, std::string("hydrate: empty ") + field +
                                                      "; expected the registration's " + field);
    }
  }
  Hydrator h(params, pkg.has_fast_source());
  for (auto& e : pkg.entities) {
    if (auto st = h.entity(e); !st) return st;
  }
  return ok_status();
}

std::vector<std::string> unhydrated_references(const Package& pkg) {
  std::vector<std::string> out;
  for (const auto& e : pkg.entities) {
    switch (e.kind) {
      case EntityKind::task:
        find_placeholders(e.task, "", e.file, out);
        break;
      case EntityKind::workflow:
        find_placeholders(e.workflow, "", e.file, out);
        break;
      case EntityKind::launch_plan:
        find_placeholders(e.launch_plan, "", e.file, out);
        break;
    }
  }
  return out;
}

Result<std::vector<size_t>> registration_order(const Package& pkg) {
  std::vector<size_t> order;
  std::map<std::string, size_t> workflows, launch_plans;  // first occurrence wins
  for (size_t i = 0; i < pkg.entities.size(); ++i) {
    const auto& e = pkg.entities[i];
    if (e.kind == EntityKind::task) order.push_back(i);
    if (e.kind == EntityKind::workflow) workflows.emplace(key_of(e.id()), i);
    if (e.kind == EntityKind::launch_plan) launch_plans.emplace(key_of(e.id()), i);
  }
  std::vector<std::string> violations;
  auto must_precede = [&](const std::map<std::string, size_t>& index, const Identifier& ref,
                          size_t user, std::string_view what) {
    auto it = index.find(key_of(ref));
    if (it == index.end() || it->second < user) return;
    const auto& u = pkg.entities[user];
    violations.push_back(u.file + ": " + std::string(to_string(u.kind)) + " " + u.id().name() +
                         " references " + std::string(what) + " " + describe(ref) +
                         ", which comes later (" + pkg.entities[it->second].file +
                         "); expected it to be registered first");
  };
  for (size_t i = 0; i < pkg.entities.size(); ++i) {
    const auto& e = pkg.entities[i];
    if (e.kind == EntityKind::task) continue;
    order.push_back(i);
    if (e.kind == EntityKind::launch_plan) {
      must_precede(workflows, e.launch_plan.spec().workflow_id(), i, "workflow");
      continue;
    }
    std::vector<const Identifier*> lps, subs;
    collect_refs(e.workflow.template_(), lps, subs);
    std::set<std::string> inline_subs;
    for (const auto& sub : e.workflow.sub_workflows()) {
      inline_subs.insert(key_of(sub.id()));
      collect_refs(sub, lps, subs);
    }
    for (const auto* ref : lps) must_precede(launch_plans, *ref, i, "launch plan");
    for (const auto* ref : subs) {
      if (!inline_subs.contains(key_of(*ref))) must_precede(workflows, *ref, i, "workflow");
    }
  }
  if (!violations.empty()) {
    std::string msg = "registration order: ";
    for (size_t i = 0; i < violations.size(); ++i) msg += (i > 0 ? "; " : "") + violations[i];
    return make_error(ErrorCode::invalid_input, std::move(msg));
  }
  return order;
}

HydrateParams hydrate_params(const model::Registration& r) {
  HydrateParams params;
  params.project = r.project;
  params.domain = r.domain;
  params.version = r.version;
  params.service_account = r.service_account;
  params.iam_role = r.iam_role;
  params.raw_output_prefix = r.raw_output_prefix;
  params.destination_dir = r.destination_dir;
  return params;
}

}  // namespace flytecd::registration
