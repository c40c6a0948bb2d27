// compile_task: the task compiler FlyteAdmin runs on CreateTask after its own validation
// (flytepropeller pkg/compiler/task_compiler.go): container command and image, resource
// quantities, the container names of a pod spec.
#include <google/protobuf/struct.pb.h>

#include "daemon/common/quantity.hpp"
#include "daemon/common/scan.hpp"
#include "sinks/workflow_compiler.hpp"

namespace flytecd::sinks::compiler {
namespace fc = ::flyteidl::core;
namespace pb = ::google::protobuf;

namespace {

Issue issue(std::string node, std::string code, std::string text, std::string description) {
  return Issue{false, std::move(node), std::move(code), std::move(text), std::move(description)};
}

Issue value_required(const std::string& node, const std::string& what, const std::string& text) {
  return issue(node, "ValueRequired", text, "Value required [" + what + "].");
}

void check_resources(const pb::RepeatedPtrField<fc::Resources::ResourceEntry>& entries,
                     const char* side, std::vector<Issue>& out) {
  for (const auto& e : entries) {
    if (quantity::parse_quantity(e.value())) continue;
    const std::string name = fc::Resources::ResourceName_IsValid(e.name())
                                 ? fc::Resources::ResourceName_Name(e.name())
                                 : std::to_string(e.name());
    out.push_back(issue("resources." + name, "UnrecognizedValue",
                        std::string("container resource ") + side + " " + name + ": '" + e.value() +
                            "' is not a Kubernetes quantity",
                        "Unrecognized value [" + e.value() + "]."));
  }
}

// validateContainer / validateContainerCommand.
void check_container(const fc::TaskTemplate& t, std::vector<Issue>& out) {
  const auto& c = t.container();
  if (t.has_interface()) {
    const bool io =
        !t.interface().inputs().variables().empty() || !t.interface().outputs().variables().empty();
    if (io && c.command().empty() && c.args().empty())
      out.push_back(value_required("container", "command",
                                   "the task has inputs or outputs but its container has neither "
                                   "command nor args"));
  }
  if (c.image().empty())
    out.push_back(value_required("container", "image", "the container has no image"));
  if (c.has_resources()) {
    check_resources(c.resources().requests(), "request", out);
    check_resources(c.resources().limits(), "limit", out);
  }
}

// validateK8sPod: the pod spec must read as a Kubernetes PodSpec (checked here: its containers
// are a list of objects whose names are strings) and every container name a DNS-1123 label.
void check_pod(const fc::TaskTemplate& t, std::vector<Issue>& out) {
  const auto& spec = t.k8s_pod().pod_spec().fields();
  auto it = spec.find("containers");
  if (it == spec.end() || it->second.has_null_value()) return;
  auto unreadable = [&](const std::string& why) {
    out.push_back(issue("root", "InvalidValue", "the pod spec is not a Kubernetes PodSpec: " + why,
                        "Invalid value [k8s pod spec]."));
  };
  if (!it->second.has_list_value()) return unreadable("containers is not a list");
  std::vector<std::string> names;
  for (const auto& c : it->second.list_value().values()) {
    if (c.has_null_value()) {
      names.emplace_back();
      continue;
    }
    if (!c.has_struct_value()) return unreadable("a container is not an object");
    auto name = c.struct_value().fields().find("name");
    if (name == c.struct_value().fields().end() || name->second.has_null_value()) {
      names.emplace_back();
    } else if (!name->second.has_string_value()) {
      return unreadable("a container name is not a string");
    } else {
      names.push_back(name->second.string_value());
    }
  }
  for (const auto& n : names)
    if (!scan::is_dns1123_label(n))
      out.push_back(issue("root", "InvalidValue",
                          "pod container name '" + n +
                              "' is not a DNS-1123 label (lower-case letters, digits and '-', "
                              "at most 63)",
                          "Invalid value [k8s pod spec container name]."));
}

}  // namespace

std::vector<Issue> compile_task(const fc::TaskTemplate& task) {
  std::vector<Issue> out;
  if (!task.has_id()) out.push_back(value_required("root", "Id", "the task has no id"));
  if (task.has_container())
    check_container(task, out);
  else if (task.has_k8s_pod())
    check_pod(task, out);
  return out;
}

}  // namespace flytecd::sinks::compiler
