#include "sinks/emulator/flyte2_service.hpp"

#include <grpcpp/grpcpp.h>

#include <string>

#include "flyteidl2/project/project_service.grpc.pb.h"
#include "flyteidl2/settings/settings_service.grpc.pb.h"
#include "sinks/emulator/call_gate.hpp"

namespace flytecd::sinks::emulator {
namespace {

grpc::StatusCode flyte2_code(ErrorCode code) {
  // A stale version: the repository's ErrSettingsVersionConflict, returned as FailedPrecondition.
  if (code == ErrorCode::conflict) return grpc::StatusCode::FAILED_PRECONDITION;
  return flyteadmin_code(code);
}

using GStatus = grpc::Status;
using grpc::ServerContext;

class SettingsServiceImpl final : public settings2::SettingsService::Service {
 public:
  SettingsServiceImpl(Flyte2Settings& settings, CallGate& gate)
      : m_settings(settings), m_gate(gate) {}

  GStatus GetSettings(ServerContext* ctx, const settings2::GetSettingsRequest*,
                      settings2::GetSettingsResponse*) override {
    GStatus st = m_gate.run(ctx, "GetSettings", [] { return ok_status(); });
    if (!st.ok()) return st;
    return GStatus(grpc::StatusCode::UNIMPLEMENTED,
                   "settings resolution engine not implemented yet");
  }
  GStatus GetSettingsForEdit(ServerContext* ctx, const settings2::GetSettingsForEditRequest* req,
                             settings2::GetSettingsForEditResponse* resp) override {
    return m_gate.run(ctx, "GetSettingsForEdit",
                      [&] { return m_settings.get_for_edit(*req, resp); });
  }
  GStatus CreateSettings(ServerContext* ctx, const settings2::CreateSettingsRequest* req,
                         settings2::CreateSettingsResponse* resp) override {
    return m_gate.run(ctx, "CreateSettings", [&] { return m_settings.create(*req, resp); });
  }
  GStatus UpdateSettings(ServerContext* ctx, const settings2::UpdateSettingsRequest* req,
                         settings2::UpdateSettingsResponse* resp) override {
    return m_gate.run(ctx, "UpdateSettings", [&] { return m_settings.update(*req, resp); });
  }

 private:
  Flyte2Settings& m_settings;
  CallGate& m_gate;
};

class ProjectServiceImpl final : public project2::ProjectService::Service {
 public:
  ProjectServiceImpl(Flyte2Projects& projects, CallGate& gate)
      : m_projects(projects), m_gate(gate) {}

  GStatus CreateProject(ServerContext* ctx, const project2::CreateProjectRequest* req,
                        project2::CreateProjectResponse*) override {
    return m_gate.run(ctx, "CreateProject", [&] { return m_projects.create(*req); });
  }
  GStatus UpdateProject(ServerContext* ctx, const project2::UpdateProjectRequest* req,
                        project2::UpdateProjectResponse*) override {
    return m_gate.run(ctx, "UpdateProject", [&] { return m_projects.update(*req); });
  }
  GStatus GetProject(ServerContext* ctx, const project2::GetProjectRequest* req,
                     project2::GetProjectResponse* resp) override {
    return m_gate.run(ctx, "GetProject", [&] { return m_projects.get(*req, resp); });
  }
  GStatus ListProjects(ServerContext* ctx, const project2::ListProjectsRequest* req,
                       project2::ListProjectsResponse* resp) override {
    return m_gate.run(ctx, "ListProjects", [&] { return m_projects.list(*req, resp); });
  }

 private:
  Flyte2Projects& m_projects;
  CallGate& m_gate;
};

}  // namespace

struct Flyte2Frontend::Impl {
  Impl(Flyte2Settings& settings, Flyte2Projects& projects, FaultInjector& faults,
       std::shared_ptr<spdlog::logger> log)
      : gate(faults, std::move(log), flyte2_code),
        service(settings, gate),
        project_service(projects, gate) {}
  CallGate gate;
  SettingsServiceImpl service;
  ProjectServiceImpl project_service;
};

Flyte2Frontend::Flyte2Frontend(Flyte2Settings& settings, Flyte2Projects& projects,
                               FaultInjector& faults, std::shared_ptr<spdlog::logger> log)
    : m_impl(std::make_unique<Impl>(settings, projects, faults, std::move(log))) {}
Flyte2Frontend::~Flyte2Frontend() = default;
void Flyte2Frontend::register_with(grpc::ServerBuilder& builder) {
  builder.RegisterService(&m_impl->service);
  builder.RegisterService(&m_impl->project_service);
}
void Flyte2Frontend::set_log(std::shared_ptr<spdlog::logger> log) {
  m_impl->gate.set_log(std::move(log));
}
uint64_t Flyte2Frontend::calls(const std::string& method) const {
  return m_impl->gate.calls(method);
}

}  // namespace flytecd::sinks::emulator
