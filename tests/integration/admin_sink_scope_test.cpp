// The FlyteAdmin sink never sends a request with an empty project or domain (issue 22):
// FlyteAdmin's GORM lookups drop an empty project from the query, so DeleteProjectAttributes
// {project: ""} would delete that attribute type in every project. Against the emulator over
// real gRPC on loopback: the step fails before any RPC, and both projects keep their rows.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "tests/support/admin_client.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace fa = flyteidl::admin;

TEST_CASE("admin sink: an override step with an empty project is refused before any RPC",
          "[admin-sink][issue22]") {
  auto e = sinks::emulator::Emulator::start({});
  REQUIRE(e.ok());
  auto raw = flytecd_test::admin_stub((*e)->address());
  for (const char* p : {"alpha", "beta"}) {
    flytecd_test::register_project(*raw, p);
    grpc::ClientContext uctx;
    fa::ProjectAttributesUpdateRequest up;
    up.mutable_attributes()->set_project(p);
    up.mutable_attributes()
        ->mutable_matching_attributes()
        ->mutable_execution_queue_attributes()
        ->add_tags("gpu");
    fa::ProjectAttributesUpdateResponse uresp;
    REQUIRE(raw->UpdateProjectAttributes(&uctx, up, &uresp).ok());
  }
  sinks::flyteadmin::AdminConfig cfg;
  cfg.endpoint = (*e)->address();
  cfg.insecure = true;
  auto sink = sinks::flyteadmin::AdminSink::connect(cfg, "test");
  REQUIRE(sink.ok());

  sinks::OverrideState live;
  live.scope = sinks::Scope{"", "", ""};
  live.type = fa::EXECUTION_QUEUE;
  live.value.mutable_execution_queue_attributes()->add_tags("gpu");
  sinks::Step step;
  step.action = sinks::Action::remove;
  step.kind = sinks::ObjectKind::override_attr;
  step.live = sinks::share(live);
  auto st = (*sink)->execute(step);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == ErrorCode::invalid_input);
  CHECK(st.error().message == "flyteadmin: DeleteProjectAttributes: not sent: empty project");
  for (const auto& [method, n] : (*sink)->rpc_counts())
    CHECK(method.rfind("DeleteProjectAttributes", 0) != 0);

  // Registration requests are guarded the same way.
  fa::TaskCreateRequest task;
  task.mutable_id()->set_project("alpha");
  auto created = (*sink)->create_task(task);
  REQUIRE_FALSE(created.ok());
  CHECK(created.error().message == "flyteadmin: CreateTask: not sent: empty id.domain");

  for (const char* p : {"alpha", "beta"}) {
    grpc::ClientContext ctx;
    fa::ProjectAttributesGetRequest get;
    get.set_project(p);
    get.set_resource_type(fa::EXECUTION_QUEUE);
    fa::ProjectAttributesGetResponse resp;
    CHECK(raw->GetProjectAttributes(&ctx, get, &resp).ok());
  }
}

}  // namespace FLYTECD_UNITY_ID
