// Matchable attributes (FlyteAdmin resource_manager.go, validation/attributes_validator.go,
// gormimpl/resource_repo.go). One row per (project, domain, workflow, launch_plan, type).

#include <map>
#include <set>

#include "sinks/emulator/admin_common.hpp"

namespace flytecd::sinks::emulator {
namespace {

using namespace detail;

constexpr int k_priority_project = 5;
constexpr int k_priority_project_domain = 10;
constexpr int k_priority_workflow = 100;

// validateMatchingAttributes: the stored type is derived from the oneof that is set.
// QUALITY_OF_SERVICE is deliberately absent, as in FlyteAdmin: it cannot be written.
Result<int> resource_type_of(const fa::MatchingAttributes* attrs, const std::string& request_id) {
  if (attrs == nullptr) return missing("matching_attributes");
  switch (attrs->target_case()) {
    case fa::MatchingAttributes::kTaskResourceAttributes:
      return int{fa::TASK_RESOURCE};
    case fa::MatchingAttributes::kClusterResourceAttributes:
      return int{fa::CLUSTER_RESOURCE};
    case fa::MatchingAttributes::kExecutionQueueAttributes:
      return int{fa::EXECUTION_QUEUE};
    case fa::MatchingAttributes::kExecutionClusterLabel:
      return int{fa::EXECUTION_CLUSTER_LABEL};
    case fa::MatchingAttributes::kPluginOverrides:
      return int{fa::PLUGIN_OVERRIDE};
    case fa::MatchingAttributes::kWorkflowExecutionConfig:
      return int{fa::WORKFLOW_EXECUTION_CONFIG};
    case fa::MatchingAttributes::kClusterAssignment:
      return int{fa::CLUSTER_ASSIGNMENT};
    default:
      return invalid("Unrecognized matching attributes type for request " + request_id);
  }
}

std::string type_name(int type) {
  return fa::MatchableResource_IsValid(type)
             ? fa::MatchableResource_Name(static_cast<fa::MatchableResource>(type))
             : std::to_string(type);
}

// The NOT_FOUND of ResourceRepo.Get, which prints the Go ResourceID struct with %+v.
Error resource_not_found(const std::string& p, const std::string& d, const std::string& wf,
                         int type) {
  return not_found("Resource [{Project:" + p + " Domain:" + d + " Workflow:" + wf +
                   " LaunchPlan: ResourceType:" + type_name(type) + "}] not found");
}

// Writes one row. A PLUGIN_OVERRIDE update is merged by task_type (new entries win, other task
// types are kept) into the row ResourceRepo.GetRaw finds, and that row is what is written
// (resource_manager.go createOrMergeUpdate*Attributes -> transformers.MergeUpdatePluginAttributes
// returns the existing model with merged attributes). GetRaw is a GORM struct query: at
// project-domain scope the empty workflow is dropped from the WHERE, so the oldest row of the
// (project, domain, type) wins, which may be a workflow-level row. Then the update lands in that
// workflow row, and the project-domain row is neither created nor changed. Reproduced.
// (At project scope GetRaw refuses the empty domain: project_plugin_override_error below.)
Status upsert(Tx& tx, const ResourceKey& key, int priority, const fa::MatchingAttributes& attrs) {
  if (!attrs.has_plugin_overrides()) {
    return tx.upsert_resource(ResourceRow{key, priority, serialize(attrs)});
  }
  auto existing = tx.first_resource_like(key);
  if (!existing) return existing.error();
  if (!existing->has_value()) {
    return tx.upsert_resource(ResourceRow{key, priority, serialize(attrs)});
  }
  fa::MatchingAttributes old;
  if (!parse_blob(&old, (*existing)->attributes)) return internal("emulator: corrupt resource row");
  std::set<std::string> updated;
  for (const auto& o : attrs.plugin_overrides().overrides()) updated.insert(o.task_type());
  fa::MatchingAttributes merged;
  auto* result = merged.mutable_plugin_overrides();
  for (const auto& o : old.plugin_overrides().overrides()) {
    if (!updated.count(o.task_type())) *result->add_overrides() = o;
  }
  // A Go map keyed by task type: a repeated task type keeps its last entry.
  std::map<std::string, const fa::PluginOverride*> last;
  for (const auto& o : attrs.plugin_overrides().overrides()) last[o.task_type()] = &o;
  for (const auto& o : attrs.plugin_overrides().overrides()) {
    if (last.at(o.task_type()) == &o) *result->add_overrides() = o;
  }
  // CreateOrUpdate(existing model): its own scope and priority.
  return tx.upsert_resource(
      ResourceRow{(*existing)->key, (*existing)->priority, serialize(merged)});
}

// resource_manager.go createOrMergeUpdateProjectAttributes -> resource_repo.go GetRaw: GetRaw
// refuses an empty domain with GetInvalidInputError("%v" of the ResourceID), which the
// repository then passes through its Postgres error transformer (ToFlyteAdminError); not being a
// pgconn error nor gorm's "record not found", it comes out as Internal "unexpected error type
// for: ...". So UpdateProjectAttributes with plugin overrides always fails, whatever is stored.
Error project_plugin_override_error(const std::string& project) {
  // Go's %v of ResourceID{Project, Domain, Workflow, LaunchPlan, ResourceType}: fields joined by
  // one space, so the three empty ones leave four spaces.
  return internal("unexpected error type for: missing and/or invalid parameters: {" + project +
                  "    " + type_name(fa::PLUGIN_OVERRIDE) + "}");
}

Result<fa::MatchingAttributes> attributes_of(const ResourceRow& row) {
  fa::MatchingAttributes attrs;
  if (!parse_blob(&attrs, row.attributes)) return internal("emulator: corrupt resource row");
  return attrs;
}

// util.MergeIntoExecConfig with the emulator's server defaults: only max_parallelism is
// configured (FlyteAdmin's default config sets nothing else).
void merge_exec_defaults(fa::WorkflowExecutionConfig* c, int32_t max_parallelism) {
  if (c->max_parallelism() == 0) c->set_max_parallelism(max_parallelism);
}

}  // namespace

Status Admin::update_project_attributes(const fa::ProjectAttributesUpdateRequest& req,
                                        fa::ProjectAttributesUpdateResponse*) {
  if (!req.has_attributes()) return missing("attributes");
  const auto& a = req.attributes();
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    if (auto st = validate_project_for_update(tx, a.project()); !st) return st;
    auto type = resource_type_of(a.has_matching_attributes() ? &a.matching_attributes() : nullptr,
                                 a.project());
    if (!type) return type.error();
    if (*type == fa::PLUGIN_OVERRIDE) return project_plugin_override_error(a.project());
    return upsert(tx, ResourceKey{a.project(), "", "", "", *type}, k_priority_project,
                  a.matching_attributes());
  });
}

