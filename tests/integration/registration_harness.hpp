#pragma once

// What the registration integration tests share: the real pyflyte archives, and a harness with the
// FlyteAdmin emulator over real gRPC on loopback, flytecd's sink and ledger, and a raw client (live
// state is read back through it, not through flytecd's own view).

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "daemon/ledger/ledger.hpp"
#include "daemon/pass/pass.hpp"
#include "daemon/registration/package.hpp"
#include "daemon/registration/registrar.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "test_paths.hpp"
#include "tests/support/admin_client.hpp"

namespace registration_test {

using namespace flytecd;
namespace fs = std::filesystem;
namespace fa = flyteidl::admin;
namespace fc = flyteidl::core;

inline fs::path fixtures() {
  fs::path p = "/work/shared/fixtures/flyte-packages";
  if (fs::exists(p)) return p;
  return fs::path(FLYTECD_SOURCE_DIR) / ".." / "shared" / "fixtures" / "flyte-packages";
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline const std::vector<std::string> k_entity_writes = {"CreateTask", "CreateWorkflow",
                                                         "CreateLaunchPlan", "UpdateLaunchPlan"};

struct Harness {
  fs::path dir;
  std::unique_ptr<sinks::emulator::Emulator> emu;
  std::unique_ptr<sinks::flyteadmin::AdminSink> sink;
  std::unique_ptr<ledger::Ledger> ledger;
  std::unique_ptr<flyteidl::service::AdminService::Stub> raw;
  std::unique_ptr<registration::DefaultPackageResolver> packages;

  Harness() {
    dir = fs::temp_directory_path() /
          ("flytecd-reg-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::remove_all(dir);
    fs::create_directories(dir / "repo" / "packages");
    for (const auto& f : {"valid-register.tgz", "flyte-package.tgz", "flytesnacks-core.tgz",
                          "valid-fast-register.tgz", "invalid-fast.tgz"})
      fs::copy_file(fixtures() / f, dir / "repo" / "packages" / f);
    auto e = sinks::emulator::Emulator::start({});
    REQUIRE(e.ok());
    emu = std::move(*e);
    sinks::flyteadmin::AdminConfig cfg;
    cfg.endpoint = emu->address();
    cfg.insecure = true;
    cfg.per_rpc_timeout_ms = 10000;
    auto s = sinks::flyteadmin::AdminSink::connect(cfg, "test");
    REQUIRE(s.ok());
    sink = std::move(*s);
    raw = flytecd_test::admin_stub(emu->address());
    auto l = ledger::Ledger::open((dir / "ledger.db").string());
    REQUIRE(l.ok());
    ledger = std::move(*l);
    sources::oci::FetchOptions fo;
    fo.cache_dir = dir / "cache";
    fo.max_attempts = 1;
    fo.connect_timeout = std::chrono::milliseconds(500);
    packages = std::make_unique<registration::DefaultPackageResolver>(
        fo, "", registration::directory_reader((dir / "repo").string()));
    for (const char* p : {"flytesnacks", "ml"}) flytecd_test::register_project(*raw, p);
  }
  ~Harness() {
    emu.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
  uint64_t entity_writes() const {
    uint64_t n = 0;
    for (const auto& m : k_entity_writes) n += emu->calls(m);
    return n;
  }
  registration::RegistrationReport run(const std::vector<model::Registration>& regs,
                                       bool self_heal = true, bool prune = true) {
    registration::RegistrarOptions o;
    o.revision = "test";
    o.self_heal = self_heal;
    o.prune = prune;
    o.parallelism = 4;
    return registration::reconcile_registrations(regs, *sink, *packages, *ledger, o);
  }
  std::map<std::string, std::string> active(const std::string& project, const std::string& domain) {
    grpc::ClientContext ctx;
    fa::ActiveLaunchPlanListRequest req;
    req.set_project(project);
    req.set_domain(domain);
    req.set_limit(1000);
    fa::LaunchPlanList resp;
    REQUIRE(raw->ListActiveLaunchPlans(&ctx, req, &resp).ok());
    std::map<std::string, std::string> out;
    for (const auto& lp : resp.launch_plans()) out[lp.id().name()] = lp.id().version();
    return out;
  }
  template <typename List, typename Fn>
  List list(Fn fn, const std::string& project, const std::string& domain) {
    grpc::ClientContext ctx;
    fa::ResourceListRequest req;
    req.mutable_id()->set_project(project);
    req.mutable_id()->set_domain(domain);
    req.set_limit(1000);
    List resp;
    auto st = ((*raw).*fn)(&ctx, req, &resp);
    REQUIRE(st.ok());
    return resp;
  }
};

inline model::Registration reg(const std::string& name, const std::string& project,
                               const std::string& domain, const std::string& version,
                               const std::string& package,
                               model::Activate activate = model::Activate::all) {
  model::Registration r;
  r.name = name;
  r.project = project;
  r.domain = domain;
  r.version = version;
  r.package = package;
  r.activate = activate;
  r.source_kind = "WorkflowRegistration";
  r.where = model::Location{"registrations.yaml", 1, 1};
  return r;
}

inline const registration::RegistrationOutcome& item(const registration::RegistrationReport& rep,
                                                     const std::string& name) {
  for (const auto& i : rep.items)
    if (i.name == name) return i;
  FAIL("no outcome for " << name);
  return rep.items.front();
}

// Every identifier reachable from a workflow template: node references, sub-workflows.
inline void collect_ids(const fc::Node& n, std::vector<const fc::Identifier*>& out) {
  if (n.has_task_node()) out.push_back(&n.task_node().reference_id());
  if (n.has_workflow_node()) {
    if (n.workflow_node().has_sub_workflow_ref())
      out.push_back(&n.workflow_node().sub_workflow_ref());
    if (n.workflow_node().has_launchplan_ref()) out.push_back(&n.workflow_node().launchplan_ref());
  }
  if (n.has_branch_node()) {
    const auto& ie = n.branch_node().if_else();
    collect_ids(ie.case_().then_node(), out);
    for (const auto& o : ie.other()) collect_ids(o.then_node(), out);
    if (ie.has_else_node()) collect_ids(ie.else_node(), out);
  }
  if (n.has_array_node()) collect_ids(n.array_node().node(), out);
}
inline void collect_ids(const fc::WorkflowTemplate& t, std::vector<const fc::Identifier*>& out) {
  out.push_back(&t.id());
  for (const auto& n : t.nodes()) collect_ids(n, out);
  if (t.has_failure_node()) collect_ids(t.failure_node(), out);
}

}  // namespace registration_test
