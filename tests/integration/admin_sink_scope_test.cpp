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

TEST_CASE("admin sink: a version FlyteAdmin's filter syntax cannot carry is refused before any RPC",
          "[admin-sink]") {
  // `value_in(version,a;b)` would ask about versions a and b, not "a;b".
  auto e = sinks::emulator::Emulator::start({});
  REQUIRE(e.ok());
  flytecd_test::register_project(*flytecd_test::admin_stub((*e)->address()), "alpha");
  sinks::flyteadmin::AdminConfig cfg;
  cfg.endpoint = (*e)->address();
  cfg.insecure = true;
  auto sink = sinks::flyteadmin::AdminSink::connect(cfg, "test");
  REQUIRE(sink.ok());
  for (const std::vector<std::string>& versions :
       {std::vector<std::string>{"v1", "a;b"}, {"1.0+build"}, {"v1)"}, {""}}) {
    auto held = (*sink)->launch_plans_at("alpha", "development", versions);
    REQUIRE_FALSE(held.ok());
    CHECK(held.error().code == ErrorCode::invalid_input);
    CHECK_THAT(held.error().message,
               Catch::StartsWith("flyteadmin: ListLaunchPlans: not sent: version '"));
  }
  CHECK((*e)->calls("ListLaunchPlans") == 0);
  auto fine = (*sink)->launch_plans_at("alpha", "development", {"v1", "v2.0_rc-1~x"});
  REQUIRE(fine.ok());
  CHECK(fine->empty());
  CHECK((*e)->calls("ListLaunchPlans") == 1);
}

}  // namespace FLYTECD_UNITY_ID
