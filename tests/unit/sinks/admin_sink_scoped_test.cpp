// AdminSink::observe_scoped (the read of a targeted pass) against the emulator over real gRPC on
// loopback: it returns exactly what observe() returns for the scope's projects and keys, reading
// each row with its exact Get, without listing the whole deployment.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "sinks/routing_sink.hpp"
#include "tests/support/admin_client.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace fa = flyteidl::admin;
using flyteidl::service::AdminService;
using sinks::ObserveScope;
using sinks::State;
using sinks::flyteadmin::AdminSink;

namespace {

// A row written behind the sink's back, as an operator (or flytectl) would.
void put(AdminService::Stub& admin, const sinks::Scope& at, const fa::MatchingAttributes& value) {
  grpc::ClientContext ctx;
  grpc::Status st;
  if (at.level() == sinks::Level::project) {
    fa::ProjectAttributesUpdateRequest req;
    req.mutable_attributes()->set_project(at.project);
    *req.mutable_attributes()->mutable_matching_attributes() = value;
    fa::ProjectAttributesUpdateResponse resp;
    st = admin.UpdateProjectAttributes(&ctx, req, &resp);
  } else if (at.level() == sinks::Level::project_domain) {
    fa::ProjectDomainAttributesUpdateRequest req;
    req.mutable_attributes()->set_project(at.project);
    req.mutable_attributes()->set_domain(at.domain);
    *req.mutable_attributes()->mutable_matching_attributes() = value;
    fa::ProjectDomainAttributesUpdateResponse resp;
    st = admin.UpdateProjectDomainAttributes(&ctx, req, &resp);
  } else {
    fa::WorkflowAttributesUpdateRequest req;
    req.mutable_attributes()->set_project(at.project);
    req.mutable_attributes()->set_domain(at.domain);
    req.mutable_attributes()->set_workflow(at.workflow);
    *req.mutable_attributes()->mutable_matching_attributes() = value;
    fa::WorkflowAttributesUpdateResponse resp;
    st = admin.UpdateWorkflowAttributes(&ctx, req, &resp);
  }
  INFO(st.error_message());
  REQUIRE(st.ok());
}

void archive(AdminService::Stub& admin, const std::string& id) {
  grpc::ClientContext ctx;
  fa::Project req;
  req.set_id(id);
  req.set_state(fa::Project::ARCHIVED);
  fa::ProjectUpdateResponse resp;
  REQUIRE(admin.UpdateProject(&ctx, req, &resp).ok());
}

fa::MatchingAttributes queue(const std::string& tag) {
  fa::MatchingAttributes m;
  m.mutable_execution_queue_attributes()->add_tags(tag);
  return m;
}
fa::MatchingAttributes cpu(const std::string& value) {
  fa::MatchingAttributes m;
  m.mutable_task_resource_attributes()->mutable_defaults()->set_cpu(value);
  return m;
}
fa::MatchingAttributes cluster_label(const std::string& value) {
  fa::MatchingAttributes m;
  m.mutable_execution_cluster_label()->set_value(value);
  return m;
}
// No max_parallelism: GetProjectAttributes would answer the server's default (25) in it.
fa::MatchingAttributes exec_config() {
  fa::MatchingAttributes m;
  m.mutable_workflow_execution_config()->set_overwrite_cache(true);
  return m;
}

std::string key(const sinks::Scope& at, sinks::AttributeType type) {
  return sinks::override_key(at, type);
}

// Projects alpha, beta (active, with rows at every level) and delta (no rows), and the archived
// gamma (rows at project and project-domain level, written before it was archived).
struct Seeded {
  std::unique_ptr<sinks::emulator::Emulator> emulator;
  std::unique_ptr<AdminSink> sink;
};

Seeded seeded() {
  auto e = sinks::emulator::Emulator::start({});
  REQUIRE(e.ok());
  auto admin = flytecd_test::admin_stub((*e)->address());
  for (const char* p : {"alpha", "beta", "delta", "gamma"})
    flytecd_test::register_project(*admin, p);
  for (const std::string p : {"alpha", "beta", "gamma"}) {
    put(*admin, {p, "", ""}, queue(p + "-q"));
    put(*admin, {p, "", ""}, exec_config());
    put(*admin, {p, "development", ""}, cpu("2"));
    put(*admin, {p, "production", ""}, cluster_label(p + "-prod"));
    put(*admin, {p, "development", "core.hello"}, cpu("4"));
  }
  archive(*admin, "gamma");
  sinks::flyteadmin::AdminConfig cfg;
  cfg.endpoint = (*e)->address();
  cfg.insecure = true;
  auto sink = AdminSink::connect(cfg, "test");
  REQUIRE(sink.ok());
  return Seeded{std::move(*e), std::move(*sink)};
}

// The keys a pass over alpha and delta could ask for: alpha's rows, rows that do not exist
// (where FlyteAdmin's Get would fall back to a broader row, or answer defaults), and beta's,
// whose project is not in scope.
const std::set<std::string> k_keys = {
    key({"alpha", "", ""}, fa::EXECUTION_QUEUE),
    key({"alpha", "", ""}, fa::WORKFLOW_EXECUTION_CONFIG),
    key({"alpha", "development", ""}, fa::TASK_RESOURCE),
    key({"alpha", "development", "core.hello"}, fa::TASK_RESOURCE),
    key({"alpha", "development", "core.other"}, fa::TASK_RESOURCE),  // falls back to development
    key({"alpha", "staging", ""}, fa::EXECUTION_QUEUE),              // falls back to the project
    // Falls back to alpha/production's row, which is not asked for.
    key({"alpha", "production", "core.hello"}, fa::EXECUTION_CLUSTER_LABEL),
    key({"alpha", "", ""}, fa::TASK_RESOURCE),              // nowhere
    key({"delta", "", ""}, fa::WORKFLOW_EXECUTION_CONFIG),  // Get answers defaults
    key({"beta", "", ""}, fa::EXECUTION_QUEUE),
    key({"beta", "development", "core.hello"}, fa::TASK_RESOURCE),
};

// `full` cut to `projects` and `keys`: what a scoped observation must equal.
State narrowed(const State& full, const std::set<std::string>& projects,
               const std::set<std::string>& keys) {
  State out;
  for (const auto& [id, p] : full.projects)
    if (projects.count(id)) out.projects.emplace(id, p);
  for (const auto& [k, row] : full.overrides)
    if (projects.count(row.scope.project) && keys.count(k)) out.overrides.emplace(k, row);
  return out;
}

// Equal projects, and equal rows: key, type, scope and serialized value.
void check_same(const State& got, const State& want) {
  CHECK(got.projects == want.projects);
  std::set<std::string> got_keys, want_keys;
  for (const auto& [k, row] : got.overrides) got_keys.insert(k);
  for (const auto& [k, row] : want.overrides) want_keys.insert(k);
  CHECK(got_keys == want_keys);
  for (const auto& [k, row] : want.overrides) {
    auto it = got.overrides.find(k);
    if (it == got.overrides.end()) continue;
    INFO(k);
    CHECK(it->second.scope == row.scope);
    CHECK(it->second.type == row.type);
    CHECK(it->second.value.SerializeAsString() == row.value.SerializeAsString());
  }
}

// The calls made between two readings of rpc_counts(), by method ("GetProject"), any code.
std::map<std::string, uint64_t> calls_since(const std::map<std::string, uint64_t>& before,
                                            const std::map<std::string, uint64_t>& after) {
  std::map<std::string, uint64_t> out;
  for (const auto& [method_code, n] : after) {
    auto it = before.find(method_code);
    const uint64_t d = n - (it == before.end() ? 0 : it->second);
    if (d) out[method_code.substr(0, method_code.find(' '))] += d;
  }
  return out;
}

}  // namespace

