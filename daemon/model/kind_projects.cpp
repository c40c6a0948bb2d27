// Document kind Project: a FlyteAdmin project (id, name, description, labels, state), checked as
// FlyteAdmin's ValidateProject checks it.
#include <algorithm>
#include <map>

#include "daemon/common/scan.hpp"
#include "daemon/model/document_fields.hpp"
#include "daemon/model/kinds.hpp"

namespace flytecd::model {

namespace {

// FlyteAdmin's ValidateProject (project_validator.go): refuse here what it refuses at apply.
void check_project_fields(Fields& f, const std::string& file, const YAML::Node& doc,
                          const ProjectDoc& p) {
  constexpr size_t k_max_name = 64;
  constexpr size_t k_max_description = 300;
  constexpr size_t k_max_labels = 16;
  // The name defaults to the id, so a long id without a name is reported at the id.
  const YAML::Node name_node = doc["name"].IsDefined() ? doc["name"] : doc["id"];
  if (p.name.size() > k_max_name)
    f.add(DiagKind::invalid_value, location_of(file, name_node), "name",
          "project name of " + std::to_string(p.name.size()) + " characters",
          "at most " + std::to_string(k_max_name) + " characters (FlyteAdmin's limit)");
  if (p.description.size() > k_max_description)
    f.add(DiagKind::invalid_value, location_of(file, doc["description"]), "description",
          "description of " + std::to_string(p.description.size()) + " characters",
          "at most " + std::to_string(k_max_description) + " characters (FlyteAdmin's limit)");
  if (p.labels.size() > k_max_labels)
    f.add(DiagKind::invalid_value, location_of(file, doc["labels"]), "labels",
          std::to_string(p.labels.size()) + " labels",
          "at most " + std::to_string(k_max_labels) + " labels (FlyteAdmin's limit)");
  for (const auto& [key, value] : p.labels) {
    if (!scan::is_k8s_qualified_name(key))
      f.add(DiagKind::invalid_value, location_of(file, doc["labels"]), "labels." + key,
            "label key '" + scan::printable(key) + "' is not a Kubernetes qualified name",
            "[prefix/]name: name of at most 63 letters, digits, '-', '_' or '.', starting and "
            "ending with a letter or digit; prefix a DNS subdomain");
    if (!scan::is_k8s_label_value(value))
      f.add(DiagKind::invalid_value, location_of(file, doc["labels"][key]), "labels." + key,
            "label value '" + scan::printable(value) + "' is not a Kubernetes label value",
            "empty, or at most 63 letters, digits, '-', '_' or '.', starting and ending with a "
            "letter or digit");
  }
}

void parse_project(const std::string& file, const YAML::Node& doc, Fields& f, Documents& out,
                   Diagnostics& diags) {
  size_t before = diags.size();
  ProjectDoc p;
  p.where = location_of(file, doc);
  parse_metadata(file, doc, f, diags, false);
  p.id = f.str("id", true, "a project id (DNS-1123 label)");
  check_project_id(f, file, doc["id"], "id", p.id);
  p.name = f.str("name", false);
  if (p.name.empty()) p.name = p.id;
  p.description = f.str("description", false);
  p.labels = f.string_map("labels");
  check_project_fields(f, file, doc, p);
  std::string state = f.str("state", false, "active or archived");
  if (state == "archived")
    p.archived = true;
  else if (!state.empty() && state != "active")
    f.add(DiagKind::invalid_value, location_of(file, doc["state"]), "state",
          "unknown state '" + scan::printable(state) + "'", "active or archived");
  f.reject_unknown("apiVersion, kind, metadata, id, name, description, labels, state");
  if (diags.size() == before) out.projects.push_back(std::move(p));
}

}  // namespace

void parse_project_kind(const KindInput& in, Fields& f, Documents& out, Diagnostics& diags) {
  parse_project(in.file, in.doc, f, out, diags);
}

void check_projects_kind(const Documents& docs, Diagnostics& diags) {
  std::map<std::string, const ProjectDoc*> projects;
  for (const auto& p : docs.projects) {
    auto [it, inserted] = projects.emplace(p.id, &p);
    if (!inserted)
      diags.push_back(Diagnostic{Severity::error, DiagKind::duplicate_object, p.where, "id",
                                 "project '" + scan::printable(p.id) + "' is declared twice",
                                 "one Project document per id", it->second->where});
  }
}

}  // namespace flytecd::model
