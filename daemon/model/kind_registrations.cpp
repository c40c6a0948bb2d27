// Document kinds WorkflowRegistration (flytecd's) and FlyteRegistration (the Kubernetes
// operator's resource, accepted unchanged): a `pyflyte package` archive to register at a project,
// domain and version.
#include <algorithm>
#include <map>

#include "daemon/common/scan.hpp"
#include "daemon/model/document_fields.hpp"
#include "daemon/model/kinds.hpp"
#include "daemon/model/package_ref.hpp"
#include "sources/verify_policy.hpp"

namespace flytecd::model {

namespace {

void check_version(Fields& f, const std::string& file, const YAML::Node& node,
                   const std::string& key, const std::string& version) {
  // Versions end up in identifiers, OCI tags, the ledger and every log line of a registration.
  constexpr size_t k_max_version = 255;
  if (version.size() > k_max_version) {
    f.add(DiagKind::bad_version, location_of(file, node), key,
          "version of " + std::to_string(version.size()) + " characters",
          "at most " + std::to_string(k_max_version) + " characters");
    return;
  }
  if (!version.empty() && !url_safe_version(version))
    f.add(DiagKind::bad_version, location_of(file, node), key,
          "version '" + scan::printable(version) + "' is not URL-safe",
          "only letters, digits and - _ . ~");
}

void check_package(Fields& f, const std::string& file, const YAML::Node& node,
                   const std::string& key, const std::string& package, const Policy& policy) {
  if (package.empty()) return;
  std::string error;
  auto ref = parse_package_ref(package, error);
  if (!ref) {
    f.add(DiagKind::bad_package_uri, location_of(file, node), key, error, "");
    return;
  }
  if (policy.require_digest_pins && !ref->pinned())
    f.add(DiagKind::policy_violation, location_of(file, node), key,
          "package '" + scan::printable(package) +
              "' is not pinned by digest (policy: require digest pins)",
          ref->kind == PackageRef::Kind::oci ? "oci://host/repo@sha256:…" : "…#sha256=<hex>");
}

// verify: who must have signed the package. Signatures live next to OCI artifacts only.
void parse_verify(Fields& f, const std::string& file, const YAML::Node& v, Registration& r) {
  sources::VerifySpec spec;
  if (auto p = sources::parse_verify_spec(v, "verify", false, spec)) {
    f.add(DiagKind::invalid_value, Location{file, p->line}, p->field, p->what, p->expected);
    return;
  }
  std::string error;
  if (auto ref = parse_package_ref(r.package, error); ref && ref->kind != PackageRef::Kind::oci) {
    f.add(DiagKind::invalid_value, location_of(file, v), "verify",
          "a signature policy on a package that is not an OCI artifact",
          "an oci:// package (cosign signatures are stored next to it in its registry)");
    return;
  }
  if (!spec.key.empty() && (spec.key.front() == '/' || spec.key.find("..") != std::string::npos)) {
    f.add(DiagKind::invalid_value, location_of(file, v["key"]), "verify.key",
          "'" + scan::printable(spec.key) + "' leaves the repository",
          "a repository-relative path such as keys/cosign.pub (keyFile: for a file on the "
          "daemon's machine)");
    return;
  }
  spec.line = location_of(file, v).line;
  spec.where = file + ":" + std::to_string(spec.line);
  r.verify = std::move(spec);
}

void parse_registration(const std::string& file, const YAML::Node& doc, Fields& f,
                        const Policy& policy, Documents& out, Diagnostics& diags) {
  size_t before = diags.size();
  Registration r;
  r.source_kind = "WorkflowRegistration";
  r.where = location_of(file, doc);
  r.name = parse_metadata(file, doc, f, diags, true);
  r.project = f.str("project", true, "a project id");
  check_project_id(f, file, doc["project"], "project", r.project);
  r.domain = f.str("domain", true, "a domain");
  check_domain(f, file, doc, r.domain, policy);
  r.version = f.str("version", true, "a version such as v1.4.2");
  check_version(f, file, doc["version"], "version", r.version);
  r.package =
      f.str("package", true, "oci://host/repo:tag, oci://host/repo@sha256:…, https://… or a path");
  check_package(f, file, doc["package"], "package", r.package, policy);
  std::string activate = f.str("activate", false, "scheduled, all or none");
  if (activate.empty() || activate == "scheduled")
    r.activate = Activate::scheduled;
  else if (activate == "all")
    r.activate = Activate::all;
  else if (activate == "none")
    r.activate = Activate::none;
  else
    f.add(DiagKind::invalid_value, location_of(file, doc["activate"]), "activate",
          "unknown activation '" + scan::printable(activate) + "'", "scheduled, all or none");
  r.service_account = f.str("serviceAccount", false);
  r.iam_role = f.str("iamRole", false);
  r.raw_output_prefix = f.str("rawOutputDataPrefix", false);
  r.destination_dir = f.str("destinationDirectory", false);
  if (YAML::Node v = f.node("verify"); v.IsDefined() && !v.IsNull()) parse_verify(f, file, v, r);
  f.reject_unknown(
      "apiVersion, kind, metadata, project, domain, version, package, activate, serviceAccount, "
      "iamRole, rawOutputDataPrefix, destinationDirectory, verify");
  if (diags.size() == before) out.registrations.push_back(std::move(r));
}

// The existing Kubernetes operator's resource, accepted unchanged.
void parse_flyte_registration(const std::string& file, const YAML::Node& doc, Fields& f,
                              const Policy& policy, Documents& out, Diagnostics& diags) {
  size_t before = diags.size();
  Registration r;
  r.source_kind = "FlyteRegistration";
  r.where = location_of(file, doc);
  r.name = parse_metadata(file, doc, f, diags, true);
  f.node("status");  // never written by the operator; ignored
  YAML::Node spec = f.node("spec");
  f.reject_unknown("apiVersion, kind, metadata, spec, status");
  if (!spec.IsDefined() || !spec.IsMap()) {
    f.add(spec.IsDefined() ? DiagKind::wrong_type : DiagKind::missing_field,
          location_of(file, spec.IsDefined() ? spec : doc), "spec",
          "spec is missing or not a mapping",
          "spec: {workflowProject, workflowDomain, workflowVersion, workflowPackageUri}");
    return;
  }
  Fields sf(file, spec, "spec", diags);
  r.project = sf.str("workflowProject", true, "a project id");
  check_project_id(sf, file, spec["workflowProject"], "workflowProject", r.project);
  r.domain = sf.str("workflowDomain", true, "a domain");
  if (!r.domain.empty() &&
      std::find(policy.domains.begin(), policy.domains.end(), r.domain) == policy.domains.end())
    sf.add(
        DiagKind::invalid_value, location_of(file, spec["workflowDomain"]), "workflowDomain",
        "domain '" + scan::printable(r.domain) + "' is not one of FlyteAdmin's configured domains",
        "a configured domain");
  r.version = sf.str("workflowVersion", true, "a version");
  check_version(sf, file, spec["workflowVersion"], "workflowVersion", r.version);
  std::string uri =
      sf.str("workflowPackageUri", true, "a repository path in the configured registry");
  sf.reject_unknown("workflowProject, workflowDomain, workflowVersion, workflowPackageUri");
  if (uri.find("://") != std::string::npos) {
    r.package = uri;
    check_package(sf, file, spec["workflowPackageUri"], "workflowPackageUri", uri, policy);
  } else if (!uri.empty()) {
    // The operator pulls <registry>/<uri>:<workflowVersion> from its configured registry.
    r.registry_relative = true;
    r.package = uri;
    if (!valid_oci_repository(uri))
      sf.add(DiagKind::bad_package_uri, location_of(file, spec["workflowPackageUri"]),
             "workflowPackageUri",
             "'" + scan::printable(uri) + "' is not a valid registry repository path",
             "lowercase path components like team/workflows");
    else if (!r.version.empty() && !valid_oci_tag(r.version))
      sf.add(DiagKind::bad_version, location_of(file, spec["workflowVersion"]), "workflowVersion",
             "version '" + scan::printable(r.version) +
                 "' cannot be used as the OCI tag of the package",
             "[A-Za-z0-9_][A-Za-z0-9._-]*");
  }
  if (diags.size() == before) out.registrations.push_back(std::move(r));
}

}  // namespace

void parse_registration_kind(const KindInput& in, Fields& f, Documents& out, Diagnostics& diags) {
  parse_registration(in.file, in.doc, f, in.policy, out, diags);
}

void parse_flyte_registration_kind(const KindInput& in, Fields& f, Documents& out,
                                   Diagnostics& diags) {
  parse_flyte_registration(in.file, in.doc, f, in.policy, out, diags);
}

void check_registrations_kind(const Documents& docs, Diagnostics& diags) {
  std::map<std::string, const Registration*> regs;
  for (const auto& r : docs.registrations) {
    auto [it, inserted] = regs.emplace(r.name, &r);
    if (!inserted)
      diags.push_back(Diagnostic{Severity::error, DiagKind::duplicate_object, r.where,
                                 "metadata.name",
                                 "registration '" + scan::printable(r.name) + "' is declared twice",
                                 "unique registration names", it->second->where});
  }
}

}  // namespace flytecd::model
