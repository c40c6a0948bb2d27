// Workflow registration against the FlyteAdmin emulator over real gRPC on loopback, with the real
// `pyflyte package` archives: entity counts and hydration, failures that stay their own, package
// bombs, conflicts, activation. Live state is read back through raw RPCs (another client), not
// through flytecd's own view. Execution after planning, OCI and the CLI:
// registration_execution_test.

#include <catch2/catch.hpp>

#include "tests/integration/registration_harness.hpp"
#include "tests/unit/daemon/registration/package_bomb.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace registration_test;

TEST_CASE("the four valid fixture archives register with flytectl's entity counts, hydrated",
          "[registration][integration]") {
  Harness h;
  std::vector<model::Registration> regs = {
      reg("small", "flytesnacks", "development", "v1", "packages/valid-register.tgz"),
      reg("fast", "flytesnacks", "staging", "v1", "packages/flyte-package.tgz"),
      reg("core", "flytesnacks", "production", "v1", "packages/flytesnacks-core.tgz"),
      reg("fast-register", "ml", "development", "v7", "packages/valid-fast-register.tgz"),
  };
  auto rep = h.run(regs);
  for (const auto& i : rep.items) INFO(registration::describe(i));
  REQUIRE(rep.ok());
  struct Want {
    const char* name;
    size_t t, w, l;
  };
  for (const Want& w : {Want{"small", 2, 1, 1}, Want{"fast", 1, 1, 1}, Want{"core", 39, 21, 24},
                        Want{"fast-register", 44, 27, 30}}) {
    const auto& o = item(rep, w.name);
    INFO(registration::describe(o));
    CHECK(o.state == flytecd::registration::RegistrationState::registered);
    CHECK(o.tasks == w.t);
    CHECK(o.workflows == w.w);
    CHECK(o.launch_plans == w.l);
    CHECK(o.created + o.existed == w.t + w.w + w.l);
    CHECK(o.digest.rfind("sha256:", 0) == 0);
  }
  // flytesnacks-core carries two byte-identical sqlite task files: the second is ALREADY_EXISTS.
  CHECK(item(rep, "core").existed >= 1);

  // Read back with another client: every reference carries the registration's coordinates.
  for (const auto& [project, domain, version] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"flytesnacks", "production", "v1"}, {"ml", "development", "v7"}}) {
    auto wfs = h.list<fa::WorkflowList>(&flyteidl::service::AdminService::Stub::ListWorkflows,
                                        project, domain);
    REQUIRE(wfs.workflows_size() > 0);
    size_t refs = 0;
    for (const auto& wf : wfs.workflows()) {
      grpc::ClientContext ctx;
      fa::ObjectGetRequest get;
      *get.mutable_id() = wf.id();
      fa::Workflow full;
      REQUIRE(h.raw->GetWorkflow(&ctx, get, &full).ok());
      std::vector<const fc::Identifier*> ids;
      const auto& closure = full.closure().compiled_workflow();
      collect_ids(closure.primary().template_(), ids);
      for (const auto& sub : closure.sub_workflows()) collect_ids(sub.template_(), ids);
      for (const auto* id : ids) {
        INFO(wf.id().name() << " -> " << id->ShortDebugString());
        CHECK(id->project() == project);
        CHECK(id->domain() == domain);
        CHECK(id->version() == version);
        ++refs;
      }
    }
    CHECK(refs > static_cast<size_t>(wfs.workflows_size()));
    auto lps = h.list<fa::LaunchPlanList>(&flyteidl::service::AdminService::Stub::ListLaunchPlans,
                                          project, domain);
    for (const auto& lp : lps.launch_plans()) {
      INFO(lp.id().name());
      CHECK(lp.spec().workflow_id().project() == project);
      CHECK(lp.spec().workflow_id().domain() == domain);
      CHECK(lp.spec().workflow_id().version() == version);
    }
  }

  // Fast registration: the source went through DataProxy and the task args point at it.
  auto tasks = h.list<fa::TaskList>(&flyteidl::service::AdminService::Stub::ListTasks,
                                    "flytesnacks", "staging");
  REQUIRE(tasks.tasks_size() == 1);
  const auto& args = tasks.tasks(0).closure().compiled_task().template_().container().args();
  std::string native;
  for (const auto& a : args) {
    CHECK(a.find("{{ .remote_package_path }}") == std::string::npos);
    CHECK(a.find("{{ .dest_dir }}") == std::string::npos);
    if (a.rfind("s3://", 0) == 0 || a.find("://") != std::string::npos) native = a;
  }
  REQUIRE_FALSE(native.empty());
  auto stored = h.emu->uploaded(native);
  REQUIRE(stored.has_value());
  auto pkg = registration::read_package(read_file(fixtures() / "flyte-package.tgz"), "fp");
  REQUIRE(pkg.ok());
  CHECK(*stored == registration::read_fast_source(*pkg).value());  // streamed up, byte for byte

  // Activation `all`: every launch plan ACTIVE at its version.
  auto active = h.active("flytesnacks", "production");
  CHECK(active.size() == 24);
  for (const auto& [name, v] : active) CHECK(v == "v1");

  // The ledger links each package digest to the ids it registered.
  auto rows = h.ledger->registrations();
  REQUIRE(rows.ok());
  const auto& core = rows->at("registration/flytesnacks/production/core");
  CHECK(core.digest == "sha256:543ea39db87ee9d85c4df1a65ebec81ba6c5102c34ba4add90f8d76445186308");
  CHECK(core.entities.size() == 84);
  CHECK(core.activated.size() == 24);

  // A second reconcile writes nothing.
  const uint64_t before = h.entity_writes();
  const uint64_t uploads = h.emu->calls("CreateUploadLocation");
  auto again = h.run(regs);
  REQUIRE(again.ok());
  CHECK(again.rpcs == 0);
  CHECK(h.entity_writes() == before);
  CHECK(h.emu->calls("CreateUploadLocation") == uploads);
  for (const auto& i : again.items)
    CHECK(i.state == flytecd::registration::RegistrationState::in_sync);
}

