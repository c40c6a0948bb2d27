#pragma once

#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/registration/package.hpp"

// Hydration exactly as flytectl's `register files` does it (reference §1.5–§1.6), with two
// deliberate differences, both turning a silently broken registration into an error:
// - a `{{ .remote_package_path }}` argument when there is no location to put in (flytectl
//   substitutes "" when the package has no fast source);
// - a node without a target, a task node without reference_id, a branch without its case, an
//   array node without its inner node (flytectl panics or errors "unknown type").
// flytectl round-trips a k8s_pod pod_spec through the Kubernetes PodSpec type; we edit the Struct
// in place, so fields unknown to Kubernetes survive and nothing else in the Struct changes.

namespace flytecd::registration {

inline constexpr std::string_view k_project_placeholder = "{{ registration.project }}";
inline constexpr std::string_view k_domain_placeholder = "{{ registration.domain }}";
inline constexpr std::string_view k_version_placeholder = "{{ registration.version }}";
inline constexpr std::string_view k_remote_package_placeholder = "{{ .remote_package_path }}";
inline constexpr std::string_view k_dest_dir_placeholder = "{{ .dest_dir }}";

struct HydrateParams {
  std::string project, domain, version;  // -p, -d, --version (all required here)
  std::string service_account;           // flytectl --k8sServiceAccount
  std::string iam_role;                  // flytectl --assumableIamRole
  std::string raw_output_prefix;         // flytectl --outputLocationPrefix
  std::string destination_dir;           // flytectl --destinationDirectory ("." when empty)
  std::string remote_package_path;       // native_url of the uploaded fast source ("" when none)
  bool force = false;                    // flytectl --force (rewrite every version)
};

// A registration document's hydration parameters (its project, domain, version and the
// flytectl-compatible overrides; no fast source path, no force).
HydrateParams hydrate_params(const model::Registration& r);

// Hydrates every entity in place:
// - identifiers: project/domain replaced iff "" or exactly the registration placeholder; version
//   iff force, "" or the placeholder; resource_type, name and org never touched;
// - tasks: template.id; container args / k8s_pod containers[*].args exactly equal to
//   {{ .remote_package_path }} / {{ .dest_dir }};
// - workflows: template.id, every node (task, workflow, branch, array, gate) of the template, its
//   failure node and every sub_workflows[*] (id, nodes, failure node); task-node pod_template args;
// - launch plans: id, spec.workflow_id; auth_role + security_context.run_as replaced wholesale
//   when service_account or iam_role is set; raw_output_data_config when raw_output_prefix is set.
// Errors (invalid_input) name the file and node. On error the package is partly hydrated: discard
// it. Idempotent for a given params (a hydrated package hydrates to itself).
Status hydrate(Package& pkg, const HydrateParams& params);

// Every Identifier field (project, domain, name, version, org) that still holds "{{", and every
// string still exactly equal to {{ .remote_package_path }} or {{ .dest_dir }}, as
// "file: path.to.field = value". Empty for a fully hydrated package. For tests and pre-flight.
std::vector<std::string> unhydrated_references(const Package& pkg);

// Registration order as indices into pkg.entities: every task (file order), then workflows and
// launch plans in file order. Verifies that a launch plan comes after the workflow it launches
// and a workflow after the launch plans (and non-inline sub-workflows) its nodes reference, when
// those are in the package (references to entities outside it are the server's business).
// Identifiers are compared whole (project, domain, name, version), so call after hydrate().
// Violations are one invalid_input error listing each with both files.
Result<std::vector<size_t>> registration_order(const Package& pkg);

}  // namespace flytecd::registration
