#include "sinks/flyteadmin/requests.hpp"

#include <iterator>

namespace flytecd::sinks::flyteadmin {
namespace admin = flyteidl::admin;

namespace {

// An empty string field `name` of `m` (when `m` has one): "<where>project".
std::optional<std::string> empty_field(const google::protobuf::Message& m, const char* name,
                                       const std::string& where) {
  const auto* f = m.GetDescriptor()->FindFieldByName(name);
  if (!f || f->is_repeated() || f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_STRING)
    return std::nullopt;
  if (!m.GetReflection()->GetString(m, f).empty()) return std::nullopt;
  return "empty " + where + name;
}

// Project-level messages have no domain or workflow field, project-domain ones no workflow.
template <typename T>
void set_scope(T* attrs, const sinks::Scope& s) {
  attrs->set_project(s.project);
  if constexpr (requires { attrs->set_domain(s.domain); }) attrs->set_domain(s.domain);
  if constexpr (requires { attrs->set_workflow(s.workflow); }) attrs->set_workflow(s.workflow);
}

template <typename Req>
OverrideRequest update_request(const sinks::OverrideState& o) {
  Req req;
  set_scope(req.mutable_attributes(), o.scope);
  *req.mutable_attributes()->mutable_matching_attributes() = o.value;
  return req;
}

template <typename Req>
OverrideRequest delete_request(const sinks::OverrideState& o) {
  Req req;
  set_scope(&req, o.scope);
  req.set_resource_type(o.type);
  return req;
}

}  // namespace

OverrideRequest render_override_update(const sinks::OverrideState& o) {
  switch (o.scope.level()) {
    case sinks::Level::project:
      return update_request<admin::ProjectAttributesUpdateRequest>(o);
    case sinks::Level::project_domain:
      return update_request<admin::ProjectDomainAttributesUpdateRequest>(o);
    default:
      return update_request<admin::WorkflowAttributesUpdateRequest>(o);
  }
}

OverrideRequest render_override_delete(const sinks::OverrideState& o) {
  switch (o.scope.level()) {
    case sinks::Level::project:
      return delete_request<admin::ProjectAttributesDeleteRequest>(o);
    case sinks::Level::project_domain:
      return delete_request<admin::ProjectDomainAttributesDeleteRequest>(o);
    default:
      return delete_request<admin::WorkflowAttributesDeleteRequest>(o);
  }
}

std::string_view rpc_name(const OverrideRequest& req) {
  static constexpr std::string_view k_names[] = {
      "UpdateProjectAttributes", "UpdateProjectDomainAttributes", "UpdateWorkflowAttributes",
      "DeleteProjectAttributes", "DeleteProjectDomainAttributes", "DeleteWorkflowAttributes"};
  static_assert(std::size(k_names) == std::variant_size_v<OverrideRequest>);
  return k_names[req.index()];
}

std::vector<OverrideRequest> render_override_step(const sinks::Step& step) {
  if (step.kind != sinks::ObjectKind::override_attr) return {};
  switch (step.action) {
    case sinks::Action::create:
    case sinks::Action::update:
      return {render_override_update(*step.desired)};
    case sinks::Action::remove:
      if (!step.live) return {};
      return {render_override_delete(*step.live)};
    case sinks::Action::replace:
      return {render_override_delete(*step.live), render_override_update(*step.desired)};
    case sinks::Action::adopt:
      return {};
  }
  return {};
}

std::optional<std::string> empty_scope(const google::protobuf::Message& req) {
  if (req.GetDescriptor()->full_name() == "flyteidl.admin.Project")
    return empty_field(req, "id", "project ");
  for (const char* name : {"project", "domain"})
    if (auto why = empty_field(req, name, "")) return why;
  for (const char* sub : {"id", "attributes", "project"}) {
    const auto* f = req.GetDescriptor()->FindFieldByName(sub);
    if (!f || f->is_repeated() ||
        f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    const auto& m = req.GetReflection()->GetMessage(req, f);
    if (m.GetDescriptor()->full_name() == "flyteidl.admin.Project") {
      if (auto why = empty_field(m, "id", "project ")) return why;
      continue;
    }
    for (const char* name : {"project", "domain"})
      if (auto why = empty_field(m, name, std::string(sub) + ".")) return why;
  }
  return std::nullopt;
}

std::optional<std::string> empty_override_scope(const OverrideRequest& req) {
  return std::visit(
      [](const auto& r) -> std::optional<std::string> {
        // Updates name their scope in `attributes`, deletes in their own fields; project-level
        // messages have no domain.
        auto check = [](const auto& m, const char* where) -> std::optional<std::string> {
          if (m.project().empty()) return std::string("empty ") + where + "project";
          if constexpr (requires { m.domain(); })
            if (m.domain().empty()) return std::string("empty ") + where + "domain";
          return std::nullopt;
        };
        if constexpr (requires { r.attributes(); })
          return check(r.attributes(), "attributes.");
        else
          return check(r, "");
      },
      req);
}

}  // namespace flytecd::sinks::flyteadmin
