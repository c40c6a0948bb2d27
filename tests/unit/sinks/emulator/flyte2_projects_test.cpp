// The Flyte 2 emulator's ProjectService, over real gRPC on 127.0.0.1:0: each case is a behaviour
// of flyteorg/flyte main's runs/service/project_service.go over runs/repository/impl/project.go
// (and runs/setup.go's default project, the schema's VARCHAR(300) description).

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "flyteidl2/project/project_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "tests/unit/sinks/emulator/flyte2_peer.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

namespace fp = flyteidl2::project;
using flytecd::sinks::emulator::Emulator;
using flytecd::sinks::emulator::Options;

struct ProjectPeer : flytecd_test::Flyte2Emulator<fp::ProjectService> {
  using Flyte2Emulator::Flyte2Emulator;
  grpc::Status create(const fp::Project& p) {
    fp::CreateProjectRequest req;
    *req.mutable_project() = p;
    fp::CreateProjectResponse resp;
    return call(&fp::ProjectService::Stub::CreateProject, req, &resp);
  }
  grpc::Status update(const fp::Project& p) {
    fp::UpdateProjectRequest req;
    *req.mutable_project() = p;
    fp::UpdateProjectResponse resp;
    return call(&fp::ProjectService::Stub::UpdateProject, req, &resp);
  }
  grpc::Status get(const std::string& id, fp::Project* out = nullptr) {
    fp::GetProjectRequest req;
    req.set_id(id);
    fp::GetProjectResponse resp;
    auto s = call(&fp::ProjectService::Stub::GetProject, req, &resp);
    if (out) *out = resp.project();
    return s;
  }
  // The ids of one page, and its token.
  grpc::Status list(const std::string& filters, std::vector<std::string>* ids,
                    std::string* token = nullptr, uint32_t limit = 0, const std::string& from = "",
                    const std::string& sort_key = "") {
    fp::ListProjectsRequest req;
    req.set_filters(filters);
    req.set_limit(limit);
    req.set_token(from);
    if (!sort_key.empty()) {
      req.mutable_sort_by()->set_key(sort_key);
      req.mutable_sort_by()->set_direction(flyteidl2::common::Sort::ASCENDING);
    }
    fp::ListProjectsResponse resp;
    auto s = call(&fp::ProjectService::Stub::ListProjects, req, &resp);
    ids->clear();
    for (const auto& p : resp.projects().projects()) ids->push_back(p.id());
    if (token) *token = resp.projects().token();
    return s;
  }
};

fp::Project project(const std::string& id, fp::ProjectState state = fp::PROJECT_STATE_ACTIVE) {
  fp::Project p;
  p.set_id(id);
  p.set_name(id + " name");
  p.set_description("about " + id);
  p.set_state(state);
  return p;
}

}  // namespace

TEST_CASE("flyte2 emulator projects: the server's default project is created at startup, once") {
  const std::string db = std::filesystem::temp_directory_path() /
                         ("flytecd-flyte2-projects-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(db);
  {
    ProjectPeer peer(db, {"flytesnacks"});
    fp::Project p;
    REQUIRE(peer.get("flytesnacks", &p).ok());
    CHECK(p.name() == "flytesnacks");
    CHECK(p.state() == fp::PROJECT_STATE_ACTIVE);
    REQUIRE(peer.create(project("ml")).ok());
    // Someone archives the default project: a restart does not bring it back.
    REQUIRE(peer.update(project("flytesnacks", fp::PROJECT_STATE_ARCHIVED)).ok());
  }
  ProjectPeer again(db, {"flytesnacks"});
  fp::Project p;
  REQUIRE(again.get("flytesnacks", &p).ok());
  CHECK(p.state() == fp::PROJECT_STATE_ARCHIVED);
  CHECK(again.get("ml").ok());
  std::filesystem::remove(db);
}

TEST_CASE("flyte2 emulator projects: create and get as project_service.go does") {
  ProjectPeer peer;
  auto st = peer.create(fp::Project{});
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "project.id is required");
  {
    fp::CreateProjectRequest req;  // no project at all
    fp::CreateProjectResponse resp;
    CHECK(peer.call(&fp::ProjectService::Stub::CreateProject, req, &resp).error_code() ==
          grpc::StatusCode::INVALID_ARGUMENT);
  }
  fp::Project ml = project("ml");
  (*ml.mutable_labels()->mutable_values())["team"] = "ml";
  ml.set_org("ignored-org");  // the org is not stored
  REQUIRE(peer.create(ml).ok());
  st = peer.create(project("ml", fp::PROJECT_STATE_ARCHIVED));
  CHECK(st.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  CHECK(st.error_message() == "project already exists: ml");

  fp::Project got;
  REQUIRE(peer.get("ml", &got).ok());
  CHECK(got.name() == "ml name");
  CHECK(got.description() == "about ml");
  CHECK(got.labels().values().at("team") == "ml");
  CHECK(got.org().empty());
  // The server's domains are in every project it returns.
  REQUIRE(got.domains_size() == 3);
  CHECK(got.domains(0).id() == "development");
  CHECK(got.domains(0).name() == "Development");

  st = peer.get("");
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "id is required");
  st = peer.get("nope");
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(st.error_message() == "project not found: nope");

  // description VARCHAR(300): Postgres refuses a longer one, the server answers Internal; 300
  // characters (not bytes) fit.
  fp::Project long_one = project("long");
  long_one.set_description(std::string(301, 'x'));
  CHECK(peer.create(long_one).error_code() == grpc::StatusCode::INTERNAL);
  std::string wide;
  for (int i = 0; i < 300; ++i) wide += "\xc3\xa9";  // 300 characters, 600 bytes
  long_one.set_description(wide);
  CHECK(peer.create(long_one).ok());
  CHECK(peer.update(project("long")).ok());
  fp::Project too_long = project("long");
  too_long.set_description(std::string(301, 'y'));
  CHECK(peer.update(too_long).error_code() == grpc::StatusCode::INTERNAL);
}