TEST_CASE("invalid-fast.tgz and an unreachable registry fail only their own registration",
          "[registration][integration]") {
  Harness h;
  auto rep = h.run({
      reg("bad", "flytesnacks", "development", "v1", "packages/invalid-fast.tgz"),
      reg("gone", "flytesnacks", "staging", "v1", "oci://127.0.0.1:1/flyte/pkg:v1"),
      reg("good", "flytesnacks", "production", "v1", "packages/valid-register.tgz"),
  });
  CHECK_FALSE(rep.ok());
  CHECK(rep.failed() == 2);
  const auto& bad = item(rep, "bad");
  INFO(bad.message);
  CHECK(bad.state == flytecd::registration::RegistrationState::failed);
  CHECK(bad.message.find("invalid-fast") != std::string::npos);
  CHECK(bad.message.find("tagz") != std::string::npos);
  CHECK(bad.source == "registrations.yaml:1");  // the failing document is named
  CHECK(registration::describe(bad).find("FAILED: (registrations.yaml:1) ") != std::string::npos);
  CHECK(item(rep, "gone").state == flytecd::registration::RegistrationState::failed);
  CHECK(item(rep, "good").state == flytecd::registration::RegistrationState::registered);
  CHECK(h.emu->calls("CreateTask") == 2);  // only the good package's tasks
}

TEST_CASE("three registrations of a package bomb fail by name within one shared memory budget",
          "[registration][integration][memory]") {
  Harness h;
  flytecd::test::write_bomb(h.dir / "repo" / "packages" / "bomb.tgz", 40,
                            6u << 20);  // 240 MiB of zeros
  registration::MemoryBudget memory(48u << 20);
  registration::RegistrarOptions o;
  o.revision = "test";
  o.parallelism = 8;                // 4 packages in flight
  o.max_package_bytes = 32u << 20;  // the bomb passes the 64 MiB per-entry bound, not this
  o.memory = &memory;
  auto rep = registration::reconcile_registrations(
      {reg("bomb-a", "flytesnacks", "development", "v1", "packages/bomb.tgz"),
       reg("bomb-b", "flytesnacks", "staging", "v1", "packages/bomb.tgz"),
       reg("bomb-c", "flytesnacks", "production", "v1", "packages/bomb.tgz"),
       reg("good", "ml", "development", "v1", "packages/flytesnacks-core.tgz")},
      *h.sink, *h.packages, *h.ledger, o);
  CHECK(rep.failed() == 3);
  for (const char* name : {"bomb-a", "bomb-b", "bomb-c"}) {
    const auto& bomb = item(rep, name);
    INFO(bomb.message);
    CHECK(bomb.state == flytecd::registration::RegistrationState::failed);
    CHECK_THAT(bomb.message, Catch::StartsWith("packages/bomb.tgz: "));
    CHECK_THAT(bomb.message,
               Catch::Contains("33554432 decompressed bytes (packages.maxPackageBytes)"));
    CHECK_THAT(registration::describe(bomb), Catch::Contains("/" + std::string(name) + ": FAILED"));
  }
  CHECK(item(rep, "good").state ==
        flytecd::registration::RegistrationState::registered);  // read (and uploaded) within the
                                                                // budget
  CHECK(h.emu->calls("CreateTask") == 39);
  CHECK(memory.peak() > 0);
  CHECK(memory.peak() <= memory.capacity());
  CHECK(memory.in_use() == 0);  // every lease given back
}

TEST_CASE("new content under an existing version is a conflict, never retried",
          "[registration][integration]") {
  Harness h;
  auto r = reg("core", "flytesnacks", "development", "v1", "packages/flytesnacks-core.tgz");
  REQUIRE(h.run({r}).ok());
  // Same package and version, but a service account now hydrated into every launch plan.
  r.service_account = "someone-else";
  const uint64_t creates = h.emu->calls("CreateLaunchPlan");
  auto rep = h.run({r});
  const auto& o = item(rep, "core");
  INFO(o.message);
  CHECK(o.state == flytecd::registration::RegistrationState::conflict);
  CHECK(o.message.find("different structure") != std::string::npos);
  CHECK(o.message.find("new version") != std::string::npos);
  CHECK(h.emu->calls("CreateLaunchPlan") == creates + 1);  // stopped at the first conflict
}

