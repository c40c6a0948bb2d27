// Projects and GetVersion (FlyteAdmin project_manager.go, validation/project_validator.go).

#include "daemon/common/text.hpp"
#include "sinks/emulator/admin_common.hpp"

#include <ctime>

#ifndef FLYTECD_VERSION
#define FLYTECD_VERSION "unknown"
#endif

namespace flytecd::sinks::emulator {
namespace {

// When the process started (flytestdlib's BuildTime default: time.Now() at start-up).
const std::string k_started = text::rfc3339_utc(static_cast<int64_t>(std::time(nullptr)));

using namespace detail;

constexpr size_t k_max_name_length = 64;
constexpr size_t k_max_description_length = 300;
// validation.ValidateProject.
Status validate_project(const fa::Project& p) {
  if (p.id().empty()) return missing("project_id");
  if (auto st = validate_labels(p.has_labels() ? &p.labels() : nullptr); !st) return st;
  if (auto errs = k8s_dns1123_label_errors(p.id()); !errs.empty()) {
    return invalid("invalid project id [" + p.id() + "]: " + go_list(errs));
  }
  if (p.name().size() > k_max_name_length) {
    return invalid("project_name cannot exceed " + std::to_string(k_max_name_length) +
                   " characters");
  }
  if (p.description().size() > k_max_description_length) {
    return invalid("project_description cannot exceed " + std::to_string(k_max_description_length) +
                   " characters");
  }
  if (p.domains_size() > 0) {
    return invalid(
        "Domains are currently only set system wide. Please retry without domains included in "
        "your request.");
  }
  return ok_status();
}

Error project_not_found(const std::string& id) {
  return not_found("project [" + id + "] not found");
}

// transformers.FromProjectModel: the read-back holds the model's columns (id, name,
// description, state) and the labels of the stored proto, plus the configured domains. Any other
// field of the registered project (e.g. org) is not returned.
Status project_from_row(const ProjectRow& row, const std::vector<std::string>& domains,
                        fa::Project* out) {
  fa::Project stored;
  if (!parse_blob(&stored, row.blob)) return internal("emulator: corrupt project row");
  out->set_id(stored.id());
  out->set_name(stored.name());
  out->set_description(stored.description());
  if (stored.has_labels()) *out->mutable_labels() = stored.labels();
  out->set_state(static_cast<fa::Project::ProjectState>(row.state));
  for (const auto& d : domains) {
    auto* domain = out->add_domains();
    domain->set_id(d);
    domain->set_name(d);
  }
  return ok_status();
}

}  // namespace

Admin::Admin(Store& store, AdminConfig config)
    : m_store(store), m_config(std::move(config)), m_rng(m_config.seed ^ 0x9e3779b97f4a7c15ull) {}

Status Admin::register_project(const fa::ProjectRegisterRequest& req,
                               fa::ProjectRegisterResponse*) {
  if (!req.has_project()) return missing("project");
  if (req.project().name().empty()) return missing("project_name");
  if (auto st = validate_project(req.project()); !st) return st;
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    fa::Project stored = req.project();
    stored.clear_domains();
    auto st = tx.insert_project(ProjectRow{stored.id(), serialize(stored), stored.state(), 0});
    if (!st && st.error().code == ErrorCode::already_exists) {
      return make_error(ErrorCode::already_exists,
                        "value with matching already exists (duplicate key value violates unique "
                        "constraint \"projects_pkey\")");
    }
    return st;
  });
}

Status Admin::update_project(const fa::Project& req, fa::ProjectUpdateResponse*) {
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    auto row = tx.get_project(req.id());
    if (!row) return row.error();
    if (!row->has_value()) return project_not_found(req.id());
    if (auto st = validate_project(req); !st) return st;
    fa::Project stored;
    if (!parse_blob(&stored, (*row)->blob)) return internal("emulator: corrupt project row");
    // FlyteAdmin writes the model with GORM Updates(struct): empty name/description and unset
    // labels keep their stored values; the state is always written.
    if (!req.name().empty()) stored.set_name(req.name());
    if (!req.description().empty()) stored.set_description(req.description());
    if (req.has_labels()) *stored.mutable_labels() = req.labels();
    stored.set_state(req.state());
    return tx.update_project(ProjectRow{stored.id(), serialize(stored), stored.state(), 0});
  });
}

Status Admin::get_project(const fa::ProjectGetRequest& req, fa::Project* out) {
  if (req.id().empty()) return missing("project_id");
  return in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto row = tx.get_project(req.id());
    if (!row) return row.error();
    if (!row->has_value()) return project_not_found(req.id());
    return project_from_row(**row, m_config.domains, out);
  });
}

Status Admin::list_projects(const fa::ProjectListRequest& req, fa::Projects* out) {
  if (auto st = validate_token(req.token(), "ListProjects"); !st) return st;
  return in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto rows = tx.list_projects();
    if (!rows) return rows.error();
    std::string filters = req.filters();
    // FlyteAdmin hides archived projects unless the caller filters explicitly.
    if (filters.empty()) filters = "neq(state," + std::to_string(fa::Project::ARCHIVED) + ")";
    // project_manager.go ListProjects: without sort_by, alphabetically by identifier.
    fa::Sort by_identifier;
    by_identifier.set_key("identifier");
    by_identifier.set_direction(fa::Sort::ASCENDING);
    auto token = apply_list(
        *rows, filters, req.has_sort_by() ? &req.sort_by() : &by_identifier, req.limit(),
        req.token(), [](const ProjectRow& r, const std::string& f) -> std::optional<std::string> {
          if (f == "state") return std::to_string(r.state);
          if (f == "identifier" || f == "id") return r.id;
          if (f == "created_at") return pad_number(r.seq);
          if (f == "name" || f == "description") {
            fa::Project p;
            p.ParseFromString(r.blob);
            return f == "name" ? p.name() : p.description();
          }
          return std::nullopt;
        });
    if (!token) return token.error();
    for (const auto& r : *rows) {
      if (auto st = project_from_row(r, m_config.domains, out->add_projects()); !st) return st;
    }
    out->set_token(*token);
    return ok_status();
  });
}

// As flyteadmin's VersionManager (pkg/manager/impl/version_manager.go): the control plane's
// Version, Build and BuildTime, which flytestdlib/version fills at link time (BuildTime defaults to
// the process start). The emulator names itself in Build so no client mistakes it for FlyteAdmin.
Status Admin::get_version(const fa::GetVersionRequest&, fa::GetVersionResponse* out) {
  auto* v = out->mutable_control_plane_version();
  v->set_build("flytecd-emulator");
  v->set_version(FLYTECD_VERSION);
  v->set_buildtime(k_started);
  return ok_status();
}

}  // namespace flytecd::sinks::emulator
