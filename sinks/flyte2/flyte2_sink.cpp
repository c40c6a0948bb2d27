#include "sinks/flyte2/flyte2_sink.hpp"

#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>

#include <mutex>

#include "daemon/common/log.hpp"
#include "daemon/common/proto_paths.hpp"
#include "flyteidl2/project/project_service.grpc.pb.h"
#include "flyteidl2/settings/settings_service.grpc.pb.h"
#include "sinks/flyteadmin/channel.hpp"

namespace flytecd::sinks::flyte2 {
namespace settings2 = flyteidl2::settings;
namespace project2 = flyteidl2::project;
namespace pb = google::protobuf;

std::optional<settings2::SettingsKey> settings_key_of(const std::string& object_key) {
  constexpr std::string_view k_prefix = "settings/";
  if (object_key.rfind(k_prefix, 0) != 0) return std::nullopt;
  std::vector<std::string> parts;
  size_t start = k_prefix.size();
  for (size_t slash; (slash = object_key.find('/', start)) != std::string::npos; start = slash + 1)
    parts.push_back(object_key.substr(start, slash - start));
  parts.push_back(object_key.substr(start));
  if (parts.size() != 3 || parts[0].empty()) return std::nullopt;
  settings2::SettingsKey key;
  key.set_org(parts[0]);
  key.set_domain(parts[1]);
  key.set_project(parts[2]);
  return key;
}

void clear_scope_levels(pb::Message& m) {
  const auto* r = m.GetReflection();
  if (const auto* level = m.GetDescriptor()->FindFieldByName("scope_level");
      level && level->enum_type())
    r->ClearField(&m, level);
  std::vector<const pb::FieldDescriptor*> set;
  r->ListFields(m, &set);
  for (const auto* f : set)
    if (f->message_type() && !f->is_repeated()) clear_scope_levels(*r->MutableMessage(&m, f));
}

project2::Project render_project(const ProjectState& p) {
  project2::Project out;
  out.set_id(p.id);
  out.set_name(p.name);
  out.set_description(p.description);
  for (const auto& [k, v] : p.labels) (*out.mutable_labels()->mutable_values())[k] = v;
  out.set_state(p.archived ? project2::PROJECT_STATE_ARCHIVED : project2::PROJECT_STATE_ACTIVE);
  return out;
}

ProjectState parse_project(const project2::Project& p) {
  ProjectState out;
  out.id = p.id();
  out.name = p.name();
  out.description = p.description();
  for (const auto& [k, v] : p.labels().values()) out.labels[k] = v;
  out.archived = p.state() == project2::PROJECT_STATE_ARCHIVED ||
                 p.state() == project2::PROJECT_STATE_SYSTEM_ARCHIVED;
  return out;
}

namespace {

bool empty_settings(const pb::Message& m) {
  std::vector<const pb::FieldDescriptor*> set;
  m.GetReflection()->ListFields(m, &set);
  return set.empty();
}

// What a refused conditional write means for the pass: the record is not what was observed.
Error stale(const std::string& key, const std::string& method, const std::string& code,
            const std::string& message) {
  return Error{ErrorCode::stale, "flyte2: " + method + " " + key + ": " + code + ": " + message +
                                     " (the record changed since it was read: reading it again)"};
}

}  // namespace

struct Flyte2Sink::Impl {
  flyteadmin::AdminConfig cfg;
  std::string label;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<flyteadmin::TokenSource> tokens;
  std::unique_ptr<settings2::SettingsService::Stub> settings_stub;
  std::unique_ptr<project2::ProjectService::Stub> project_stub;
  std::shared_ptr<spdlog::logger> log;
  std::set<std::string> expected;
  mutable std::mutex mu;  // stats and versions
  std::map<std::string, uint64_t> stats;
  // The version of every record the last observe() read (0: the scope has none), by object key;
  // a write moves it to the version the server answered with.
  std::map<std::string, uint64_t> versions;
  // What flytecd last wrote at each key and the version the server gave it, and the fields the
  // server was seen not to keep (its schema is older than the IDL): a record holding exactly
  // what was written, less those fields, is observed as written instead of as drift.
  struct Written {
    uint64_t version = 0;
    std::shared_ptr<const settings2::Settings> value;
  };
  std::map<std::string, Written> written;
  std::set<std::string> unkept;