TEST_CASE("admin sink: a scoped observation is the full one cut to its projects and keys",
          "[admin-sink][observe-scoped]") {
  Seeded s = seeded();
  auto full = s.sink->observe();
  REQUIRE(full.ok());
  REQUIRE(full->overrides.size() == 15);
  const std::set<std::string> projects = {"alpha", "delta", "ghost"};  // ghost: not in FlyteAdmin
  auto scoped = s.sink->observe_scoped(ObserveScope{projects, k_keys});
  REQUIRE(scoped.ok());
  State want = narrowed(*full, projects, k_keys);
  REQUIRE(want.overrides.size() == 4);
  check_same(*scoped, want);
  // Nothing of beta or gamma, no project FlyteAdmin lacks, no row that does not exist.
  CHECK(scoped->projects.size() == 2);
  for (const auto& [k, row] : scoped->overrides) CHECK(row.scope.project == "alpha");
  CHECK_FALSE(
      scoped->overrides.count(key({"alpha", "development", "core.other"}, fa::TASK_RESOURCE)));
  CHECK_FALSE(scoped->overrides.count(key({"delta", "", ""}, fa::WORKFLOW_EXECUTION_CONFIG)));
  CHECK_FALSE(
      scoped->overrides.count(key({"alpha", "production", ""}, fa::EXECUTION_CLUSTER_LABEL)));
  // The stored row, not the one merged with the server's defaults.
  const auto& wec = scoped->overrides.at(key({"alpha", "", ""}, fa::WORKFLOW_EXECUTION_CONFIG));
  CHECK(wec.value.workflow_execution_config().max_parallelism() == 0);
}

