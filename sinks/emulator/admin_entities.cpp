// Tasks and workflows, plus the Get/List plumbing shared with launch plans (FlyteAdmin
// task_manager.go, workflow_manager.go, validation/task_validator.go, workflow_validator.go).

#include <google/protobuf/struct.pb.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "daemon/common/quantity.hpp"
#include "sinks/emulator/admin_common.hpp"
#include "sinks/workflow_compiler.hpp"

namespace flytecd::sinks::emulator {
namespace {

using namespace detail;

// validateTaskTemplate (the parts that do not need platform configuration).
Status validate_task_template(const fc::TaskTemplate& t) {
  if (t.type().empty()) return missing("type");
  if (!t.has_metadata()) return missing("metadata");
  if (t.metadata().has_runtime() && t.metadata().runtime().version().empty()) {
    return missing("runtime version");
  }
  if (!t.has_interface()) return missing("typed interface");
  if (t.has_container() && t.container().image().empty()) return missing("image");
  if (t.has_k8s_pod() && !t.k8s_pod().has_pod_spec()) {
    return invalid(
        "invalid TaskSpecification, pod tasks should specify their target as a K8sPod with a "
        "defined pod spec");
  }
  return ok_status();
}

// ---- validation/task_validator.go: resources. A map by fc::Resources::ResourceName; Go iterates
// its maps in random order, the emulator in enum order (CPU, GPU, MEMORY, EPHEMERAL_STORAGE), so
// when several checks fail FlyteAdmin may name another one first.
using ResourceMap = std::map<int, quantity::Quantity>;

std::string resource_label(int name) {
  return fc::Resources::ResourceName_IsValid(name)
             ? fc::Resources::ResourceName_Name(static_cast<fc::Resources::ResourceName>(name))
             : std::to_string(name);
}

// The error resource.ParseQuantity returns for text parse_quantity refused.
std::string quantity_error(const std::string& text) {
  static const std::string k_pattern = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";
  static const std::regex k_format(k_pattern);
  if (!std::regex_match(text, k_format))
    return "quantities must match the regular expression '" + k_pattern + "'";
  const size_t sign = text[0] == '+' || text[0] == '-' ? 1 : 0;
  const size_t end = text.find_first_not_of("0123456789.", sign);
  const std::string number = text.substr(sign, end == std::string::npos ? end : end - sign);
  if (std::count(number.begin(), number.end(), '.') > 1 || number == ".")
    return "unable to parse numeric part of quantity";
  return "unable to parse quantity's suffix";
}

// taskResourceSetToMap: the platform limits that are set and non-zero.
ResourceMap platform_limits_of(const fa::TaskResourceSpec& spec) {
  ResourceMap out;
  const std::pair<int, const std::string*> fields[] = {
      {fc::Resources::CPU, &spec.cpu()},
      {fc::Resources::MEMORY, &spec.memory()},
      {fc::Resources::GPU, &spec.gpu()},
      {fc::Resources::EPHEMERAL_STORAGE, &spec.ephemeral_storage()}};
  for (const auto& [name, text] : fields) {
    auto q = text->empty() ? std::nullopt : quantity::parse_quantity(*text);
    if (q && !q->digits.empty()) out[name] = *q;
  }
  return out;
}

// isWholeNumber: MilliValue() % 1000 == 0 (MilliValue rounds up, so 1.9999 counts as whole).
bool whole_number(quantity::Quantity q) {
  q.exp10 += 3;
  return quantity::value_ceil(q) % 1000 == 0;
}

// requestedResourcesToQuantity + addResourceEntryToMap: CPU, MEMORY, GPU and EPHEMERAL_STORAGE
// entries (others are skipped), each at most once (the message says "limit" for requests too).
Status entries_to_map(
    const fc::Identifier& id,
    const google::protobuf::RepeatedPtrField<fc::Resources::ResourceEntry>& entries,
    ResourceMap* out) {
  for (const auto& e : entries) {
    switch (e.name()) {
      case fc::Resources::CPU:
      case fc::Resources::MEMORY:
      case fc::Resources::GPU:
      case fc::Resources::EPHEMERAL_STORAGE:
        break;
      default:
        continue;
    }
    const std::string label = resource_label(e.name());
    if (out->count(e.name()))
      return invalid("can't specify " + label + " limit for task [" + proto_text(id) +
                     "] multiple times");
    auto q = quantity::parse_quantity(e.value());
    if (!q)
      return invalid(
          "Parsing of " + label + " request failed for value " + e.value() + " - reason  " +
          quantity_error(e.value()) +
          ". Please follow K8s conventions for resources "
          "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/");
    (*out)[e.name()] = *q;
    if (e.name() == fc::Resources::GPU && !whole_number(*q))
      return invalid("gpu for [" + proto_text(id) + "] must be a whole number, got: " + e.value() +
                     " instead");
  }
  return ok_status();
}

// validateResource: only requests are checked against the platform limits (a limit is checked
// only when its resource is also requested); comparisons use Quantity.Value(), rounded up to an
// integer, so "500m" and "200m" compare equal; messages print Quantity.String().
Status validate_resource(const fc::Identifier& id, const ResourceMap& requests,
                         const ResourceMap& limits, const ResourceMap& platform) {
  const std::string k_contact =
      ". Please contact Flyte Admins to change these limits or consult the configuration";
  for (const auto& [name, request] : requests) {
    const std::string label = resource_label(name);
    const auto limit = limits.find(name);
    const auto cap = platform.find(name);
    const bool has_limit = limit != limits.end(), has_cap = cap != platform.end();
    const int64_t req_v = quantity::value_ceil(request);
    if (name == fc::Resources::GPU) {
      if (has_limit && req_v != quantity::value_ceil(limit->second))
        return invalid(
            "For extended resource 'gpu' the default value must equal the limit value for task [" +
            proto_text(id) + "]");
    } else {
      if (has_limit && quantity::value_ceil(limit->second) < req_v)
        return invalid("Requested " + label + " default [" + quantity::canonical(request) +
                       "] is greater than the limit [" + quantity::canonical(limit->second) +
                       "]. Please fix your configuration");
      if (has_limit && has_cap &&
          quantity::value_ceil(limit->second) > quantity::value_ceil(cap->second))
        return invalid("Requested " + label + " limit [" + quantity::canonical(limit->second) +
                       "] is greater than current limit set in the platform configuration [" +
                       quantity::canonical(cap->second) + "]" + k_contact);
    }
    if (has_cap && req_v > quantity::value_ceil(cap->second))
      return invalid("Requested " + label + " default [" + quantity::canonical(request) +
                     "] is greater than current limit set in the platform configuration [" +
                     quantity::canonical(cap->second) + "]" + k_contact);
  }
  return ok_status();
}

// resourceListToQuantity: a pod container's "requests" / "limits" (Kubernetes names, upper-cased
// onto the Flyte enum; "ephemeral-storage" is EPHEMERAL_STORAGE; other names land on UNKNOWN and
// are ignored). A value that is not a quantity fails the pod spec's unmarshal, a plain Go error
// FlyteAdmin returns as Internal.
Status pod_resource_list(const google::protobuf::Struct& resources, const char* side,
                         ResourceMap* out) {
  auto it = resources.fields().find(side);
  if (it == resources.fields().end() || !it->second.has_struct_value()) return ok_status();
  for (const auto& [k8s_name, value] : it->second.struct_value().fields()) {
    std::string text;
    if (value.has_string_value()) {
      text = value.string_value();
    } else if (value.has_number_value()) {
      std::ostringstream os;
      os.precision(17);
      os << value.number_value();
      text = os.str();
    } else {
      continue;
    }
    auto q = quantity::parse_quantity(text);
    if (!q) return internal(quantity_error(text));
    std::string upper = k8s_name == "ephemeral-storage" ? "EPHEMERAL_STORAGE" : k8s_name;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    fc::Resources::ResourceName name = fc::Resources::UNKNOWN;
    if (!fc::Resources::ResourceName_Parse(upper, &name)) name = fc::Resources::UNKNOWN;
    (*out)[name] = *q;
  }
  return ok_status();
}

// The platform limits for the task's project/domain: the most specific TASK_RESOURCE row at
// project-domain or project level (util.GetTaskResources; workflow rows are not consulted for a
// TASK id), else FlyteAdmin's task_resources.limits configuration defaults.
Result<ResourceMap> platform_limits(Tx& tx, const std::string& project, const std::string& domain) {
  fa::TaskResourceSpec spec;
  spec.set_cpu("2");
  spec.set_memory("1Gi");
  spec.set_gpu("1");
  auto row = tx.most_specific_resource(fa::TASK_RESOURCE, project, domain, "");
  if (!row) return row.error();
  if (row->has_value()) {
    fa::MatchingAttributes attrs;
    if (!attrs.ParseFromString((*row)->attributes))
      return internal("emulator: corrupt attributes row");
    spec = attrs.task_resource_attributes().limits();
  }
  return platform_limits_of(spec);
}

// validateContainer (resources set) and validateK8sPod (every container of the pod spec).
Status validate_task_resources(Tx& tx, const std::string& project, const std::string& domain,
                               const fc::TaskTemplate& t) {
  const bool container = t.has_container() && t.container().has_resources();
  if (!container && !t.has_k8s_pod()) return ok_status();
  auto platform = platform_limits(tx, project, domain);
  if (!platform) return platform.error();
  if (container) {
    ResourceMap requests, limits;
    if (auto st = entries_to_map(t.id(), t.container().resources().requests(), &requests); !st)
      return st;
    if (auto st = entries_to_map(t.id(), t.container().resources().limits(), &limits); !st)
      return st;
    return validate_resource(t.id(), requests, limits, *platform);
  }
  std::vector<std::pair<ResourceMap, ResourceMap>> containers;
  auto list = t.k8s_pod().pod_spec().fields().find("containers");
  if (list != t.k8s_pod().pod_spec().fields().end() && list->second.has_list_value()) {
    for (const auto& c : list->second.list_value().values()) {
      auto& [requests, limits] = containers.emplace_back();
      if (!c.has_struct_value()) continue;
      auto res = c.struct_value().fields().find("resources");
      if (res == c.struct_value().fields().end() || !res->second.has_struct_value()) continue;
      if (auto st = pod_resource_list(res->second.struct_value(), "requests", &requests); !st)
        return st;
      if (auto st = pod_resource_list(res->second.struct_value(), "limits", &limits); !st)
        return st;
    }
  }
  for (const auto& [requests, limits] : containers)
    if (auto st = validate_resource(t.id(), requests, limits, *platform); !st) return st;
  return ok_status();
}

// Connections from upstream_node_ids only (the real compiler also derives them from bindings).
fc::CompiledWorkflow compile_template(const fc::WorkflowTemplate& t) {
  fc::CompiledWorkflow cw;
  *cw.mutable_template_() = t;
  auto* conn = cw.mutable_connections();
  for (const auto& n : t.nodes()) {
    for (const auto& up : n.upstream_node_ids()) {
      (*conn->mutable_upstream())[n.id()].add_ids(up);
      (*conn->mutable_downstream())[up].add_ids(n.id());
    }
  }
  return cw;
}

std::optional<std::string> entity_field(const EntityRow& r, const std::string& f) {
  if (f == "name") return r.key.name;
  if (f == "version") return r.key.version;
  if (f == "project") return r.key.project;
  if (f == "domain") return r.key.domain;
  if (f == "created_at") return pad_number(r.created_at_ms);
  if (f == "updated_at") return pad_number(r.updated_at_ms);
  if (f == "state") return std::to_string(r.state);
  return std::nullopt;
}

}  // namespace

Status Admin::create_task(const fa::TaskCreateRequest& req, fa::TaskCreateResponse*) {
  if (auto st = validate_identifier(req.has_id() ? &req.id() : nullptr, fc::TASK); !st) return st;
  const EntityKey key = key_of(EntityKind::task, req.id());
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    if (auto st = validate_project_and_domain(tx, m_config, key.project, key.domain); !st)
      return st;
    if (!req.has_spec() || !req.spec().has_template_()) return missing("spec");
    if (auto st = validate_task_template(req.spec().template_()); !st) return st;
    if (auto st = validate_task_resources(tx, key.project, key.domain, req.spec().template_()); !st)
      return st;
    // workflowengine/impl/compiler.go CompileTask, on the template with its id set (setDefaults).
    fc::TaskTemplate finalized = req.spec().template_();
    *finalized.mutable_id() = req.id();
    if (auto issues = compiler::compile_task(finalized); !issues.empty())
      return invalid("task failed compilation with " + compiler::admin_text(issues));

    fa::Task task;
    *task.mutable_id() = identifier_of(key);
    auto* compiled = task.mutable_closure()->mutable_compiled_task();
    *compiled->mutable_template_() = req.spec().template_();
    *compiled->mutable_template_()->mutable_id() = req.id();  // setDefaults
    task.set_short_description(req.spec().description().short_description());
    const std::string digest = digest_of(*compiled);

    auto existing = tx.get_entity(key);
    if (!existing) return existing.error();
    if (existing->has_value()) {
      if ((*existing)->digest == digest) {
        return make_error(ErrorCode::already_exists,
                          "task with identical structure already exists");
      }
      fa::Task old;
      if (!parse_blob(&old, (*existing)->blob)) return internal("emulator: corrupt task row");
      return invalid(key.name +
                     " task with different structure already exists. (Please register a new "
                     "version of the task):\n" +
                     structure_diff(old.closure().compiled_task(), *compiled));
    }
    const int64_t now = now_ms();
    set_timestamp(task.mutable_closure()->mutable_created_at(), now);
    return tx.insert_entity(EntityRow{key, serialize(task), digest, 0, now, now, 0});
  });
}

