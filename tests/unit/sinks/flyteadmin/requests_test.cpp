#include "sinks/flyteadmin/requests.hpp"

#include <catch2/catch.hpp>

#include "flyteidl/admin/common.pb.h"
#include "flyteidl/admin/launch_plan.pb.h"
#include "flyteidl/admin/project.pb.h"

#include <string>
#include <variant>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace admin = flyteidl::admin;
using sinks::flyteadmin::OverrideRequest;
using sinks::flyteadmin::render_override_delete;
using sinks::flyteadmin::render_override_step;
using sinks::flyteadmin::render_override_update;
using sinks::flyteadmin::rpc_name;

namespace {

sinks::OverrideState cluster_override(const std::string& project, const std::string& domain,
                                      const std::string& workflow) {
  sinks::OverrideState o;
  o.scope = sinks::Scope{project, domain, workflow};
  o.type = admin::CLUSTER_RESOURCE;
  (*o.value.mutable_cluster_resource_attributes()->mutable_attributes())["projectQuotaCpu"] = "8";
  return o;
}

sinks::OverrideState queue_override(const std::string& project, const std::string& domain,
                                    const std::string& workflow) {
  sinks::OverrideState o;
  o.scope = sinks::Scope{project, domain, workflow};
  o.type = admin::EXECUTION_QUEUE;
  o.value.mutable_execution_queue_attributes()->add_tags("gpu");
  return o;
}

bool same(const admin::MatchingAttributes& a, const admin::MatchingAttributes& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

}  // namespace

TEST_CASE("admin requests: a project-level override updates with UpdateProjectAttributes",
          "[admin-requests]") {
  auto o = cluster_override("flytesnacks", "", "");
  OverrideRequest req = render_override_update(o);
  CHECK(rpc_name(req) == "UpdateProjectAttributes");
  const auto* msg = std::get_if<admin::ProjectAttributesUpdateRequest>(&req);
  REQUIRE(msg != nullptr);
  CHECK(msg->attributes().project() == "flytesnacks");
  CHECK(msg->attributes().matching_attributes().cluster_resource_attributes().attributes().at(
            "projectQuotaCpu") == "8");
  CHECK(same(msg->attributes().matching_attributes(), o.value));
}

TEST_CASE("admin requests: a project-domain override updates with UpdateProjectDomainAttributes",
          "[admin-requests]") {
  auto o = queue_override("flytesnacks", "development", "");
  OverrideRequest req = render_override_update(o);
  CHECK(rpc_name(req) == "UpdateProjectDomainAttributes");
  const auto* msg = std::get_if<admin::ProjectDomainAttributesUpdateRequest>(&req);
  REQUIRE(msg != nullptr);
  CHECK(msg->attributes().project() == "flytesnacks");
  CHECK(msg->attributes().domain() == "development");
  REQUIRE(msg->attributes().matching_attributes().execution_queue_attributes().tags_size() == 1);
  CHECK(msg->attributes().matching_attributes().execution_queue_attributes().tags(0) == "gpu");
  CHECK(same(msg->attributes().matching_attributes(), o.value));
}

TEST_CASE("admin requests: a workflow override updates with UpdateWorkflowAttributes",
          "[admin-requests]") {
  auto o = cluster_override("flytesnacks", "production", "core.hello");
  OverrideRequest req = render_override_update(o);
  CHECK(rpc_name(req) == "UpdateWorkflowAttributes");
  const auto* msg = std::get_if<admin::WorkflowAttributesUpdateRequest>(&req);
  REQUIRE(msg != nullptr);
  CHECK(msg->attributes().project() == "flytesnacks");
  CHECK(msg->attributes().domain() == "production");
  CHECK(msg->attributes().workflow() == "core.hello");
  CHECK(same(msg->attributes().matching_attributes(), o.value));
}

TEST_CASE("admin requests: deletes name the scope and resource type at every level",
          "[admin-requests]") {
  SECTION("project") {
    OverrideRequest req = render_override_delete(cluster_override("p", "", ""));
    CHECK(rpc_name(req) == "DeleteProjectAttributes");
    const auto* msg = std::get_if<admin::ProjectAttributesDeleteRequest>(&req);
    REQUIRE(msg != nullptr);
    CHECK(msg->project() == "p");
    CHECK(msg->resource_type() == admin::CLUSTER_RESOURCE);
  }
  SECTION("project-domain") {
    OverrideRequest req = render_override_delete(queue_override("p", "staging", ""));
    CHECK(rpc_name(req) == "DeleteProjectDomainAttributes");
    const auto* msg = std::get_if<admin::ProjectDomainAttributesDeleteRequest>(&req);
    REQUIRE(msg != nullptr);
    CHECK(msg->project() == "p");
    CHECK(msg->domain() == "staging");
    CHECK(msg->resource_type() == admin::EXECUTION_QUEUE);
  }
  SECTION("workflow") {
    OverrideRequest req = render_override_delete(queue_override("p", "staging", "wf.main"));
    CHECK(rpc_name(req) == "DeleteWorkflowAttributes");
    const auto* msg = std::get_if<admin::WorkflowAttributesDeleteRequest>(&req);
    REQUIRE(msg != nullptr);
    CHECK(msg->project() == "p");
    CHECK(msg->domain() == "staging");
    CHECK(msg->workflow() == "wf.main");
    CHECK(msg->resource_type() == admin::EXECUTION_QUEUE);
  }
}

TEST_CASE("admin requests: a step renders the RPCs it sends, in order", "[admin-requests]") {
  sinks::Step step;
  step.kind = sinks::ObjectKind::override_attr;
  auto desired = cluster_override("p", "development", "");
  auto live = cluster_override("p", "development", "");
  (*live.value.mutable_cluster_resource_attributes()->mutable_attributes())["projectQuotaCpu"] =
      "4";
  step.desired = flytecd::sinks::share(desired);
  step.live = flytecd::sinks::share(live);

  SECTION("create and update write the desired value") {
    for (auto action : {sinks::Action::create, sinks::Action::update}) {
      step.action = action;
      auto reqs = render_override_step(step);
      REQUIRE(reqs.size() == 1);
      CHECK(rpc_name(reqs[0]) == "UpdateProjectDomainAttributes");
      const auto& msg = std::get<admin::ProjectDomainAttributesUpdateRequest>(reqs[0]);
      CHECK(same(msg.attributes().matching_attributes(), desired.value));
    }
  }
  SECTION("remove deletes the live row, or sends nothing when none is live") {
    step.action = sinks::Action::remove;
    step.desired.reset();
    auto reqs = render_override_step(step);
    REQUIRE(reqs.size() == 1);
    CHECK(rpc_name(reqs[0]) == "DeleteProjectDomainAttributes");
    CHECK(std::get<admin::ProjectDomainAttributesDeleteRequest>(reqs[0]).resource_type() ==
          admin::CLUSTER_RESOURCE);
    step.live.reset();
    CHECK(render_override_step(step).empty());
  }
  SECTION("replace deletes the live row, then writes the desired value") {
    step.action = sinks::Action::replace;
    auto reqs = render_override_step(step);
    REQUIRE(reqs.size() == 2);
    CHECK(rpc_name(reqs[0]) == "DeleteProjectDomainAttributes");
    CHECK(rpc_name(reqs[1]) == "UpdateProjectDomainAttributes");
    const auto& msg = std::get<admin::ProjectDomainAttributesUpdateRequest>(reqs[1]);
    CHECK(same(msg.attributes().matching_attributes(), desired.value));
    CHECK(static_cast<int>(reqs.size()) == step.rpc_count());
  }
  SECTION("adopt sends nothing") {
    step.action = sinks::Action::adopt;
    CHECK(render_override_step(step).empty());
  }
  SECTION("a project step is not an override step") {
    step.kind = sinks::ObjectKind::project;
    step.action = sinks::Action::create;
    CHECK(render_override_step(step).empty());
  }
}

// FlyteAdmin reads an empty project as "any" (GORM drops zero values from a struct query), so
// DeleteProjectAttributes{project: ""} would delete that attribute type in every project.
TEST_CASE("admin requests: a request with an empty project or domain is never sendable",
          "[admin-requests][issue22]") {
  using sinks::flyteadmin::empty_scope;
  for (const auto& o :
       {cluster_override("flytesnacks", "", ""), queue_override("flytesnacks", "development", ""),
        queue_override("flytesnacks", "development", "wf")}) {
    for (const auto& req : {render_override_update(o), render_override_delete(o)})
      std::visit([](const auto& r) { CHECK_FALSE(empty_scope(r)); }, req);
  }
  auto why = [](const OverrideRequest& req) {
    return std::visit([](const auto& r) { return empty_scope(r).value_or("sendable"); }, req);
  };
  CHECK(why(render_override_delete(cluster_override("", "", ""))) == "empty project");
  CHECK(why(render_override_update(cluster_override("", "", ""))) == "empty attributes.project");
  // A workflow-level scope without a domain.
  CHECK(why(render_override_delete(queue_override("flytesnacks", "", "wf"))) == "empty domain");
  // Entity, list and project requests.
  admin::ObjectGetRequest get;
  get.mutable_id()->set_project("flytesnacks");
  CHECK(empty_scope(get).value_or("") == "empty id.domain");
  admin::ActiveLaunchPlanListRequest list;
  list.set_domain("development");
  CHECK(empty_scope(list).value_or("") == "empty project");
  admin::ProjectRegisterRequest reg;
  CHECK(empty_scope(reg).value_or("") == "empty project id");
  admin::Project project;
  CHECK(empty_scope(project).value_or("") == "empty project id");
  project.set_id("flytesnacks");
  CHECK_FALSE(empty_scope(project));
  CHECK_FALSE(empty_scope(admin::ProjectListRequest()));
}

// The apply's typed check answers as the reflective one, for every override request.
TEST_CASE("admin requests: the typed override check gives empty_scope's answer",
          "[admin-requests]") {
  using sinks::flyteadmin::empty_override_scope;
  using sinks::flyteadmin::empty_scope;
  int refused = 0;
  for (const char* p : {"", "flytesnacks"})
    for (const char* d : {"", "development"})
      for (const char* w : {"", "wf"})
        for (const auto& o : {cluster_override(p, d, w), queue_override(p, d, w)})
          for (const auto& req : {render_override_update(o), render_override_delete(o)}) {
            const auto typed = empty_override_scope(req);
            const auto reflective = std::visit([](const auto& r) { return empty_scope(r); }, req);
            INFO(p << "/" << d << "/" << w << " " << sinks::flyteadmin::rpc_name(req));
            CHECK(typed == reflective);
            refused += typed.has_value();
          }
  CHECK(refused == 20);  // of 32: the 16 without a project, the 4 of a workflow without a domain
}

}  // namespace FLYTECD_UNITY_ID