TEST_CASE("admin sink: a scoped observation lists no rows but WORKFLOW_EXECUTION_CONFIG's, once",
          "[admin-sink][observe-scoped]") {
  Seeded s = seeded();
  auto before = s.sink->rpc_counts();
  auto scoped = s.sink->observe_scoped(ObserveScope{{"alpha", "delta"}, k_keys});
  REQUIRE(scoped.ok());
  auto calls = calls_since(before, s.sink->rpc_counts());
  CHECK(calls["ListMatchableAttributes"] == 1);
  CHECK(calls.count("ListProjects") == 0);
  CHECK(calls["GetProject"] == 2);
  // The 9 keys of alpha and delta but the two project-level WORKFLOW_EXECUTION_CONFIG ones.
  CHECK(calls["GetProjectAttributes"] + calls["GetProjectDomainAttributes"] +
            calls["GetWorkflowAttributes"] ==
        7);

  std::set<std::string> no_exec_config;
  for (const auto& k : k_keys)
    if (k.find("WORKFLOW_EXECUTION_CONFIG") == std::string::npos) no_exec_config.insert(k);
  before = s.sink->rpc_counts();
  REQUIRE(s.sink->observe_scoped(ObserveScope{{"alpha"}, no_exec_config}).ok());
  calls = calls_since(before, s.sink->rpc_counts());
  CHECK(calls.count("ListMatchableAttributes") == 0);
  CHECK(calls.count("ListProjects") == 0);
}

TEST_CASE("admin sink: a scoped observation sends its List while it reads the projects and rows",
          "[admin-sink][observe-scoped]") {
  // The project-level WORKFLOW_EXECUTION_CONFIG rows come from a List of every such row; it is
  // sent first and read while the GetProject and Get*Attributes calls run, not after them. Seen
  // from the server: when GetProject fails, the List has still been received (sent after the
  // Gets, as before, it never was).
  Seeded s = seeded();
  sinks::emulator::FaultRule broken;
  broken.method = "GetProject";
  broken.error_rate = 1;
  broken.code = "INTERNAL";
  s.emulator->set_faults({broken});
  const uint64_t lists = s.emulator->calls("ListMatchableAttributes");
  auto scoped = s.sink->observe_scoped(ObserveScope{{"alpha", "delta"}, k_keys});
  REQUIRE_FALSE(scoped.ok());
  CHECK_THAT(scoped.error().message, Catch::Contains("GetProject"));
  CHECK(s.emulator->calls("ListMatchableAttributes") == lists + 1);
  // Without a project-level WORKFLOW_EXECUTION_CONFIG key nothing is listed ahead.
  std::set<std::string> no_exec_config;
  for (const auto& k : k_keys)
    if (k.find("WORKFLOW_EXECUTION_CONFIG") == std::string::npos) no_exec_config.insert(k);
  REQUIRE_FALSE(s.sink->observe_scoped(ObserveScope{{"alpha"}, no_exec_config}).ok());
  CHECK(s.emulator->calls("ListMatchableAttributes") == lists + 1);
}