Status Admin::create_workflow(const fa::WorkflowCreateRequest& req, fa::WorkflowCreateResponse*,
                              google::protobuf::Any* detail) {
  if (auto st = validate_identifier(req.has_id() ? &req.id() : nullptr, fc::WORKFLOW); !st) {
    return st;
  }
  const EntityKey key = key_of(EntityKind::workflow, req.id());
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    if (auto st = validate_project_and_domain(tx, m_config, key.project, key.domain); !st)
      return st;
    if (!req.has_spec() || !req.spec().has_template_()) return missing("spec");

    fc::WorkflowTemplate primary = req.spec().template_();
    *primary.mutable_id() = req.id();  // setDefaults
    const std::string compile_err =
        "failed to compile workflow for [" + proto_text(req.id()) + "] with err: ";
    fa::WorkflowSpec with_id = req.spec();
    *with_id.mutable_template_()->mutable_id() = req.id();
    const compiler::Requirements needs = compiler::requirements(with_id);
    if (needs.missing_sub_workflow)
      return invalid(compile_err + "Code: WorkflowReferenceNotFound, Node Id: " +
                     needs.missing_sub_workflow->first + ", Description: Referenced Workflow [" +
                     proto_text(needs.missing_sub_workflow->second) + "] not found.");

    fc::CompiledWorkflowClosure closure;
    *closure.mutable_primary() = compile_template(primary);
    for (const auto& sub : req.spec().sub_workflows()) {
      *closure.add_sub_workflows() = compile_template(sub);
    }
    for (const auto& task_id : needs.tasks) {
      const EntityKey tk = key_of(EntityKind::task, task_id);
      auto row = tx.get_entity(tk);
      if (!row) return row.error();
      if (!row->has_value()) return invalid(compile_err + missing_entity(tk).message);
      fa::Task task;
      if (!parse_blob(&task, (*row)->blob)) return internal("emulator: corrupt task row");
      *closure.add_tasks() = task.closure().compiled_task();
    }
    compiler::References refs;  // every reference is in the database, or the workflow fails
    for (size_t i = 0; i < needs.tasks.size(); ++i)
      refs.tasks[compiler::id_key(needs.tasks[i])] =
          closure.tasks(static_cast<int>(i)).template_().interface();
    for (const auto& lp_id : needs.launch_plans) {
      const EntityKey lk = key_of(EntityKind::launch_plan, lp_id);
      auto row = tx.get_entity(lk);
      if (!row) return row.error();
      if (!row->has_value()) return invalid(compile_err + missing_entity(lk).message);
      fa::LaunchPlan lp;
      if (!parse_blob(&lp, (*row)->blob)) return internal("emulator: corrupt launch plan row");
      refs.launch_plans[compiler::id_key(lp_id)] = compiler::LaunchPlanInterface{
          lp.closure().expected_inputs(), lp.closure().expected_outputs()};
    }
    // workflow_manager.go getCompiledWorkflow: the propeller compiler's errors, InvalidArgument.
    {
      auto issues = compiler::compile_workflow(with_id, refs);
      if (std::any_of(issues.begin(), issues.end(), [](const auto& i) { return !i.warning; }))
        return invalid(compile_err + compiler::admin_text(issues));
    }
    const int nodes = primary.nodes_size();
    if (nodes > m_config.max_workflow_nodes) {
      return invalid("number of nodes in workflow [" + proto_text(req.id()) + "] exceeds limit (" +
                     std::to_string(nodes) + " > " + std::to_string(m_config.max_workflow_nodes) +
                     ")");
    }
    const std::string digest = digest_of(closure);

    auto existing = tx.get_entity(key);
    if (!existing) return existing.error();
    if (existing->has_value()) {
      fa::CreateWorkflowFailureReason reason;
      if ((*existing)->digest == digest) {
        *reason.mutable_exists_identical_structure()->mutable_id() = req.id();
        if (detail) detail->PackFrom(reason);
        return make_error(ErrorCode::already_exists,
                          "workflow with identical structure already exists");
      }
      fa::Workflow old;
      if (!parse_blob(&old, (*existing)->blob)) return internal("emulator: corrupt workflow row");
      *reason.mutable_exists_different_structure()->mutable_id() = req.id();
      if (detail) detail->PackFrom(reason);
      return invalid(key.name +
                     " workflow with different structure already exists. (Please register a new "
                     "version of the workflow):\n" +
                     structure_diff(old.closure().compiled_workflow(), closure));
    }
    fa::Workflow wf;
    *wf.mutable_id() = identifier_of(key);
    *wf.mutable_closure()->mutable_compiled_workflow() = std::move(closure);
    const int64_t now = now_ms();
    set_timestamp(wf.mutable_closure()->mutable_created_at(), now);
    wf.set_short_description(req.spec().description().short_description());
    return tx.insert_entity(EntityRow{key, serialize(wf), digest, 0, now, now, 0});
  });
}