Status Admin::get_project_attributes(const fa::ProjectAttributesGetRequest& req,
                                     fa::ProjectAttributesGetResponse* out) {
  return in_tx(m_store, false, [&](Tx& tx) -> Status {
    if (auto st = validate_project_exists(tx, req.project()); !st) return st;
    const int type = req.resource_type();
    auto row = tx.get_resource(ResourceKey{req.project(), "", "", "", type});
    if (!row) return row.error();
    auto* attrs = out->mutable_attributes();
    attrs->set_project(req.project());
    if (!row->has_value()) {
      // FlyteAdmin answers WORKFLOW_EXECUTION_CONFIG with its server defaults instead of
      // NOT_FOUND (and merges them into a stored row below).
      if (type != fa::WORKFLOW_EXECUTION_CONFIG) {
        return resource_not_found(req.project(), "", "", type);
      }
      merge_exec_defaults(attrs->mutable_matching_attributes()->mutable_workflow_execution_config(),
                          m_config.default_max_parallelism);
      return ok_status();
    }
    auto parsed = attributes_of(**row);
    if (!parsed) return parsed.error();
    *attrs->mutable_matching_attributes() = std::move(*parsed);
    if (attrs->matching_attributes().has_workflow_execution_config()) {
      merge_exec_defaults(attrs->mutable_matching_attributes()->mutable_workflow_execution_config(),
                          m_config.default_max_parallelism);
    }
    return ok_status();
  });
}

Status Admin::delete_project_attributes(const fa::ProjectAttributesDeleteRequest& req,
                                        fa::ProjectAttributesDeleteResponse*) {
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    if (auto st = validate_project_for_update(tx, req.project()); !st) return st;
    // GORM drops the empty domain/workflow from the WHERE: every row of this type in the
    // project goes, at all levels.
    auto n = tx.delete_resources(req.resource_type(), req.project(), "", "");
    if (!n) return n.error();
    return ok_status();
  });
}

Status Admin::update_project_domain_attributes(const fa::ProjectDomainAttributesUpdateRequest& req,
                                               fa::ProjectDomainAttributesUpdateResponse*) {
  if (!req.has_attributes()) return missing("attributes");
  const auto& a = req.attributes();
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    if (auto st = validate_project_and_domain(tx, m_config, a.project(), a.domain()); !st)
      return st;
    auto type = resource_type_of(a.has_matching_attributes() ? &a.matching_attributes() : nullptr,
                                 a.project() + "-" + a.domain());
    if (!type) return type.error();
    return upsert(tx, ResourceKey{a.project(), a.domain(), "", "", *type},
                  k_priority_project_domain, a.matching_attributes());
  });
}