  // Reads back the record just written at `version`: fields the server did not keep are
  // reported (once each) and remembered.
  void check_kept(const std::string& key, const settings2::Settings& sent, uint64_t version);
  // The observed record at `key`, or what flytecd wrote there when the server holds exactly that
  // less the fields it does not keep.
  std::shared_ptr<settings2::Settings> as_observed(const std::string& key,
                                                   std::shared_ptr<settings2::Settings> stored,
                                                   uint64_t version) const;

  uint64_t version_of(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu);
    auto it = versions.find(key);
    return it == versions.end() ? 0 : it->second;
  }
  void set_version(const std::string& key, uint64_t v) {
    std::lock_guard<std::mutex> lock(mu);
    versions[key] = v;
  }

  // One call (flyteadmin::call_with_retries: deadline, auth, retries of transient failures — a
  // conditional write repeated after an UNAVAILABLE cannot overwrite: if the first one landed,
  // the version moved) and accounting. The gRPC status is returned for the caller to read; a
  // token that cannot be had is UNAUTHENTICATED with its reason.
  template <typename Stub, typename Req, typename Resp>
  grpc::Status call(Stub& target, const char* method, const Req& req, Resp* resp,
                    grpc::Status (Stub::*fn)(grpc::ClientContext*, const Req&, Resp*)) {
    auto out = flyteadmin::call_with_retries(
        cfg, tokens.get(), method,
        [&](grpc::ClientContext& ctx) { return (target.*fn)(&ctx, req, resp); },
        [&](grpc::StatusCode code) {
          std::lock_guard<std::mutex> lock(mu);
          ++stats[std::string(method) + " " + flyteadmin::grpc_code_name(code)];
        },
        *log);
    if (out.auth_error)
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, out.auth_error->message);
    return out.status;
  }

  Error failure(const char* method, const std::string& key, const grpc::Status& st) const {
    return flyteadmin::call_error(cfg, "flyte2: " + std::string(method) + " " + key, st);
  }

  Status write(const std::string& key, const settings2::Settings& value, uint64_t version);
  Status list_projects(State& out);
  Status write_project(const Step& step);
};

// The server hides archived projects from an unfiltered list, so both sets are asked for. Pages
// are sorted by id: without sort_by the server's order is the database's, which moves an updated
// row, so offset paging could skip or repeat a project.
Status Flyte2Sink::Impl::list_projects(State& out) {
  using Stub = project2::ProjectService::Stub;
  for (const char* filter : {"", "eq(state,1)"}) {
    std::string token;
    do {
      project2::ListProjectsRequest req;
      req.set_limit(500);
      req.set_token(token);
      req.set_filters(filter);
      req.mutable_sort_by()->set_key("identifier");
      req.mutable_sort_by()->set_direction(flyteidl2::common::Sort::ASCENDING);
      project2::ListProjectsResponse resp;
      grpc::Status st = call(*project_stub, "ListProjects", req, &resp, &Stub::ListProjects);
      if (!st.ok()) return failure("ListProjects", filter, st);
      for (const auto& p : resp.projects().projects()) out.projects[p.id()] = parse_project(p);
      token = resp.projects().token();
    } while (!token.empty());
  }
  return ok_status();
}

// Create (an id the server already has — created before a crash, or by someone else — is made
// to match with Update), update, or archive: projects carry no version, so a write is the whole
// project as Git declares it.
Status Flyte2Sink::Impl::write_project(const Step& step) {
  using Stub = project2::ProjectService::Stub;
  if (!step.project)
    return make_error(ErrorCode::internal, "flyte2: a project step without a project: " + step.key);
  project2::Project p = render_project(*step.project);
  if (step.action == Action::create) {
    project2::CreateProjectRequest req;
    *req.mutable_project() = p;
    project2::CreateProjectResponse resp;
    grpc::Status st = call(*project_stub, "CreateProject", req, &resp, &Stub::CreateProject);
    if (st.ok()) return ok_status();
    if (st.error_code() != grpc::StatusCode::ALREADY_EXISTS)
      return failure("CreateProject", p.id(), st);
  }
  if (step.action == Action::remove) p.set_state(project2::PROJECT_STATE_ARCHIVED);
  project2::UpdateProjectRequest req;
  *req.mutable_project() = p;
  project2::UpdateProjectResponse resp;
  grpc::Status st = call(*project_stub, "UpdateProject", req, &resp, &Stub::UpdateProject);
  if (st.error_code() == grpc::StatusCode::NOT_FOUND)
    return stale(p.id(), "UpdateProject", "NOT_FOUND", st.error_message());
  if (!st.ok()) return failure("UpdateProject", p.id(), st);
  return ok_status();
}