Status Admin::get_entity(EntityKind kind, const fa::ObjectGetRequest& req, std::string* blob) {
  // task_manager.go GetTask only logs identifier validation errors; the lookup decides.
  const EntityKey key = key_of(kind, req.id());
  return in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto row = tx.get_entity(key);
    if (!row) return row.error();
    if (!row->has_value()) return missing_entity(key);
    *blob = std::move((*row)->blob);
    return ok_status();
  });
}

Status Admin::get_task(const fa::ObjectGetRequest& req, fa::Task* out) {
  std::string blob;
  if (auto st = get_entity(EntityKind::task, req, &blob); !st) return st;
  return parse_blob(out, blob) ? ok_status() : Status(internal("emulator: corrupt task row"));
}

Status Admin::get_workflow(const fa::ObjectGetRequest& in, fa::Workflow* out) {
  // workflow_manager.go GetWorkflow returns ValidateIdentifier's error (GetTask only logs it),
  // after rpc/adminservice filled in an unspecified resource type.
  const fa::ObjectGetRequest req = with_resource_type(in, fc::WORKFLOW);
  if (auto st = validate_identifier(req.has_id() ? &req.id() : nullptr, fc::WORKFLOW); !st)
    return st;
  std::string blob;
  if (auto st = get_entity(EntityKind::workflow, req, &blob); !st) return st;
  return parse_blob(out, blob) ? ok_status() : Status(internal("emulator: corrupt workflow row"));
}

