#include "daemon/cli/commands.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "daemon/cli/compile_command.hpp"
#include "daemon/cli/suggest.hpp"
#include "daemon/common/scan.hpp"

#include <nlohmann/json.hpp>

#include "daemon/common/atomic_file.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/model/resolve.hpp"
#include "daemon/wiring/wiring.hpp"
#include "sources/local/directory_reader.hpp"
#include "sources/oci/signature.hpp"

namespace flytecd::cli {
namespace {

nlohmann::ordered_json diag_json(const model::Diagnostic& d) {
  nlohmann::ordered_json j;
  j["severity"] = d.severity == model::Severity::error ? "error" : "warning";
  j["kind"] = std::string(model::to_string(d.kind));
  j["file"] = d.where.file;
  j["line"] = d.where.line;
  j["column"] = d.where.column;
  j["path"] = d.path;
  j["message"] = d.message;
  if (!d.expected.empty()) j["expected"] = d.expected;
  if (!d.related.file.empty()) j["related"] = model::to_string(d.related);
  return j;
}

Result<model::LoadResult> load_repo(const std::string& dir, const model::Limits& limits,
                                    const model::Policy& policy) {
  auto files = sources::local::read_yaml_tree(dir, limits.max_file_bytes);
  if (!files) return files.error();
  return model::load_documents(*files, limits, policy);
}

// The files signature policies name exist and hold public keys: verify.key in the repository,
// verify.keyFile on this machine; a keyless policy needs a readable packages.trustedRoot (checked
// when a configuration is given).
void check_verify_files(const std::string& dir, const model::Documents& docs,
                        const config::Config* cfg, model::Diagnostics& out) {
  auto problem = [&](const model::Registration& r, const std::string& field, std::string what,
                     std::string expected) {
    out.push_back(model::Diagnostic{model::Severity::error,
                                    model::DiagKind::invalid_value,
                                    model::Location{r.where.file, r.verify->line, 0},
                                    field,
                                    std::move(what),
                                    std::move(expected),
                                    {}});
  };
  constexpr size_t k_max_key_bytes = 1u << 20;
  for (const auto& r : docs.registrations) {
    if (!r.verify) continue;
    const auto& v = *r.verify;
    if (!v.key.empty() || !v.key_file.empty()) {
      const bool in_repo = !v.key.empty();
      const std::string& name = in_repo ? v.key : v.key_file;
      Result<std::string> bytes = std::string();
      if (in_repo) {
        bytes = sources::local::read_repo_file(dir, v.key, k_max_key_bytes);
      } else if (auto file = read_small_file(v.key_file, k_max_key_bytes, "verify.keyFile");
                 !file) {
        bytes = file.error();
      } else if (!*file) {
        bytes = make_error(ErrorCode::not_found, "no such file");
      } else {
        bytes = std::move(**file);
      }
      const std::string field = in_repo ? "verify.key" : "verify.keyFile";
      if (!bytes) {
        problem(r, field, "cannot read " + name + ": " + bytes.error().message,
                in_repo ? "a PEM public key in the repository (cosign.pub)"
                        : "a PEM public key on this machine");
      } else if (auto fp = sources::oci::public_key_fingerprint(*bytes); !fp) {
        problem(r, field, fp.error().message, "");
      }
    } else if (cfg != nullptr) {
      const std::string& root = cfg->packages.trusted_root_file;
      if (root.empty()) {
        problem(r, "verify.matchOIDCIdentity",
                "a keyless policy, and the configuration sets no packages.trustedRoot",
                "packages.trustedRoot: a sigstore trusted_root.json file");
      } else if (auto file = read_small_file(root, 16u << 20, "packages.trustedRoot");
                 !file || !*file) {
        problem(r, "verify.matchOIDCIdentity",
                "packages.trustedRoot " + root + " cannot be read" +
                    (file ? std::string(": no such file") : ": " + file.error().message),
                "a sigstore trusted_root.json file");
      }
    }
  }
}

}  // namespace

int run_validate(const ValidateOptions& opt, std::ostream& out, std::ostream& err) {
  auto loaded = load_repo(opt.dir, opt.limits, opt.policy);
  if (!loaded) {
    err << "flytecd validate: " << loaded.error().message << "\n";
    return 1;
  }
  auto& r = *loaded;
  // The configuration, read when given (signature policies' trusted root) or needed (--packages).
  std::optional<config::Config> config_given;
  if (!opt.config_file.empty() || opt.packages) {
    config::Config c = config::defaults();
    if (!opt.config_file.empty())
      if (auto s = config::load_file(opt.config_file, c); !s) {
        err << "flytecd validate: " << s.error().message << "\n";
        return 1;
      }
    if (auto s = config::apply_env(c); !s) {
      err << "flytecd validate: " << s.error().message << "\n";
      return 1;
    }
    config_given = std::move(c);
  }
  check_verify_files(opt.dir, r.documents, config_given ? &*config_given : nullptr, r.diagnostics);
  // Packages are compiled as FlyteAdmin would compile them: those in the repository, and with
  // --packages those in OCI registries and on HTTPS too (fetched into the package cache).
  if (opt.packages) {
    config::Config& cfg = *config_given;
    if (cfg.packages.cache_dir.empty() && cfg.state_dir.empty())
      cfg.packages.cache_dir =
          (std::filesystem::temp_directory_path() / "flytecd-validate-packages").string();
    auto packages = wiring::make_package_source(cfg, registration::directory_reader(opt.dir));
    for (auto& d : compile_packages(*packages, r.documents.registrations))
      r.diagnostics.push_back(std::move(d));
  } else {
    for (auto& d : compile_repository_packages(opt.dir, r.documents.registrations))
      r.diagnostics.push_back(std::move(d));
  }
  size_t errors = 0, warnings = 0;
  for (const auto& d : r.diagnostics) (d.severity == model::Severity::error ? errors : warnings)++;
  if (opt.output == "json") {
    nlohmann::ordered_json j;
    j["valid"] = r.ok();
    j["files"] = r.documents.file_count;
    j["documents"] = r.documents.document_count;
    j["overrides"] = r.documents.overrides.size();
    j["platformDefaults"] = r.documents.platform_defaults.size();
    j["projects"] = r.documents.projects.size();
    j["registrations"] = r.documents.registrations.size();
    j["rejectedDocuments"] = r.documents.rejected_documents;
    j["errors"] = errors;
    j["warnings"] = warnings;
    j["diagnostics"] = nlohmann::ordered_json::array();
    for (const auto& d : r.diagnostics) j["diagnostics"].push_back(diag_json(d));
    out << dump_json(j, 2) << "\n";
  } else {
    for (const auto& d : r.diagnostics) out << model::format(d) << "\n";
    out << (r.ok() ? "valid" : "invalid") << ": " << r.documents.file_count << " files, "
        << r.documents.document_count << " documents (" << r.documents.projects.size()
        << " projects, " << r.documents.overrides.size() << " overrides, "
        << r.documents.platform_defaults.size() << " platform defaults, "
        << r.documents.registrations.size() << " registrations"
        << (r.documents.rejected_documents
                ? " accepted, " + std::to_string(r.documents.rejected_documents) + " rejected"
                : std::string())
        << "); " << errors << " errors, " << warnings << " warnings\n";
  }
  return r.ok() ? 0 : 1;
}

int run_get_overrides(const GetOverridesOptions& opt, std::ostream& out, std::ostream& err) {
  if (!opt.workflow.empty() && opt.domain.empty()) {
    err << "flytecd get overrides: --workflow needs --domain (FlyteAdmin keys workflow overrides "
           "by project, domain "
           "and workflow)\n";
    return 1;
  }
  auto loaded = load_repo(opt.repo, opt.limits, opt.policy);
  if (!loaded) {
    err << "flytecd get overrides: " << loaded.error().message << "\n";
    return 1;
  }
  if (!loaded->ok()) {
    for (const auto& d : loaded->diagnostics)
      if (d.severity == model::Severity::error) err << model::format(d) << "\n";
    err << "flytecd get overrides: the repository is invalid; run `flytecd validate " << opt.repo
        << "`\n";
    return 1;
  }
  // A project or domain the repository does not know would silently show platform defaults.
  std::set<std::string> projects;
  for (const auto& p : loaded->documents.projects) projects.insert(p.id);
  for (const auto& o : loaded->documents.overrides) projects.insert(o.scope.project);
  for (const auto& r : loaded->documents.registrations) projects.insert(r.project);
  if (!projects.count(opt.project)) {
    const std::vector<std::string> known(projects.begin(), projects.end());
    std::string list;
    for (size_t i = 0; i < known.size() && i < 10; ++i) list += (i ? ", " : "") + known[i];
    err << "flytecd get overrides: project '" << scan::printable(opt.project)
        << "' is not declared in " << opt.repo
        << " (no Project, Overrides or registration names it)" << did_you_mean(opt.project, known)
        << (known.empty() ? "" : "; projects: " + list + (known.size() > 10 ? ", …" : "")) << "\n";
    return 1;
  }
  const auto& domains = opt.policy.domains;
  if (!opt.domain.empty() && !domains.empty() &&
      std::find(domains.begin(), domains.end(), opt.domain) == domains.end()) {
    std::string list;
    for (size_t i = 0; i < domains.size(); ++i) list += (i ? ", " : "") + domains[i];
    err << "flytecd get overrides: domain '" << scan::printable(opt.domain)
        << "' is not one of the configured domains (" << list << ")"
        << did_you_mean(opt.domain, domains) << "\n";
    return 1;
  }
  model::Hierarchy h(loaded->documents);
  model::Scope at{opt.project, opt.domain, opt.workflow};
  auto doc = model::collate(at, h.resolve(at));
  if (opt.output == "json")
    out << dump_json(doc, 2) << "\n";
  else
    out << model::json_to_yaml(doc);
  return 0;
}

int run_complete_projects(const std::string& repo, std::ostream& out) {
  auto loaded = load_repo(repo, model::Limits{}, model::Policy{});
  if (!loaded) return 1;
  std::set<std::string> projects;  // an invalid repository still names its projects
  for (const auto& p : loaded->documents.projects) projects.insert(p.id);
  for (const auto& o : loaded->documents.overrides) projects.insert(o.scope.project);
  for (const auto& r : loaded->documents.registrations) projects.insert(r.project);
  for (const auto& p : projects)
    if (!p.empty()) out << p << "\n";
  return 0;
}

}  // namespace flytecd::cli