TEST_CASE(
    "flyte2 emulator projects: update replaces the whole project, NotFound for an unknown id") {
  ProjectPeer peer;
  fp::Project ml = project("ml");
  (*ml.mutable_labels()->mutable_values())["team"] = "ml";
  REQUIRE(peer.create(ml).ok());
  auto st = peer.update(project("nope"));
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(st.error_message() == "project not found: nope");
  CHECK(peer.update(fp::Project{}).error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  REQUIRE(peer.update(project("ml", fp::PROJECT_STATE_ARCHIVED)).ok());
  fp::Project got;
  REQUIRE(peer.get("ml", &got).ok());
  CHECK(got.state() == fp::PROJECT_STATE_ARCHIVED);
  CHECK(got.labels().values().empty());  // labels left out are cleared
  fp::Project bare;
  bare.set_id("ml");
  REQUIRE(peer.update(bare).ok());
  REQUIRE(peer.get("ml", &got).ok());
  CHECK(got.state() == fp::PROJECT_STATE_ACTIVE);  // state left out is ACTIVE again
  CHECK(got.name().empty());
  CHECK(got.description().empty());
}

TEST_CASE("flyte2 emulator projects: list filters, sorts and pages as the server does") {
  ProjectPeer peer;
  REQUIRE(peer.create(project("a")).ok());
  REQUIRE(peer.create(project("b", fp::PROJECT_STATE_ARCHIVED)).ok());
  REQUIRE(peer.create(project("c", fp::PROJECT_STATE_SYSTEM_ARCHIVED)).ok());
  REQUIRE(peer.create(project("d")).ok());
  std::vector<std::string> ids;
  using V = std::vector<std::string>;

  // No filter: ARCHIVED hidden, SYSTEM_ARCHIVED shown.
  REQUIRE(peer.list("", &ids, nullptr, 0, "", "identifier").ok());
  CHECK(ids == V{"a", "c", "d"});
  // A filter of spaces is trimmed to none at all: nothing hidden.
  REQUIRE(peer.list("   ", &ids, nullptr, 0, "", "identifier").ok());
  CHECK(ids == V{"a", "b", "c", "d"});
  REQUIRE(peer.list("eq(state,1)", &ids).ok());
  CHECK(ids == V{"b"});
  REQUIRE(peer.list("ne(state,1)+contains(name, name)", &ids, nullptr, 0, "", "identifier").ok());
  CHECK(ids == V{"a", "c", "d"});
  REQUIRE(peer.list("VALUE_IN(identifier,a;d)", &ids, nullptr, 0, "", "identifier").ok());
  CHECK(ids == V{"a", "d"});

  // Refused before the query: InvalidArgument. Refused by the database: Internal.
  auto st = peer.list("eq(owner,x)", &ids);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "invalid filter field: owner");
  CHECK(peer.list("gt(state,1)", &ids).error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(peer.list("eq(state)", &ids).error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(peer.list("eq(state,abc)", &ids).error_code() == grpc::StatusCode::INTERNAL);
  CHECK(peer.list("value_in(state,0;x)", &ids).error_code() == grpc::StatusCode::INTERNAL);
  CHECK(peer.list("contains(state,1)", &ids).error_code() == grpc::StatusCode::INTERNAL);
  st = peer.list("", &ids, nullptr, 0, "", "owner");
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "invalid sort field: owner");

  // Pages: the token is the next offset whenever a page is full, so a full last page has one and
  // the page after it is empty without one.
  std::string token;
  REQUIRE(peer.list("", &ids, &token, 2, "", "identifier").ok());
  CHECK(ids == V{"a", "c"});
  CHECK(token == "2");
  REQUIRE(peer.list("", &ids, &token, 2, " 2", "identifier").ok());  // Sscanf skips spaces
  CHECK(ids == V{"d"});
  CHECK(token.empty());
  REQUIRE(peer.list("", &ids, &token, 3, "", "identifier").ok());
  CHECK(token == "3");
  REQUIRE(peer.list("", &ids, &token, 3, "3", "identifier").ok());
  CHECK(ids.empty());
  CHECK(token.empty());
  REQUIRE(peer.list("", &ids, &token, 0, "", "identifier").ok());  // no limit: no token
  CHECK(ids.size() == 3);
  CHECK(token.empty());
  REQUIRE(peer.list("", &ids, &token, 1, "2junk", "identifier").ok());  // the rest ignored
  CHECK(ids == V{"d"});
  st = peer.list("", &ids, &token, 1, "x");
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "invalid token format: x");
  st = peer.list("", &ids, &token, 1, "-1");
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "invalid offset: -1 (must be non-negative)");
}

}  // namespace FLYTECD_UNITY_ID