Result<std::vector<EntityRow>> Admin::list_entity_rows(EntityKind kind,
                                                       const fa::ResourceListRequest& req,
                                                       std::string* token) {
  // validation.ValidateResourceListRequest
  if (!req.has_id()) return missing("id");
  if (req.id().project().empty()) return missing("project");
  if (req.id().domain().empty()) return missing("domain");
  if (req.limit() == 0) return invalid_value("limit");
  if (auto st = validate_token(req.token(), kind == EntityKind::task       ? "ListTasks"
                                            : kind == EntityKind::workflow ? "ListWorkflows"
                                                                           : "ListLaunchPlans");
      !st)
    return st.error();
  // A filter that is exactly eq(version,V) or value_in(version,A;B;…) (flytecd's launch plans of
  // its registrations) is read from the database at those versions: the same rows in the same
  // order as filtering every row of the project and domain below, without reading the others'
  // blobs (up to 500 versions, well inside SQLite's limit on bound values). Any other filter is
  // evaluated row by row only (its errors can depend on the rows, as before).
  std::vector<std::string> at_versions;
  if (auto parsed = parse_filters(req.filters()); parsed && parsed->size() == 1) {
    const Filter& f = parsed->front();
    if ((f.op == "eq" || f.op == "value_in") && f.field == "version" && !f.values.empty() &&
        f.values.size() <= 500 &&
        std::none_of(f.values.begin(), f.values.end(),
                     [](const std::string& v) { return v.empty(); }))
      at_versions = f.values;
  }
  std::vector<EntityRow> rows;
  auto st = in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto all =
        tx.list_entities(kind, req.id().project(), req.id().domain(), req.id().name(), at_versions);
    if (!all) return all.error();
    rows = std::move(*all);
    return ok_status();
  });
  if (!st) return st.error();
  auto next = apply_list(rows, req.filters(), req.has_sort_by() ? &req.sort_by() : nullptr,
                         req.limit(), req.token(), entity_field);
  if (!next) return next.error();
  *token = *next;
  return rows;
}

