// Workflow registration against the FlyteAdmin emulator over real gRPC on loopback, with the real
// `pyflyte package` archives. Live state is read back through raw RPCs (another client), not
// through flytecd's own view.
#include <archive.h>
#include <archive_entry.h>
#include <grpcpp/grpcpp.h>
#include <openssl/evp.h>
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
#include "tests/unit/daemon/registration/package_bomb.hpp"

using namespace flytecd;
namespace fs = std::filesystem;
namespace fa = flyteidl::admin;
namespace fc = flyteidl::core;

namespace {

fs::path fixtures() {
  fs::path p = "/work/shared/fixtures/flyte-packages";
  if (fs::exists(p)) return p;
  return fs::path(FLYTECD_SOURCE_DIR) / ".." / "shared" / "fixtures" / "flyte-packages";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::vector<std::string> k_entity_writes = {"CreateTask", "CreateWorkflow",
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

model::Registration reg(const std::string& name, const std::string& project,
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

const registration::RegistrationOutcome& item(const registration::RegistrationReport& rep,
                                              const std::string& name) {
  for (const auto& i : rep.items)
    if (i.name == name) return i;
  FAIL("no outcome for " << name);
  return rep.items.front();
}

// Every identifier reachable from a workflow template: node references, sub-workflows.
void collect_ids(const fc::Node& n, std::vector<const fc::Identifier*>& out) {
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
void collect_ids(const fc::WorkflowTemplate& t, std::vector<const fc::Identifier*>& out) {
  out.push_back(&t.id());
  for (const auto& n : t.nodes()) collect_ids(n, out);
  if (t.has_failure_node()) collect_ids(t.failure_node(), out);
}

}  // namespace

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

#include "tests/oci/oci_test_support.hpp"
#include "tests/support/tools.hpp"

TEST_CASE("an OCI package registers, a tag moved to a new digest is a change the plan shows",
          "[registration][integration][oci]") {
  FLYTECD_REQUIRE_TOOL(!oci_test::registry_binary().empty(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Harness h;
  oci_test::Registry registry({});
  oci_test::Pusher pusher(registry);
  auto first = pusher.push_package("flyte/pkg", "v1", read_file(fixtures() / "valid-register.tgz"));
  sources::oci::FetchOptions fo;
  fo.cache_dir = h.dir / "oci-cache";
  fo.plain_http_registries = {registry.host()};
  registration::DefaultPackageResolver oci(fo, "", registration::directory_reader(h.dir.string()));
  auto r =
      reg("pkg", "flytesnacks", "development", "v1", "oci://" + registry.host() + "/flyte/pkg:v1");
  registration::RegistrarOptions o;
  auto rep = registration::reconcile_registrations({r}, *h.sink, oci, *h.ledger, o);
  INFO(registration::describe(rep.items.at(0)));
  REQUIRE(rep.ok());
  CHECK(rep.items[0].state == flytecd::registration::RegistrationState::registered);
  CHECK(rep.items[0].digest == first.layer_digest);
  CHECK(rep.items[0].manifest_digest == first.manifest_digest);
  CHECK(rep.items[0].tasks == 2);
  CHECK(h.ledger->registrations()->at("registration/flytesnacks/development/pkg").digest ==
        first.layer_digest);

  // Unchanged tag: in sync, nothing written.
  rep = registration::reconcile_registrations({r}, *h.sink, oci, *h.ledger, o);
  REQUIRE(rep.ok());
  CHECK(rep.items[0].state == flytecd::registration::RegistrationState::in_sync);
  CHECK(rep.rpcs == 0);

  // Someone pushes other content under the same tag: the plan shows it before anything happens.
  auto moved = pusher.push_package("flyte/pkg", "v1", read_file(fixtures() / "flyte-package.tgz"));
  REQUIRE(moved.layer_digest != first.layer_digest);
  registration::RegistrarOptions dry;
  dry.dry_run = true;
  const uint64_t writes = h.entity_writes();
  auto plan = registration::reconcile_registrations({r}, *h.sink, oci, *h.ledger, dry);
  REQUIRE(plan.ok());
  CHECK(plan.items[0].state == flytecd::registration::RegistrationState::register_);
  CHECK(plan.items[0].digest == moved.layer_digest);
  CHECK(registration::describe(plan.items[0]).find("would register") != std::string::npos);
  CHECK(h.entity_writes() == writes);
}

#include <archive.h>
#include <archive_entry.h>
#include <sys/wait.h>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

// Writes `pkg` back as a .tgz (entities serialized under their original member names).
std::string write_package(const registration::Package& pkg) {
  std::string out;
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_gzip(a);
  archive_write_open(
      a, &out, nullptr,
      [](struct archive*, void* user, const void* buf, size_t n) -> la_ssize_t {
        static_cast<std::string*>(user)->append(static_cast<const char*>(buf), n);
        return static_cast<la_ssize_t>(n);
      },
      nullptr);
  for (const auto& e : pkg.entities) {
    std::string bytes = e.kind == registration::EntityKind::task ? e.task.SerializeAsString()
                        : e.kind == registration::EntityKind::workflow
                            ? e.workflow.SerializeAsString()
                            : e.launch_plan.SerializeAsString();
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.file.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(bytes.size()));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_write_header(a, entry);
    archive_write_data(a, bytes.data(), bytes.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

int run_binary(const std::vector<std::string>& args, std::string& output) {
  std::string cmd = FLYTECD_BINARY;
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  output.clear();
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("flytecd apply writes overrides that raise TASK_RESOURCE limits before the tasks",
          "[registration][integration][cli]") {
  // A task asking for 3Gi of memory: above FlyteAdmin's default platform limit (1Gi).
  auto pkg = registration::read_package(read_file(fixtures() / "valid-register.tgz"), "vr");
  REQUIRE(pkg.ok());
  auto* task = &pkg->entities.front();
  REQUIRE(task->kind == registration::EntityKind::task);
  auto* res = task->task.mutable_template_()->mutable_container()->mutable_resources();
  for (auto* list : {res->mutable_requests(), res->mutable_limits()}) {
    auto* e = list->Add();
    e->set_name(fc::Resources::MEMORY);
    e->set_value("3Gi");
  }
  fs::path dir = fs::temp_directory_path() / ("flytecd-reg-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "repo/packages");
  std::ofstream(dir / "repo/packages/big.tgz", std::ios::binary) << write_package(*pkg);
  std::ofstream(dir / "repo/project.yaml")
      << "apiVersion: flytecd/v1\nkind: Project\nid: res\nname: res\n";
  std::ofstream(dir / "repo/registration.yaml")
      << "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: big}\n"
         "project: res\ndomain: development\nversion: v1\npackage: packages/big.tgz\n";
  const std::vector<std::string> apply = {"apply", "--repo", (dir / "repo").string(), "--state-dir",
                                          (dir / "state").string()};
  std::string out;
  // Negative control: without an override the emulator (like FlyteAdmin) refuses the task.
  CHECK(run_binary(apply, out) == 1);
  INFO(out);
  CHECK(out.find("FAILED") != std::string::npos);
  CHECK(out.find("greater than current limit set in the platform configuration [1Gi]") !=
        std::string::npos);
  // The override that raises the limit lands in the same apply, before the task is created.
  std::ofstream(dir / "repo/overrides.yaml")
      << "apiVersion: flytecd/v1\nkind: Overrides\nproject: res\ndomain: development\n"
         "spec:\n  taskResourceAttributes:\n    defaults: {cpu: '1', memory: 1Gi}\n"
         "    limits: {cpu: '2', memory: 4Gi}\n";
  CHECK(run_binary(apply, out) == 0);
  CHECK(out.find("registration/res/development/big: registered v1") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "FlyteAdmin unreachable: after a few failed calls the remaining registrations are not "
    "attempted, and the report says the target is down",
    "[registration][integration][breaker]") {
  Harness h;
  std::vector<model::Registration> regs;
  // One package at eight versions; only the first keeps its launch plan ACTIVE (two that both
  // did would take its activation from each other).
  for (int i = 0; i < 8; ++i)
    regs.push_back(reg("r" + std::to_string(i), "flytesnacks", "development",
                       "v" + std::to_string(i), "packages/valid-register.tgz",
                       i == 0 ? model::Activate::all : model::Activate::none));
  auto down = sinks::emulator::parse_faults("*:rate=1,code=UNAVAILABLE");
  REQUIRE(down.ok());
  h.emu->set_faults(*down);
  auto rep = h.run(regs);
  REQUIRE(rep.target_down.has_value());
  CHECK(rep.target_down->code == ErrorCode::unavailable);
  size_t not_attempted = 0;
  for (const auto& i : rep.items) {
    INFO(i.key << ": " << i.message);
    CHECK(i.state == flytecd::registration::RegistrationState::failed);
    not_attempted += i.message.find("not attempted") != std::string::npos;
  }
  // Parallelism 4: two packages in flight with two tasks each; the breaker opens at 5 calls.
  CHECK(not_attempted >= 3);
  // Every call that was made was retried (5 attempts); the old code made all 8 x 2 of them.
  CHECK(h.emu->calls("CreateTask") <= 8 * 5);

  // The next pass against a healthy FlyteAdmin registers everything.
  h.emu->set_faults({});
  auto again = h.run(regs);
  std::string states;
  for (const auto& i : again.items)
    states += i.key + ": " + std::string(to_string(i.state)) + ": " + i.message + "\n";
  INFO(states);
  CHECK(again.ok());
  CHECK_FALSE(again.target_down.has_value());
}

TEST_CASE("plan_registrations writes nothing, execute_registrations carries out that plan",
          "[registration][integration][plan]") {
  Harness h;
  auto r = reg("core", "flytesnacks", "development", "v1", "packages/flytesnacks-core.tgz");
  registration::RegistrarOptions o;
  o.revision = "test";
  auto plan = registration::plan_registrations({r}, *h.sink, *h.packages, *h.ledger, o);
  REQUIRE(plan.ok());
  REQUIRE(plan->items.size() == 1);
  const auto& it = plan->items[0];
  CHECK(it.state == registration::ItemState::register_);
  CHECK(it.count(registration::StepKind::create_tasks) == 1);
  CHECK(it.steps.at(2).count == 39);
  CHECK(h.entity_writes() == 0);
  CHECK(h.ledger->registrations()->empty());
  // The dry-run view is the plan's.
  auto view = registration::report_of(*plan);
  CHECK(view.items.at(0).state == flytecd::registration::RegistrationState::register_);
  CHECK(view.items.at(0).tasks == 39);
  CHECK(view.rpcs == 0);

  auto rep = registration::execute_registrations(*plan, *h.sink, *h.packages, *h.ledger, o);
  INFO(registration::describe(rep.items.at(0)));
  REQUIRE(rep.ok());
  CHECK(rep.items[0].state == flytecd::registration::RegistrationState::registered);
  CHECK(rep.items[0].created + rep.items[0].existed == 84);
  CHECK(h.ledger->registrations()->size() == 1);
  CHECK(h.emu->calls("CreateTask") == 39);
}

TEST_CASE("a package that changes between plan and execution is not registered",
          "[registration][integration][plan]") {
  Harness h;
  auto r = reg("pkg", "flytesnacks", "development", "v1", "packages/swap.tgz");
  fs::copy_file(h.dir / "repo/packages/valid-register.tgz", h.dir / "repo/packages/swap.tgz");
  registration::RegistrarOptions o;
  auto plan = registration::plan_registrations({r}, *h.sink, *h.packages, *h.ledger, o);
  REQUIRE(plan.ok());
  REQUIRE(plan->items.at(0).state == registration::ItemState::register_);
  fs::copy_file(h.dir / "repo/packages/flyte-package.tgz", h.dir / "repo/packages/swap.tgz",
                fs::copy_options::overwrite_existing);
  auto rep = registration::execute_registrations(*plan, *h.sink, *h.packages, *h.ledger, o);
  const auto& item0 = rep.items.at(0);
  INFO(item0.message);
  CHECK(item0.state == flytecd::registration::RegistrationState::failed);
  CHECK_THAT(item0.message, Catch::Contains("changed while the pass ran"));
  CHECK(h.entity_writes() == 0);
  CHECK(h.ledger->registrations()->empty());
}

TEST_CASE("FlyteAdmin lost what the ledger says was registered: the package is registered again",
          "[registration][integration]") {
  Harness h;
  auto r = reg("core", "flytesnacks", "development", "v1", "packages/flytesnacks-core.tgz");
  REQUIRE(h.run({r}).ok());
  // A FlyteAdmin with an empty database (reset or restored) at a new address; the ledger stays.
  auto fresh = sinks::emulator::Emulator::start({});
  REQUIRE(fresh.ok());
  sinks::flyteadmin::AdminConfig cfg;
  cfg.endpoint = (*fresh)->address();
  cfg.insecure = true;
  auto s = sinks::flyteadmin::AdminSink::connect(cfg, "test");
  REQUIRE(s.ok());
  h.sink = std::move(*s);
  h.emu = std::move(*fresh);
  h.raw = flytecd_test::admin_stub(h.emu->address());
  flytecd_test::register_project(*h.raw, "flytesnacks");
  auto rep = h.run({r});
  const auto& o = item(rep, "core");
  INFO(registration::describe(o));
  REQUIRE(rep.ok());
  CHECK(o.state == flytecd::registration::RegistrationState::registered);
  // Observed, not discovered during execution: planned as a registration of its own.
  CHECK_THAT(o.message, Catch::Contains("missing in FlyteAdmin: launch plan"));
  CHECK(o.drift.empty());
  CHECK(h.emu->calls("CreateTask") == 39);
  CHECK(h.active("flytesnacks", "development").size() == 24);
  // And the pass after that is in sync.
  auto again = h.run({r});
  REQUIRE(again.ok());
  CHECK(item(again, "core").state == flytecd::registration::RegistrationState::in_sync);
  CHECK(again.rpcs == 0);
}

TEST_CASE("execution registers the OCI content the plan saw, even if the tag moved since",
          "[registration][integration][oci][plan]") {
  FLYTECD_REQUIRE_TOOL(!oci_test::registry_binary().empty(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  Harness h;
  oci_test::Registry registry({});
  oci_test::Pusher pusher(registry);
  auto first = pusher.push_package("flyte/pkg", "v1", read_file(fixtures() / "valid-register.tgz"));
  sources::oci::FetchOptions fo;
  fo.cache_dir = h.dir / "oci-cache";
  fo.plain_http_registries = {registry.host()};
  registration::DefaultPackageResolver oci(fo, "", registration::directory_reader(h.dir.string()));
  const std::string address = "oci://" + registry.host() + "/flyte/pkg:v1";
  auto r = reg("pkg", "flytesnacks", "development", "v1", address);
  registration::RegistrarOptions o;
  auto plan = registration::plan_registrations({r}, *h.sink, oci, *h.ledger, o);
  REQUIRE(plan.ok());
  REQUIRE(plan->items.at(0).state == registration::ItemState::register_);
  pusher.push_package("flyte/pkg", "v1", read_file(fixtures() / "flyte-package.tgz"));
  auto rep = registration::execute_registrations(*plan, *h.sink, oci, *h.ledger, o);
  INFO(registration::describe(rep.items.at(0)));
  REQUIRE(rep.ok());
  CHECK(rep.items[0].state == flytecd::registration::RegistrationState::registered);
  CHECK(rep.items[0].digest == first.layer_digest);
  CHECK(rep.items[0].tasks == 2);  // valid-register.tgz's, not flyte-package.tgz's one task
  const auto rec = h.ledger->registrations()->at("registration/flytesnacks/development/pkg");
  CHECK(rec.digest == first.layer_digest);
  CHECK(rec.package == address);  // recorded as written, not as pinned for the load
}

TEST_CASE("a task that does not decode: a dry run reports it, otherwise execution fails it",
          "[registration][integration][plan]") {
  Harness h;
  {
    // One task file whose bytes are not a TaskSpec (a length-delimited field running past the
    // end): the summary counts it by its _1 suffix, only a full read finds it broken.
    std::string out;
    struct archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_gzip(a);
    archive_write_open(
        a, &out, nullptr,
        [](struct archive*, void* user, const void* buf, size_t n) -> la_ssize_t {
          static_cast<std::string*>(user)->append(static_cast<const char*>(buf), n);
          return static_cast<la_ssize_t>(n);
        },
        nullptr);
    const std::string bytes = "\x0a\x7f\x01\x02";
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, "0_broken_1.pb");
    archive_entry_set_size(entry, static_cast<la_int64_t>(bytes.size()));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_write_header(a, entry);
    archive_write_data(a, bytes.data(), bytes.size());
    archive_entry_free(entry);
    archive_write_close(a);
    archive_write_free(a);
    std::ofstream(h.dir / "repo/packages/broken.tgz", std::ios::binary) << out;
  }
  auto r = reg("broken", "flytesnacks", "development", "v1", "packages/broken.tgz");
  registration::RegistrarOptions dry;
  dry.dry_run = true;
  auto view = registration::reconcile_registrations({r}, *h.sink, *h.packages, *h.ledger, dry);
  REQUIRE(view.items.size() == 1);
  INFO(view.items[0].message);
  CHECK(view.items[0].state == flytecd::registration::RegistrationState::failed);
  CHECK_THAT(view.items[0].message,
             Catch::Contains("cannot be decoded as flyteidl.admin.TaskSpec"));

  registration::RegistrarOptions o;
  auto plan = registration::plan_registrations({r}, *h.sink, *h.packages, *h.ledger, o);
  REQUIRE(plan.ok());
  CHECK(plan->items.at(0).state == registration::ItemState::register_);
  auto rep = registration::execute_registrations(*plan, *h.sink, *h.packages, *h.ledger, o);
  CHECK(rep.items.at(0).state == flytecd::registration::RegistrationState::failed);
  CHECK_THAT(rep.items[0].message, Catch::Contains("cannot be decoded as flyteidl.admin.TaskSpec"));
  CHECK(h.entity_writes() == 0);
  CHECK(h.ledger->registrations()->empty());
}

}  // namespace FLYTECD_UNITY_ID