Flyte2Sink::Flyte2Sink(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Flyte2Sink::~Flyte2Sink() = default;

Result<std::unique_ptr<Flyte2Sink>> Flyte2Sink::connect(const flyteadmin::AdminConfig& cfg,
                                                        std::string label) {
  auto conn = flyteadmin::open_connection(cfg, "flyte2");
  if (!conn) return conn.error();
  auto impl = std::make_unique<Impl>();
  impl->cfg = cfg;
  impl->label = std::move(label);
  impl->channel = conn->channel;
  impl->tokens = std::move(conn->tokens);
  impl->settings_stub = settings2::SettingsService::NewStub(impl->channel);
  impl->project_stub = project2::ProjectService::NewStub(impl->channel);
  impl->log = log::get("flyte2");
  return std::unique_ptr<Flyte2Sink>(new Flyte2Sink(std::move(impl)));
}

Capabilities Flyte2Sink::capabilities() const {
  return Capabilities{.projects = true, .objects = {"settings"}};
}

void Flyte2Sink::expect(const std::set<std::string>& object_keys) {
  m_impl->expected.clear();
  for (const auto& k : object_keys)
    if (settings_key_of(k)) m_impl->expected.insert(k);
}

Result<State> Flyte2Sink::observe() {
  State out;
  if (auto s = m_impl->list_projects(out); !s) return s.error();
  std::map<std::string, uint64_t> versions;
  for (const auto& key : m_impl->expected) {
    settings2::GetSettingsForEditRequest req;
    *req.mutable_key() = *settings_key_of(key);
    settings2::GetSettingsForEditResponse resp;
    grpc::Status st = m_impl->call(*m_impl->settings_stub, "GetSettingsForEdit", req, &resp,
                                   &settings2::SettingsService::Stub::GetSettingsForEdit);
    if (!st.ok()) return m_impl->failure("GetSettingsForEdit", key, st);
    // Broadest first: the requested scope's own record is the last level.
    if (resp.levels_size() == 0)
      return make_error(ErrorCode::internal,
                        "flyte2: GetSettingsForEdit " + key + ": the server answered no level");
    const settings2::SettingsRecord& own = resp.levels(resp.levels_size() - 1);
    versions[key] = own.version();
    if (own.version() == 0 || empty_settings(own.settings())) continue;
    auto value = std::make_shared<settings2::Settings>(own.settings());
    clear_scope_levels(*value);
    value = m_impl->as_observed(key, std::move(value), own.version());
    out.objects[key] = ObjectValue{"settings", std::move(value), nullptr, own.version()};
  }
  std::lock_guard<std::mutex> lock(m_impl->mu);
  m_impl->versions = std::move(versions);
  return out;
}

void Flyte2Sink::Impl::check_kept(const std::string& key, const settings2::Settings& sent,
                                  uint64_t version) {
  settings2::GetSettingsForEditRequest req;
  *req.mutable_key() = *settings_key_of(key);
  settings2::GetSettingsForEditResponse resp;
  grpc::Status st = call(*settings_stub, "GetSettingsForEdit", req, &resp,
                         &settings2::SettingsService::Stub::GetSettingsForEdit);
  // Unreadable, or written again since: nothing can be concluded from it.
  if (!st.ok() || resp.levels_size() == 0) return;
  const settings2::SettingsRecord& own = resp.levels(resp.levels_size() - 1);
  if (own.version() != version) return;
  settings2::Settings stored = own.settings();
  clear_scope_levels(stored);
  std::vector<std::string> fresh;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& path : proto_paths::lost(sent, stored))
      if (unkept.insert(path).second) fresh.push_back(path);
    written[key] = Written{version, std::make_shared<settings2::Settings>(sent)};
  }
  for (const auto& path : fresh)
    log->warn(
        "{}: the server does not keep settings field {} (written to {}, not stored: its schema "
        "is older than flytecd's Flyte 2 IDL); it is left out of the comparison from now on, so "
        "it is not drift, and it has no effect on that server",
        label, path, key);
}

