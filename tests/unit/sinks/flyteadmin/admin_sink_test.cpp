#include <catch2/catch.hpp>

#include "flyteidl/admin/matchable_resource.pb.h"
#include "flyteidl/admin/project.pb.h"
#include "sinks/flyteadmin/admin_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace admin = flyteidl::admin;

TEST_CASE("admin sink: a project renders to FlyteAdmin's message and parses back", "[admin-sink]") {
  sinks::ProjectState p;
  p.id = "flytesnacks";
  p.name = "Flyte snacks";
  p.description = "examples";
  p.labels = {{"team", "ml"}, {"cost-center", "42"}};
  auto msg = sinks::flyteadmin::render_project(p);
  CHECK(msg.id() == "flytesnacks");
  CHECK(msg.name() == "Flyte snacks");
  CHECK(msg.description() == "examples");
  CHECK(msg.labels().values().at("team") == "ml");
  CHECK(msg.state() == admin::Project::ACTIVE);
  CHECK(sinks::flyteadmin::parse_project(msg) == p);
  p.archived = true;
  msg = sinks::flyteadmin::render_project(p);
  CHECK(msg.state() == admin::Project::ARCHIVED);
  CHECK(sinks::flyteadmin::parse_project(msg).archived);
}

TEST_CASE("admin sink: a project read back keeps only id, name, description, labels and state",
          "[admin-sink]") {
  admin::Project msg;
  msg.set_id("p");
  msg.set_name("P");
  msg.add_domains()->set_id("development");  // FlyteAdmin fills the configured domains
  msg.set_state(admin::Project::SYSTEM_GENERATED);
  auto p = sinks::flyteadmin::parse_project(msg);
  CHECK(p.id == "p");
  CHECK(p.name == "P");
  CHECK(p.labels.empty());
  CHECK_FALSE(p.archived);  // SYSTEM_GENERATED is not archived
}

TEST_CASE("admin sink: a ListMatchableAttributes row parses into its scope and value",
          "[admin-sink]") {
  admin::MatchableAttributesConfiguration row;
  row.set_project("p");
  row.set_domain("development");
  row.set_workflow("core.hello");
  row.mutable_attributes()->mutable_execution_queue_attributes()->add_tags("gpu");
  auto o = sinks::flyteadmin::parse_row(row, admin::EXECUTION_QUEUE);
  CHECK(o.scope.project == "p");
  CHECK(o.scope.domain == "development");
  CHECK(o.scope.workflow == "core.hello");
  CHECK(o.type == admin::EXECUTION_QUEUE);
  REQUIRE(o.value.has_execution_queue_attributes());
  CHECK(o.value.execution_queue_attributes().tags(0) == "gpu");
  admin::MatchableAttributesConfiguration project_row;
  project_row.set_project("p");
  auto broad = sinks::flyteadmin::parse_row(project_row, admin::TASK_RESOURCE);
  CHECK(broad.scope.domain.empty());
  CHECK(broad.scope.level() == sinks::Level::project);
}

}  // namespace FLYTECD_UNITY_ID
