// Convergence against the emulator's faithful project-domain PLUGIN_OVERRIDE merge (FlyteAdmin
// resource_manager.go createOrMergeUpdateProjectDomainAttributes -> resource_repo.go GetRaw):
// without the planner's delete-then-write, the project-domain row would be merged into the
// older workflow row and never converge.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include "daemon/ledger/ledger.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/pass/apply.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace admin = flyteidl::admin;

namespace {

reconcile::OverrideState plugins(const std::string& d, const std::string& w,
                                 const std::string& task_type) {
  reconcile::OverrideState o;
  o.scope = model::Scope{"flytesnacks", d, w};
  o.type = admin::PLUGIN_OVERRIDE;
  auto* po = o.value.mutable_plugin_overrides()->add_overrides();
  po->set_task_type(task_type);
  po->add_plugin_id(task_type + "-plugin");
  return o;
}

}  // namespace

TEST_CASE(
    "reconcile: a project-domain plugin override added beside an existing workflow row "
    "converges against FlyteAdmin's merge quirk",
    "[integration][reconcile][plugin_merge]") {
  auto e = sinks::emulator::Emulator::start({});
  REQUIRE(e.ok());
  auto emu = std::move(*e);
  sinks::flyteadmin::AdminConfig cfg;
  cfg.endpoint = emu->address();
  cfg.insecure = true;
  cfg.per_rpc_timeout_ms = 5000;
  auto sink = sinks::flyteadmin::AdminSink::connect(cfg, "test");
  REQUIRE(sink.ok());
  auto ledger = ledger::Ledger::open(":memory:");
  REQUIRE(ledger.ok());
  auto raw = flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel(emu->address(), grpc::InsecureChannelCredentials()));

  reconcile::State desired;
  desired.projects["flytesnacks"] =
      reconcile::ProjectState{"flytesnacks", "Flyte snacks", "", {}, false};
  const auto wf = plugins("development", "wf", "ray");
  desired.overrides[reconcile::override_key(wf.scope, wf.type)] = wf;
  auto apply = [&] {
    pass::ApplyOptions o;
    o.revision = "test";
    return pass::apply(**sink, **ledger, desired, o);
  };
  auto first = apply();
  INFO(first.error);
  REQUIRE(first.ok());

  // The next revision adds a project-domain row (and a second workflow row) in the same
  // (project, domain): the workflow row is the older one in FlyteAdmin's table.
  const auto pd = plugins("development", "", "spark");
  const auto wf2 = plugins("development", "wf2", "dask");
  desired.overrides[reconcile::override_key(pd.scope, pd.type)] = pd;
  desired.overrides[reconcile::override_key(wf2.scope, wf2.type)] = wf2;
  auto second = apply();
  INFO(second.error << " rounds " << second.rounds);
  REQUIRE(second.ok());
  CHECK(second.rounds == 2);  // one round of writes, then an observation with nothing to do

  grpc::ClientContext ctx;
  admin::ListMatchableAttributesRequest req;
  req.set_resource_type(admin::PLUGIN_OVERRIDE);
  admin::ListMatchableAttributesResponse rows;
  REQUIRE(raw->ListMatchableAttributes(&ctx, req, &rows).ok());
  std::map<std::string, std::string> live;
  for (const auto& row : rows.configurations())
    live[row.workflow()] = model::canonical_bytes(row.attributes());
  REQUIRE(live.size() == 3);
  CHECK(live.at("") == model::canonical_bytes(pd.value));
  CHECK(live.at("wf") == model::canonical_bytes(wf.value));
  CHECK(live.at("wf2") == model::canonical_bytes(wf2.value));

  auto third = apply();
  REQUIRE(third.ok());
  CHECK(third.first_plan.steps.empty());
}

}  // namespace FLYTECD_UNITY_ID