Status Admin::list_tasks(const fa::ResourceListRequest& req, fa::TaskList* out) {
  auto rows = list_entity_rows(EntityKind::task, req, out->mutable_token());
  if (!rows) return rows.error();
  for (const auto& r : *rows) {
    if (!parse_blob(out->add_tasks(), r.blob)) return internal("emulator: corrupt task row");
  }
  return ok_status();
}

Status Admin::list_workflows(const fa::ResourceListRequest& req, fa::WorkflowList* out) {
  auto rows = list_entity_rows(EntityKind::workflow, req, out->mutable_token());
  if (!rows) return rows.error();
  // transformers.FromWorkflowModels: the spec is offloaded, so a listed workflow holds only its
  // id, created_at, the interface (in closure.compiled_workflow.primary.template) and the short
  // description. GetWorkflow returns the whole closure.
  for (const auto& r : *rows) {
    fa::Workflow stored;
    if (!parse_blob(&stored, r.blob)) return internal("emulator: corrupt workflow row");
    auto* wf = out->add_workflows();
    *wf->mutable_id() = stored.id();
    *wf->mutable_closure()->mutable_created_at() = stored.closure().created_at();
    *wf->mutable_closure()
         ->mutable_compiled_workflow()
         ->mutable_primary()
         ->mutable_template_()
         ->mutable_interface() =
        stored.closure().compiled_workflow().primary().template_().interface();
    wf->set_short_description(stored.short_description());
  }
  return ok_status();
}