std::shared_ptr<settings2::Settings> Flyte2Sink::Impl::as_observed(
    const std::string& key, std::shared_ptr<settings2::Settings> stored, uint64_t version) const {
  std::lock_guard<std::mutex> lock(mu);
  auto it = written.find(key);
  if (unkept.empty() || it == written.end() || it->second.version != version) return stored;
  settings2::Settings keepable = *it->second.value;
  for (const auto& path : unkept) proto_paths::clear(keepable, path);
  if (!google::protobuf::util::MessageDifferencer::Equals(keepable, *stored)) return stored;
  return std::make_shared<settings2::Settings>(*it->second.value);
}

Status Flyte2Sink::Impl::write(const std::string& key, const settings2::Settings& value,
                               uint64_t version) {
  auto sk = settings_key_of(key);
  if (!sk) return make_error(ErrorCode::invalid_input, "flyte2: not a settings key: " + key);
  if (version == 0) {
    settings2::CreateSettingsRequest req;
    *req.mutable_key() = *sk;
    *req.mutable_settings() = value;
    settings2::CreateSettingsResponse resp;
    grpc::Status st = call(*settings_stub, "CreateSettings", req, &resp,
                           &settings2::SettingsService::Stub::CreateSettings);
    if (st.error_code() == grpc::StatusCode::ALREADY_EXISTS)
      return stale(key, "CreateSettings", "ALREADY_EXISTS", st.error_message());
    if (!st.ok()) return failure("CreateSettings", key, st);
    set_version(key, resp.settingsrecord().version());
    check_kept(key, value, resp.settingsrecord().version());
    return ok_status();
  }
  settings2::UpdateSettingsRequest req;
  *req.mutable_key() = *sk;
  *req.mutable_settings() = value;
  req.set_version(version);
  settings2::UpdateSettingsResponse resp;
  grpc::Status st = call(*settings_stub, "UpdateSettings", req, &resp,
                         &settings2::SettingsService::Stub::UpdateSettings);
  if (st.error_code() == grpc::StatusCode::FAILED_PRECONDITION)
    return stale(key, "UpdateSettings", "FAILED_PRECONDITION", st.error_message());
  if (st.error_code() == grpc::StatusCode::NOT_FOUND)
    return stale(key, "UpdateSettings", "NOT_FOUND", st.error_message());
  if (!st.ok()) return failure("UpdateSettings", key, st);
  set_version(key, resp.settingsrecord().version());
  check_kept(key, value, resp.settingsrecord().version());
  return ok_status();
}

Status Flyte2Sink::execute(const Step& step) {
  if (step.action == Action::adopt) return ok_status();
  if (step.kind == ObjectKind::project) return m_impl->write_project(step);
  if (step.kind != ObjectKind::object || !settings_key_of(step.key))
    return make_error(ErrorCode::internal, "flyte2: cannot execute a step for " + step.key);
  // The version this write is conditional on: the one observed (an empty record left by a
  // removal is observed as absent, but has one).
  const uint64_t version = m_impl->version_of(step.key);
  if (step.action == Action::remove) {
    if (version == 0 || !step.object_live) return ok_status();  // nothing to clear
    return m_impl->write(step.key, settings2::Settings{}, version);
  }
  if (!step.object || !step.object->value)
    return make_error(ErrorCode::internal, "flyte2: a write step without a value: " + step.key);
  const auto* value = dynamic_cast<const settings2::Settings*>(step.object->value.get());
  if (!value)
    return make_error(ErrorCode::internal, "flyte2: " + step.key + " holds a " +
                                               step.object->value->GetDescriptor()->full_name() +
                                               ", not Settings");
  return m_impl->write(step.key, *value, version);
}

std::string Flyte2Sink::describe() const { return m_impl->label; }

uint64_t Flyte2Sink::written_version(const std::string& key) const {
  return m_impl->version_of(key);
}

std::set<std::string> Flyte2Sink::unkept_fields() const {
  std::lock_guard<std::mutex> lock(m_impl->mu);
  return m_impl->unkept;
}

std::map<std::string, uint64_t> Flyte2Sink::rpc_counts() const {
  std::lock_guard<std::mutex> lock(m_impl->mu);
  return m_impl->stats;
}

}  // namespace flytecd::sinks::flyte2