Status Admin::get_project_domain_attributes(const fa::ProjectDomainAttributesGetRequest& req,
                                            fa::ProjectDomainAttributesGetResponse* out) {
  return in_tx(m_store, false, [&](Tx& tx) -> Status {
    if (auto st = validate_project_and_domain(tx, m_config, req.project(), req.domain()); !st) {
      return st;
    }
    const int type = req.resource_type();
    auto row = tx.most_specific_resource(type, req.project(), req.domain(), "");
    if (!row) return row.error();
    if (!row->has_value()) return resource_not_found(req.project(), req.domain(), "", type);
    auto parsed = attributes_of(**row);
    if (!parsed) return parsed.error();
    auto* attrs = out->mutable_attributes();
    attrs->set_project((*row)->key.project);
    attrs->set_domain((*row)->key.domain);  // "" when it fell back to the project row
    *attrs->mutable_matching_attributes() = std::move(*parsed);
    return ok_status();
  });
}

Status Admin::delete_project_domain_attributes(const fa::ProjectDomainAttributesDeleteRequest& req,
                                               fa::ProjectDomainAttributesDeleteResponse*) {
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    if (auto st = validate_project_and_domain(tx, m_config, req.project(), req.domain()); !st) {
      return st;
    }
    // Also removes the workflow-level rows of this type under (project, domain).
    auto n = tx.delete_resources(req.resource_type(), req.project(), req.domain(), "");
    if (!n) return n.error();
    return ok_status();
  });
}

Status Admin::update_workflow_attributes(const fa::WorkflowAttributesUpdateRequest& req,
                                         fa::WorkflowAttributesUpdateResponse*) {
  if (!req.has_attributes()) return missing("attributes");
  const auto& a = req.attributes();
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    if (auto st = validate_project_and_domain(tx, m_config, a.project(), a.domain()); !st)
      return st;
    // The workflow does not have to be registered.
    if (a.workflow().empty()) return missing("name");
    auto type = resource_type_of(a.has_matching_attributes() ? &a.matching_attributes() : nullptr,
                                 a.project() + "-" + a.domain() + "-" + a.workflow());
    if (!type) return type.error();
    return upsert(tx, ResourceKey{a.project(), a.domain(), a.workflow(), "", *type},
                  k_priority_workflow, a.matching_attributes());
  });
}

Status Admin::get_workflow_attributes(const fa::WorkflowAttributesGetRequest& req,
                                      fa::WorkflowAttributesGetResponse* out) {
  return in_tx(m_store, false, [&](Tx& tx) -> Status {
    if (auto st = validate_project_and_domain(tx, m_config, req.project(), req.domain()); !st) {
      return st;
    }
    if (req.workflow().empty()) return missing("name");
    const int type = req.resource_type();
    auto row = tx.most_specific_resource(type, req.project(), req.domain(), req.workflow());
    if (!row) return row.error();
    if (!row->has_value()) {
      return resource_not_found(req.project(), req.domain(), req.workflow(), type);
    }
    auto parsed = attributes_of(**row);
    if (!parsed) return parsed.error();
    auto* attrs = out->mutable_attributes();
    attrs->set_project((*row)->key.project);
    attrs->set_domain((*row)->key.domain);
    attrs->set_workflow((*row)->key.workflow);  // "" when it fell back to a broader row
    *attrs->mutable_matching_attributes() = std::move(*parsed);
    return ok_status();
  });
}

Status Admin::delete_workflow_attributes(const fa::WorkflowAttributesDeleteRequest& req,
                                         fa::WorkflowAttributesDeleteResponse*) {
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    if (auto st = validate_project_and_domain(tx, m_config, req.project(), req.domain()); !st) {
      return st;
    }
    if (req.workflow().empty()) return missing("name");
    auto n = tx.delete_resources(req.resource_type(), req.project(), req.domain(), req.workflow());
    if (!n) return n.error();
    return ok_status();
  });
}

Status Admin::list_matchable_attributes(const fa::ListMatchableAttributesRequest& req,
                                        fa::ListMatchableAttributesResponse* out) {
  if (!fa::MatchableResource_IsValid(req.resource_type())) return invalid_value("resource_type");
  // The rows are read in the transaction, the answer built after it: FlyteAdmin's database serves
  // other calls while a large list is converted, and the store's one transaction at a time would
  // otherwise hold every other call for the whole conversion.
  std::vector<ResourceRow> rows;
  auto read = [&](Tx& tx) -> Status {
    auto listed = tx.list_resources(req.resource_type());
    if (!listed) return listed.error();
    rows = std::move(*listed);
    return ok_status();
  };
  if (auto st = in_tx(m_store, false, read); !st) return st;
  out->mutable_configurations()->Reserve(static_cast<int>(rows.size()));
  for (const auto& r : rows) {
    auto* c = out->add_configurations();
    if (!parse_blob(c->mutable_attributes(), r.attributes))
      return internal("emulator: corrupt resource row");
    c->set_project(r.key.project);
    c->set_domain(r.key.domain);
    c->set_workflow(r.key.workflow);
    c->set_launch_plan(r.key.launch_plan);
  }
  return ok_status();
}

}  // namespace flytecd::sinks::emulator