Status Admin::list_entity_ids(EntityKind kind, const fa::NamedEntityIdentifierListRequest& req,
                              fa::NamedEntityIdentifierList* out) {
  // validation.ValidateNamedEntityIdentifierListRequest
  if (req.project().empty()) return missing("project");
  if (req.domain().empty()) return missing("domain");
  if (req.limit() == 0) return invalid_value("limit");
  if (auto st =
          validate_token(req.token(), kind == EntityKind::task       ? "ListUniqueTaskIdentifiers"
                                      : kind == EntityKind::workflow ? "ListWorkflowIdentifiers"
                                                                     : "");
      !st)
    return st;
  std::vector<EntityRow> rows;
  auto st = in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto all = tx.list_entities(kind, req.project(), req.domain(), "");
    if (!all) return all.error();
    rows = std::move(*all);
    return ok_status();
  });
  if (!st) return st;
  auto filtered = apply_list(rows, req.filters(), nullptr, 0, "", entity_field);
  if (!filtered) return filtered.error();
  // One entry per name (first version wins the position), then sort and page those.
  std::vector<EntityRow> names;
  std::set<std::string> seen;
  for (auto& r : rows) {
    if (seen.insert(r.key.name).second) names.push_back(std::move(r));
  }
  auto token = apply_list(names, "", req.has_sort_by() ? &req.sort_by() : nullptr, req.limit(),
                          req.token(), entity_field);
  if (!token) return token.error();
  for (const auto& r : names) {
    auto* e = out->add_entities();
    e->set_project(r.key.project);
    e->set_domain(r.key.domain);
    e->set_name(r.key.name);
  }
  out->set_token(*token);
  return ok_status();
}

