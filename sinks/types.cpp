#include "sinks/types.hpp"

namespace flytecd::sinks {
namespace admin = flyteidl::admin;

std::string_view to_string(Level level) {
  switch (level) {
    case Level::workflow:
      return "workflow";
    case Level::project_domain:
      return "project-domain";
    case Level::project:
      return "project";
    case Level::platform_domain:
      return "platform-domain";
    case Level::platform_global:
      return "platform-global";
  }
  return "project";
}

std::string to_string(const Scope& s) {
  std::string out = s.project;
  if (!s.domain.empty()) out += "/" + s.domain;
  if (!s.workflow.empty()) out += "/" + s.workflow;
  return out;
}

namespace {
// FlyteAdmin derives the stored resource type from which oneof field is set
// (flyteadmin validation/attributes_validator.go); this is the same table.
struct TypeField {
  AttributeType type;
  int field;
};
constexpr TypeField k_type_fields[] = {
    {admin::TASK_RESOURCE, admin::MatchingAttributes::kTaskResourceAttributesFieldNumber},
    {admin::CLUSTER_RESOURCE, admin::MatchingAttributes::kClusterResourceAttributesFieldNumber},
    {admin::EXECUTION_QUEUE, admin::MatchingAttributes::kExecutionQueueAttributesFieldNumber},
    {admin::EXECUTION_CLUSTER_LABEL, admin::MatchingAttributes::kExecutionClusterLabelFieldNumber},
    {admin::QUALITY_OF_SERVICE_SPECIFICATION,
     admin::MatchingAttributes::kQualityOfServiceFieldNumber},
    {admin::PLUGIN_OVERRIDE, admin::MatchingAttributes::kPluginOverridesFieldNumber},
    {admin::WORKFLOW_EXECUTION_CONFIG,
     admin::MatchingAttributes::kWorkflowExecutionConfigFieldNumber},
    {admin::CLUSTER_ASSIGNMENT, admin::MatchingAttributes::kClusterAssignmentFieldNumber},
};
}  // namespace

std::optional<AttributeType> attribute_type_of_field(int field_number) {
  for (const auto& tf : k_type_fields)
    if (tf.field == field_number) return tf.type;
  return std::nullopt;
}

int field_of_attribute_type(AttributeType type) {
  for (const auto& tf : k_type_fields)
    if (tf.type == type) return tf.field;
  return 0;
}

std::string attribute_type_name(AttributeType type) { return admin::MatchableResource_Name(type); }

std::string attribute_json_key(AttributeType type) {
  const auto* field =
      admin::MatchingAttributes::descriptor()->FindFieldByNumber(field_of_attribute_type(type));
  return field ? field->json_name() : std::string();
}

std::optional<AttributeType> attribute_type_from_name(const std::string& name) {
  AttributeType t{};
  if (admin::MatchableResource_Parse(name, &t)) return t;
  return std::nullopt;
}

std::vector<AttributeType> all_attribute_types() {
  std::vector<AttributeType> out;
  for (const auto& tf : k_type_fields) out.push_back(tf.type);
  return out;
}

std::string_view to_string(ObjectKind k) {
  switch (k) {
    case ObjectKind::project:
      return "project";
    case ObjectKind::override_attr:
      return "override";
    case ObjectKind::object:
      return "object";
  }
  return "object";
}

std::string object_kind_of(const std::string& key) { return key.substr(0, key.find('/')); }

std::string project_key(const std::string& id) { return "project/" + id; }

std::string override_key(const Scope& s, AttributeType type) {
  return "override/" + s.project + "/" + s.domain + "/" + s.workflow + "/" +
         attribute_type_name(type);
}

std::string_view to_string(Action a) {
  switch (a) {
    case Action::create:
      return "create";
    case Action::update:
      return "update";
    case Action::replace:
      return "replace";
    case Action::remove:
      return "delete";
    case Action::adopt:
      return "adopt";
  }
  return "create";
}

void FieldLines::set(std::string_view path, int line) {
  for (auto& e : m_index)
    if (std::string_view(m_paths).substr(e.offset, e.size) == path) {
      e.line = line;
      return;
    }
  m_index.push_back(
      Entry{static_cast<uint32_t>(m_paths.size()), static_cast<uint32_t>(path.size()), line});
  m_paths.append(path);
  m_paths.push_back('\0');
}

int FieldLines::find(std::string_view path) const {
  for (const auto& e : m_index)
    if (std::string_view(m_paths).substr(e.offset, e.size) == path) return e.line;
  return 0;
}

void FieldLines::shrink() {
  m_paths.shrink_to_fit();
  m_index.shrink_to_fit();
}

}  // namespace flytecd::sinks