TEST_CASE("activation: version change, rollback, drift and removal",
          "[registration][integration]") {
  Harness h;
  auto r = reg("core", "flytesnacks", "development", "v1", "packages/flytesnacks-core.tgz");
  REQUIRE(h.run({r}).ok());
  auto a1 = h.active("flytesnacks", "development");
  REQUIRE(a1.size() == 24);

  // New version: v2 becomes ACTIVE (FlyteAdmin deactivates v1 of the same name).
  r.version = "v2";
  auto rep = h.run({r});
  REQUIRE(rep.ok());
  CHECK(item(rep, "core").state == flytecd::registration::RegistrationState::registered);
  for (const auto& [name, v] : h.active("flytesnacks", "development")) CHECK(v == "v2");

  CHECK_FALSE(item(rep, "core").rollback);  // v2 was never registered before
  {
    // The pass keeps that change in the ledger's history (what the rollback is known from).
    pass::Report report;
    report.mode = pass::Mode::execute;
    report.registrations = rep;
    REQUIRE(h.ledger->record_pass(
        pass::history_record(report, pass::Revision{"c2", "", nullptr, "", 0}, "test")));
  }

  // Rollback: back to v1 re-activates the older version (creates are ALREADY_EXISTS).
  r.version = "v1";
  rep = h.run({r});
  REQUIRE(rep.ok());
  // ... and is called a rollback (from -> to) in the log line, the status JSON and the history.
  CHECK(item(rep, "core").rollback);
  CHECK(registration::describe(item(rep, "core")).find("registered v1 (rollback v2 → v1)") !=
        std::string::npos);
  CHECK(registration::to_json(item(rep, "core"))["rollback"] ==
        nlohmann::json{{"from", "v2"}, {"to", "v1"}});
  CHECK(item(rep, "core").existed == 84);
  CHECK(item(rep, "core").created == 0);
  auto back = h.active("flytesnacks", "development");
  CHECK(back.size() == 24);
  for (const auto& [name, v] : back) CHECK(v == "v1");

  // Drift: someone deactivates a launch plan by hand.
  const std::string victim = back.begin()->first;
  {
    grpc::ClientContext ctx;
    fa::LaunchPlanUpdateRequest req;
    req.mutable_id()->set_resource_type(fc::LAUNCH_PLAN);
    req.mutable_id()->set_project("flytesnacks");
    req.mutable_id()->set_domain("development");
    req.mutable_id()->set_name(victim);
    req.mutable_id()->set_version("v1");
    req.set_state(fa::INACTIVE);
    fa::LaunchPlanUpdateResponse resp;
    REQUIRE(h.raw->UpdateLaunchPlan(&ctx, req, &resp).ok());
  }
  rep = h.run({r}, /*self_heal=*/false);
  REQUIRE(rep.ok());
  CHECK(item(rep, "core").drift.size() == 1);
  CHECK(h.active("flytesnacks", "development").count(victim) == 0);  // reported only
  rep = h.run({r});
  CHECK(item(rep, "core").drift.size() == 1);
  CHECK(item(rep, "core").activated == std::vector<std::string>{victim});
  CHECK(h.active("flytesnacks", "development").at(victim) == "v1");  // healed

  // Removed from Git: its launch plans are deactivated, nothing is deleted.
  rep = h.run({});
  REQUIRE(rep.items.size() == 1);
  CHECK(rep.items[0].state == flytecd::registration::RegistrationState::removed);
  CHECK(rep.items[0].deactivated.size() == 24);
  CHECK(h.active("flytesnacks", "development").empty());
  auto lps = h.list<fa::LaunchPlanList>(&flyteidl::service::AdminService::Stub::ListLaunchPlans,
                                        "flytesnacks", "development");
  CHECK(lps.launch_plans_size() == 48);  // v1 and v2 still registered
  auto rows = h.ledger->registrations();
  REQUIRE(rows.ok());
  CHECK(rows->empty());
}

TEST_CASE("activate: none registers without activating, a dry run writes nothing",
          "[registration][integration]") {
  Harness h;
  auto r = reg("core", "flytesnacks", "development", "v1", "packages/flytesnacks-core.tgz",
               model::Activate::none);
  registration::RegistrarOptions o;
  o.dry_run = true;
  auto plan = registration::reconcile_registrations({r}, *h.sink, *h.packages, *h.ledger, o);
  REQUIRE(plan.ok());
  CHECK(plan.items[0].state == flytecd::registration::RegistrationState::register_);
  CHECK(plan.items[0].tasks == 39);
  CHECK(h.entity_writes() == 0);
  CHECK(h.emu->calls("CreateUploadLocation") == 0);
  REQUIRE(h.run({r}).ok());
  CHECK(h.active("flytesnacks", "development").empty());
  CHECK(h.emu->calls("UpdateLaunchPlan") == 0);
}

}  // namespace FLYTECD_UNITY_ID
