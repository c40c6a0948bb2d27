#pragma once

// What the emulator tests share: an emulator on 127.0.0.1:0 with AdminService and DataProxy stubs
// (every call with a deadline), a peer with project flytesnacks, and request builders.

#include <arpa/inet.h>
#include <curl/curl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"

namespace emulator_test {

namespace fa = flyteidl::admin;
namespace fc = flyteidl::core;
namespace fs = flyteidl::service;
using flytecd::sinks::emulator::Emulator;
using flytecd::sinks::emulator::Options;

// One emulator plus stubs; every call has a deadline.
struct Peer {
  explicit Peer(const Options& options = {}) {
    auto started = Emulator::start(options);
    if (!started) FAIL(started.error().message);
    emu = std::move(*started);
    auto channel = grpc::CreateChannel(emu->address(), grpc::InsecureChannelCredentials());
    admin = fs::AdminService::NewStub(channel);
    proxy = fs::DataProxyService::NewStub(channel);
  }

  template <typename Stub, typename Req, typename Resp>
  static grpc::Status call(Stub& stub,
                           grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                           const Req& req, Resp* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return (stub.*method)(&ctx, req, resp);
  }
  template <typename Req, typename Resp>
  grpc::Status rpc(grpc::Status (fs::AdminService::Stub::*method)(grpc::ClientContext*, const Req&,
                                                                  Resp*),
                   const Req& req, Resp* resp = nullptr) {
    Resp local;
    return call(*admin, method, req, resp ? resp : &local);
  }

  std::unique_ptr<Emulator> emu;
  std::unique_ptr<fs::AdminService::Stub> admin;
  std::unique_ptr<fs::DataProxyService::Stub> proxy;
};

using S = fs::AdminService::Stub;

inline grpc::Status register_project(Peer& peer, const std::string& id) {
  fa::ProjectRegisterRequest req;
  req.mutable_project()->set_id(id);
  req.mutable_project()->set_name(id + " project");
  return peer.rpc(&S::RegisterProject, req);
}

inline fa::MatchingAttributes task_resources(const std::string& cpu) {
  fa::MatchingAttributes m;
  m.mutable_task_resource_attributes()->mutable_defaults()->set_cpu(cpu);
  return m;
}

inline fa::MatchingAttributes queue(const std::string& tag) {
  fa::MatchingAttributes m;
  m.mutable_execution_queue_attributes()->add_tags(tag);
  return m;
}

inline grpc::Status set_project_attrs(Peer& peer, const std::string& p,
                                      const fa::MatchingAttributes& m) {
  fa::ProjectAttributesUpdateRequest req;
  req.mutable_attributes()->set_project(p);
  *req.mutable_attributes()->mutable_matching_attributes() = m;
  return peer.rpc(&S::UpdateProjectAttributes, req);
}

inline grpc::Status set_domain_attrs(Peer& peer, const std::string& p, const std::string& d,
                                     const fa::MatchingAttributes& m) {
  fa::ProjectDomainAttributesUpdateRequest req;
  req.mutable_attributes()->set_project(p);
  req.mutable_attributes()->set_domain(d);
  *req.mutable_attributes()->mutable_matching_attributes() = m;
  return peer.rpc(&S::UpdateProjectDomainAttributes, req);
}

inline grpc::Status set_workflow_attrs(Peer& peer, const std::string& p, const std::string& d,
                                       const std::string& wf, const fa::MatchingAttributes& m) {
  fa::WorkflowAttributesUpdateRequest req;
  req.mutable_attributes()->set_project(p);
  req.mutable_attributes()->set_domain(d);
  req.mutable_attributes()->set_workflow(wf);
  *req.mutable_attributes()->mutable_matching_attributes() = m;
  return peer.rpc(&S::UpdateWorkflowAttributes, req);
}

inline grpc::Status get_workflow_attrs(Peer& peer, const std::string& p, const std::string& d,
                                       const std::string& wf, fa::MatchableResource type,
                                       fa::WorkflowAttributesGetResponse* out) {
  fa::WorkflowAttributesGetRequest req;
  req.set_project(p);
  req.set_domain(d);
  req.set_workflow(wf);
  req.set_resource_type(type);
  return peer.rpc(&S::GetWorkflowAttributes, req, out);
}

inline fa::ListMatchableAttributesResponse list_attrs(Peer& peer, fa::MatchableResource type) {
  fa::ListMatchableAttributesRequest req;
  req.set_resource_type(type);
  fa::ListMatchableAttributesResponse out;
  REQUIRE(peer.rpc(&S::ListMatchableAttributes, req, &out).ok());
  return out;
}

inline fc::Identifier ident(fc::ResourceType type, const std::string& name,
                            const std::string& version, const std::string& project = "flytesnacks",
                            const std::string& domain = "development") {
  fc::Identifier id;
  id.set_resource_type(type);
  id.set_project(project);
  id.set_domain(domain);
  id.set_name(name);
  id.set_version(version);
  return id;
}

inline fa::TaskCreateRequest task(const std::string& name, const std::string& version,
                                  const std::string& image = "ghcr.io/flyteorg/flytekit:py3.11") {
  fa::TaskCreateRequest req;
  *req.mutable_id() = ident(fc::TASK, name, version);
  auto* t = req.mutable_spec()->mutable_template_();
  *t->mutable_id() = req.id();
  t->set_type("python-task");
  t->mutable_metadata()->mutable_runtime()->set_version("1.10.0");
  t->mutable_interface();
  t->mutable_container()->set_image(image);
  t->mutable_container()->add_args("pyflyte-execute");
  return req;
}

inline fc::Node task_node(const std::string& id, const fc::Identifier& task_id) {
  fc::Node n;
  n.set_id(id);
  *n.mutable_task_node()->mutable_reference_id() = task_id;
  return n;
}

inline fa::WorkflowCreateRequest workflow(const std::string& name, const std::string& version,
                                          const std::vector<fc::Identifier>& tasks) {
  fa::WorkflowCreateRequest req;
  *req.mutable_id() = ident(fc::WORKFLOW, name, version);
  auto* t = req.mutable_spec()->mutable_template_();
  *t->mutable_id() = req.id();
  int i = 0;
  for (const auto& tid : tasks) *t->add_nodes() = task_node("n" + std::to_string(i++), tid);
  if (tasks.empty()) {  // FlyteAdmin's compiler refuses a workflow without nodes
    auto* wait = t->add_nodes();
    wait->set_id("wait");
    wait->mutable_gate_node()->mutable_sleep()->mutable_duration()->set_seconds(1);
  }
  return req;
}

inline fa::LaunchPlanCreateRequest launch_plan(const std::string& name, const std::string& version,
                                               const fc::Identifier& wf) {
  fa::LaunchPlanCreateRequest req;
  *req.mutable_id() = ident(fc::LAUNCH_PLAN, name, version);
  *req.mutable_spec()->mutable_workflow_id() = wf;
  return req;
}

// A peer with project flytesnacks registered.
struct Seeded : Peer {
  explicit Seeded(const Options& o = {}) : Peer(o) {
    REQUIRE(register_project(*this, "flytesnacks").ok());
  }
};

inline std::string temp_path(const std::string& stem) {
  static std::atomic<int> counter{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("flytecd-emu-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  return (dir / stem).string();
}

}  // namespace emulator_test