Status Admin::list_task_ids(const fa::NamedEntityIdentifierListRequest& req,
                            fa::NamedEntityIdentifierList* out) {
  return list_entity_ids(EntityKind::task, req, out);
}

Status Admin::list_workflow_ids(const fa::NamedEntityIdentifierListRequest& req,
                                fa::NamedEntityIdentifierList* out) {
  return list_entity_ids(EntityKind::workflow, req, out);
}

Status Admin::list_launch_plan_ids(const fa::NamedEntityIdentifierListRequest& req,
                                   fa::NamedEntityIdentifierList* out) {
  // launch_plan_manager.go ListLaunchPlanIds validates no request: the sort key, then the token,
  // then the repository's ValidateListInput (limit, then some project or domain filter). The
  // request's own filters are not applied.
  if (req.has_sort_by() && !entity_field(EntityRow{}, req.sort_by().key()))
    return invalid("invalid sort key '" + req.sort_by().key() + "'");
  // validation.ValidateToken: strconv.Atoi, not negative.
  uint64_t offset = 0;
  if (const auto& t = req.token(); !t.empty()) {
    const size_t digits = t[0] == '+' || t[0] == '-' ? 1 : 0;
    const std::string number = t.substr(digits);
    if (number.empty() || number.size() > 18 ||
        number.find_first_not_of("0123456789") != std::string::npos ||
        (t[0] == '-' && number.find_first_not_of('0') != std::string::npos))
      return invalid("invalid pagination token " + t);
    offset = std::stoull(number);
  }
  if (req.limit() == 0) return invalid("missing and/or invalid parameters: limit");
  if (req.project().empty() && req.domain().empty())
    return invalid("missing and/or invalid parameters: filters");
  std::vector<EntityRow> names;
  auto st = in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto all = tx.list_entities(EntityKind::launch_plan, req.project(), req.domain(), "");
    if (!all) return all.error();
    std::set<std::string> seen;
    for (auto& r : *all)
      if (seen.insert(r.key.project + "/" + r.key.domain + "/" + r.key.name).second)
        names.push_back(std::move(r));
    return ok_status();
  });
  if (!st) return st;
  auto token = apply_list(names, "", req.has_sort_by() ? &req.sort_by() : nullptr, req.limit(),
                          offset ? std::to_string(offset) : "", entity_field);
  if (!token) return token.error();
  for (const auto& r : names) {
    auto* e = out->add_entities();
    e->set_project(r.key.project);
    e->set_domain(r.key.domain);
    e->set_name(r.key.name);
  }
  out->set_token(*token);
  return ok_status();
}

}  // namespace flytecd::sinks::emulator
