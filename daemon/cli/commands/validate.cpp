// `flytecd validate [DIR]`: checks every document of a repository directory, the key files its
// signature policies name and the packages it keeps (pre-commit / CI).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "daemon/cli/command.hpp"
#include "daemon/cli/package_compile.hpp"
#include "daemon/common/atomic_file.hpp"
#include "daemon/common/json_dump.hpp"
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

Runner add_validate_command(CLI::App& app, CommandContext&) {
  auto opt = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate", "Check every document of a repository directory (pre-commit / CI)");
  cmd->add_option("dir", opt->dir, "Repository directory (default: .)");
  cmd->add_option("-o,--output", opt->output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--require-digest", opt->policy.require_digest_pins,
                "Policy: packages must be pinned by digest");
  cmd->add_flag("--packages", opt->packages,
                "Also fetch OCI and HTTPS packages (the packages: settings of --config) and "
                "compile them; without it only packages kept in the repository are");
  cmd->add_option("--config", opt->config_file,
                  "flytecd configuration: its packages: settings (--packages, and the trusted "
                  "root keyless signature policies need)");
  cmd->add_option("--domains", opt->policy.domains, "FlyteAdmin's configured domains")
      ->delimiter(',');
  cmd->footer(
      "Exit codes: 0 valid, 1 invalid (every error is listed with file:line:column).\n"
      "Examples:\n"
      "  flytecd validate repo-layout-example/\n"
      "  flytecd validate -o json . | jq '.diagnostics[] | .kind'\n");
  return when_parsed(cmd, [opt]() -> int { return run_validate(*opt, std::cout, std::cerr); });
}

}  // namespace flytecd::cli