TEST_CASE("admin sink: a scoped observation returns an archived project and its rows",
          "[admin-sink][observe-scoped]") {
  Seeded s = seeded();
  auto full = s.sink->observe();
  REQUIRE(full.ok());
  const std::set<std::string> keys = {
      key({"gamma", "", ""}, fa::EXECUTION_QUEUE),
      key({"gamma", "development", ""}, fa::TASK_RESOURCE),
      key({"gamma", "development", "core.hello"}, fa::TASK_RESOURCE),
      key({"gamma", "staging", ""}, fa::TASK_RESOURCE),
  };
  auto before = s.sink->rpc_counts();
  auto scoped = s.sink->observe_scoped(ObserveScope{{"gamma"}, keys});
  REQUIRE(scoped.ok());
  // FlyteAdmin's Gets below project level refuse an archived project: its rows there are listed
  // (one List of TASK_RESOURCE), not asked for in vain.
  auto calls = calls_since(before, s.sink->rpc_counts());
  CHECK(calls == std::map<std::string, uint64_t>{{"GetProject", 1},
                                                 {"GetProjectAttributes", 1},
                                                 {"ListMatchableAttributes", 1}});
  REQUIRE(scoped->projects.count("gamma"));
  CHECK(scoped->projects.at("gamma").archived);
  State want = narrowed(*full, {"gamma"}, keys);
  REQUIRE(want.overrides.size() == 3);
  check_same(*scoped, want);
}

TEST_CASE("admin sink: a scoped observation of everything is observe()",
          "[admin-sink][observe-scoped]") {
  Seeded s = seeded();
  auto full = s.sink->observe();
  REQUIRE(full.ok());
  auto all = s.sink->observe_scoped(ObserveScope{{}, k_keys});
  REQUIRE(all.ok());
  CHECK(all->projects.size() == 4);
  check_same(*all, *full);
}

TEST_CASE("admin sink: a scoped observation lists projects when FlyteAdmin has no GetProject",
          "[admin-sink][observe-scoped]") {
  Seeded s = seeded();
  auto full = s.sink->observe();
  REQUIRE(full.ok());
  sinks::emulator::FaultRule unimplemented;
  unimplemented.method = "GetProject";
  unimplemented.error_rate = 1;
  unimplemented.code = "UNIMPLEMENTED";
  s.emulator->set_faults({unimplemented});
  auto scoped = s.sink->observe_scoped(ObserveScope{{"alpha", "gamma"}, k_keys});
  REQUIRE(scoped.ok());
  check_same(*scoped, narrowed(*full, {"alpha", "gamma"}, k_keys));
  CHECK(scoped->projects.size() == 2);
}

TEST_CASE("admin sink: a Get FlyteAdmin refuses (unknown domain) is answered by the List",
          "[admin-sink][observe-scoped]") {
  Seeded s = seeded();
  const std::set<std::string> keys = {key({"alpha", "nowhere", ""}, fa::TASK_RESOURCE),
                                      key({"alpha", "development", ""}, fa::TASK_RESOURCE)};
  auto before = s.sink->rpc_counts();
  auto scoped = s.sink->observe_scoped(ObserveScope{{"alpha"}, keys});
  REQUIRE(scoped.ok());
  CHECK(scoped->overrides.size() == 1);
  CHECK(scoped->overrides.count(key({"alpha", "development", ""}, fa::TASK_RESOURCE)));
  CHECK(calls_since(before, s.sink->rpc_counts())["ListMatchableAttributes"] == 1);
}

TEST_CASE("routing sink: a scoped observation is each route's, cut to its parts",
          "[sinks][routing][observe-scoped]") {
  Seeded s = seeded();
  auto direct = s.sink->observe_scoped(ObserveScope{{"alpha"}, k_keys});
  REQUIRE(direct.ok());

  auto all_parts = sinks::RoutingSink::create(
      {{s.sink.get(), sinks::Capabilities{.projects = true, .overrides = true}}});
  REQUIRE(all_parts.ok());
  auto routed = (*all_parts)->observe_scoped(ObserveScope{{"alpha"}, k_keys});
  REQUIRE(routed.ok());
  check_same(*routed, *direct);

  // A route of projects only is not asked for override rows.
  auto projects_only = sinks::RoutingSink::create(
      {{s.sink.get(), sinks::Capabilities{.projects = true, .registrations = true}}});
  REQUIRE(projects_only.ok());
  auto before = s.sink->rpc_counts();
  auto projects = (*projects_only)->observe_scoped(ObserveScope{{"alpha"}, k_keys});
  REQUIRE(projects.ok());
  CHECK(projects->projects == direct->projects);
  CHECK(projects->overrides.empty());
  auto calls = calls_since(before, s.sink->rpc_counts());
  CHECK(calls == std::map<std::string, uint64_t>{{"GetProject", 1}});
}

}  // namespace FLYTECD_UNITY_ID
