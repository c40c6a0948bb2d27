// A package with a binding type mismatch (valid-register.tgz with n1's STRING input bound to n0's
// INTEGER output) is refused everywhere FlyteAdmin's compiler would refuse it: `flytecd
// validate` and `flytecd compile` (exit 1, naming package, workflow, node and types), the
// registration pass (a failed item before any Create RPC), and the emulator's CreateWorkflow
// over gRPC (INVALID_ARGUMENT, workflow_manager.go getCompiledWorkflow's message).
#include <grpcpp/grpcpp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "daemon/ledger/ledger.hpp"
#include "daemon/registration/compile.hpp"
#include "daemon/registration/hydrate.hpp"
#include "daemon/registration/package.hpp"
#include "daemon/registration/registrar.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "test_paths.hpp"
#include "tests/oci/oci_test_support.hpp"
#include "tests/support/admin_client.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/tools.hpp"
#include "tests/unit/daemon/registration/mismatch_package.hpp"
#include "tests/unit/daemon/registration/package_bomb.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace fs = std::filesystem;
namespace fa = flyteidl::admin;
namespace fc = flyteidl::core;

namespace {

const char* k_mismatch =
    "packages/valid-register.tgz: workflow recipes.core.basic.basic_workflow.my_wf: node n1 "
    "input a: STRING is not castable from INTEGER (n0.t1_int_output)";

using Ran = flytecd_test::CliRun;
using flytecd_test::run_cli;

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << bytes;
  REQUIRE(out.good());
}

// A repository with one project and one registration of packages/valid-register.tgz.
struct Repo {
  fs::path dir;
  explicit Repo(const std::string& package_bytes) {
    static int n = 0;
    dir = fs::temp_directory_path() /
          ("flytecd-compile-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(dir);
    write(dir / "packages" / "valid-register.tgz", package_bytes);
    write(dir / "projects" / "flytesnacks" / "project.yaml",
          "apiVersion: flytecd/v1\nkind: Project\nid: flytesnacks\nname: flytesnacks\n");
    write(dir / "registrations" / "flytesnacks.yaml",
          "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata:\n  name: basic\n"
          "project: flytesnacks\ndomain: development\nversion: v1\n"
          "package: packages/valid-register.tgz\n");
  }
  ~Repo() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

registration::Package hydrated(const std::string& bytes) {
  auto pkg = registration::read_package(bytes, "valid-register.tgz");
  REQUIRE(pkg.ok());
  registration::HydrateParams p;
  p.project = "flytesnacks";
  p.domain = "development";
  p.version = "v1";
  REQUIRE(registration::hydrate(*pkg, p).ok());
  return std::move(*pkg);
}

struct Admin {
  std::unique_ptr<sinks::emulator::Emulator> emu;
  std::unique_ptr<flyteidl::service::AdminService::Stub> raw;
  Admin() {
    auto e = sinks::emulator::Emulator::start({});
    REQUIRE(e.ok());
    emu = std::move(*e);
    raw = flytecd_test::admin_stub(emu->address());
    flytecd_test::register_project(*raw, "flytesnacks");
  }
  // Creates the package's tasks, then its workflow: the workflow's status.
  grpc::Status create(const registration::Package& pkg) {
    for (const auto& e : pkg.entities) {
      if (e.kind != registration::EntityKind::task) continue;
      grpc::ClientContext ctx;
      fa::TaskCreateRequest req;
      *req.mutable_id() = e.id();
      *req.mutable_spec() = e.task;
      fa::TaskCreateResponse resp;
      auto st = raw->CreateTask(&ctx, req, &resp);
      REQUIRE((st.ok() || st.error_code() == grpc::StatusCode::ALREADY_EXISTS));
    }
    for (const auto& e : pkg.entities) {
      if (e.kind != registration::EntityKind::workflow) continue;
      grpc::ClientContext ctx;
      fa::WorkflowCreateRequest req;
      *req.mutable_id() = e.id();
      *req.mutable_spec() = e.workflow;
      fa::WorkflowCreateResponse resp;
      return raw->CreateWorkflow(&ctx, req, &resp);
    }
    FAIL("no workflow in the package");
    return grpc::Status::CANCELLED;
  }
};

}  // namespace

TEST_CASE("compile e2e: validate refuses a package with a binding type mismatch", "[compile]") {
  Repo bad(testing::binding_mismatch_package());
  auto r = run_cli("validate " + bad.dir.string());
  INFO(r.output);
  CHECK(r.rc == 1);
  CHECK_THAT(r.output, Catch::Contains(k_mismatch));
  CHECK_THAT(r.output, Catch::Contains("registrations/flytesnacks.yaml"));

  Repo good(testing::read_bytes(testing::package_fixtures() / "valid-register.tgz"));
  auto g = run_cli("validate " + good.dir.string());
  INFO(g.output);
  CHECK(g.rc == 0);
}

TEST_CASE("compile e2e: flytecd compile lists the error and exits 1, real archives exit 0",
          "[compile]") {
  Repo bad(testing::binding_mismatch_package());
  const std::string file = (bad.dir / "packages" / "valid-register.tgz").string();
  auto r = run_cli("compile " + file);
  INFO(r.output);
  CHECK(r.rc == 1);
  CHECK_THAT(r.output,
             Catch::Contains("error: valid-register.tgz: workflow "
                             "recipes.core.basic.basic_workflow.my_wf: node n1 input a: STRING is "
                             "not castable from INTEGER (n0.t1_int_output)"));
  auto h = run_cli("compile " + file + " -p flytesnacks -d development --version v1");
  CHECK(h.rc == 1);
  for (const char* f : {"valid-register.tgz", "flyte-package.tgz", "flytesnacks-core.tgz",
                        "valid-fast-register.tgz"}) {
    auto ok = run_cli("compile " + (testing::package_fixtures() / f).string());
    INFO(ok.output);
    CHECK(ok.rc == 0);
    CHECK_THAT(ok.output, Catch::Contains("compiles"));
  }
  auto fast = run_cli("compile " + (testing::package_fixtures() / "invalid-fast.tgz").string());
  CHECK(fast.rc == 1);
}

TEST_CASE("compile e2e: the emulator's CreateWorkflow answers INVALID_ARGUMENT as FlyteAdmin",
          "[compile]") {
  Admin admin;
  auto st = admin.create(hydrated(testing::binding_mismatch_package()));
  INFO(st.error_message());
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(),
             Catch::StartsWith("failed to compile workflow for [") &&
                 Catch::Contains("with err: Collected Errors: 1\n\tError 0: Code: "
                                 "MismatchingTypes, Node Id: n1, Description: The output variable "
                                 "'n0.t1_int_output' has type [simple:INTEGER], but it's assigned "
                                 "to the input variable 'n1.a' which has type type "
                                 "[simple:STRING]."));
  // The same workflow with its original binding is created.
  auto ok = admin.create(
      hydrated(testing::read_bytes(testing::package_fixtures() / "valid-register.tgz")));
  INFO(ok.error_message());
  CHECK(ok.ok());
}

TEST_CASE("compile e2e: the pass fails the registration before any Create RPC", "[compile]") {
  Admin admin;
  Repo bad(testing::binding_mismatch_package());
  sinks::flyteadmin::AdminConfig cfg;
  cfg.endpoint = admin.emu->address();
  cfg.insecure = true;
  auto sink = sinks::flyteadmin::AdminSink::connect(cfg, "test");
  REQUIRE(sink.ok());
  auto ledger = ledger::Ledger::open((bad.dir / "ledger.db").string());
  REQUIRE(ledger.ok());
  sources::oci::FetchOptions fo;
  fo.cache_dir = bad.dir / "cache";
  registration::DefaultPackageResolver packages(fo, "",
                                                registration::directory_reader(bad.dir.string()));
  model::Registration r;
  r.name = "basic";
  r.project = "flytesnacks";
  r.domain = "development";
  r.version = "v1";
  r.package = "packages/valid-register.tgz";
  r.source_kind = "WorkflowRegistration";
  for (bool dry_run : {true, false}) {
    registration::RegistrarOptions o;
    o.revision = "test";
    o.dry_run = dry_run;
    auto report = registration::reconcile_registrations({r}, **sink, packages, **ledger, o);
    REQUIRE(report.items.size() == 1);
    CHECK(report.items[0].state == flytecd::registration::RegistrationState::failed);
    CHECK_THAT(report.items[0].message, Catch::Contains(k_mismatch));
  }
  for (const char* rpc :
       {"CreateTask", "CreateWorkflow", "CreateLaunchPlan", "CreateUploadLocation"})
    CHECK(admin.emu->calls(rpc) == 0);
}

TEST_CASE("compile e2e: plan --git shows a head whose package does not compile as invalid",
          "[compile]") {
  Repo repo(testing::read_bytes(testing::package_fixtures() / "valid-register.tgz"));
  const std::string git =
      "git -c user.name=t -c user.email=t@example.com -c "
      "init.defaultBranch=main -c commit.gpgsign=false -C " +
      repo.dir.string() + " ";
  REQUIRE(std::system((git + "init -q && " + git + "add -A && " + git + "commit -qm base && " +
                       git + "branch -q base")
                          .c_str()) == 0);
  write(repo.dir / "packages" / "valid-register.tgz", testing::binding_mismatch_package());
  REQUIRE(std::system((git + "commit -qam change && " + git + "branch -q change").c_str()) == 0);
  const std::string args = "plan --git " + repo.dir.string() + " --base base --head change" +
                           " --state-dir " + (repo.dir / "state").string();
  auto r = run_cli(args);
  INFO(r.output);
  CHECK(r.rc == 1);
  CHECK_THAT(r.output, Catch::Contains("head revision is invalid") && Catch::Contains(k_mismatch));
  auto md = run_cli(args + " -o markdown");
  CHECK(md.rc == 1);
  CHECK_THAT(md.output, Catch::Contains(k_mismatch));
  // The base against itself compiles.
  auto same = run_cli("plan --git " + repo.dir.string() + " --base base --head base --state-dir " +
                      (repo.dir / "state").string());
  INFO(same.output);
  CHECK(same.rc == 0);
}

// `validate --packages`: OCI packages are fetched (Debian's docker-registry on loopback) and
// compiled too; without the flag only packages kept in the repository are.
TEST_CASE(
    "compile e2e: validate --packages fetches OCI packages and refuses one that does not "
    "compile",
    "[compile][oci]") {
  FLYTECD_REQUIRE_TOOL(!oci_test::registry_binary().empty(),
                       "docker-registry is not installed (Debian package docker-registry; "
                       "packaging/setup-debian.sh --tests installs it)");
  oci_test::Registry reg({});
  oci_test::Pusher(reg).push_package("flyte/bad", "v1", testing::binding_mismatch_package());
  oci_test::Pusher(reg).push_package(
      "flyte/good", "v1", testing::read_bytes(testing::package_fixtures() / "valid-register.tgz"));
  const fs::path dir =
      fs::temp_directory_path() / ("flytecd-compile-oci-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto repo = [&](const std::string& name, const std::string& repository) {
    const fs::path r = dir / name;
    write(r / "projects" / "flytesnacks" / "project.yaml",
          "apiVersion: flytecd/v1\nkind: Project\nid: flytesnacks\nname: flytesnacks\n");
    write(r / "registrations" / "flytesnacks.yaml",
          "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata:\n  name: basic\n"
          "project: flytesnacks\ndomain: development\nversion: v1\n"
          "package: oci://" +
              reg.host() + "/" + repository + ":v1\n");
    return r.string();
  };
  const std::string bad = repo("bad", "flyte/bad"), good = repo("good", "flyte/good");
  write(dir / "flytecd.yaml", "packages: {plainHttpRegistries: [\"" + reg.host() +
                                  "\"], cacheDir: " + (dir / "cache").string() + "}\n");
  const std::string config = " --config " + (dir / "flytecd.yaml").string();

  auto plain = run_cli("validate " + bad);
  INFO(plain.output);
  CHECK(plain.rc == 0);  // not fetched, not compiled

  auto fetched = run_cli("validate " + bad + " --packages" + config);
  INFO(fetched.output);
  CHECK(fetched.rc == 1);
  CHECK_THAT(fetched.output,
             Catch::Contains("flyte/bad:v1: workflow recipes.core.basic.basic_workflow.my_wf: "
                             "node n1 input a: STRING is not castable from INTEGER"));
  CHECK_THAT(fetched.output, Catch::Contains("registrations/flytesnacks.yaml"));

  auto ok = run_cli("validate " + good + " --packages" + config);
  INFO(ok.output);
  CHECK(ok.rc == 0);

  auto no_config =
      run_cli("validate " + good + " --packages --config " + (dir / "none.yaml").string());
  INFO(no_config.output);
  CHECK(no_config.rc == 1);  // a --config that cannot be read is an error, not ignored
  fs::remove_all(dir);
}

namespace {

// A workflow of `n` nodes that each carry a metadata name (or nothing, `empty`) and no id.
fa::WorkflowSpec nodes_without_id(int n, bool empty) {
  fa::WorkflowSpec spec;
  auto* id = spec.mutable_template_()->mutable_id();
  id->set_resource_type(fc::WORKFLOW);
  id->set_project("flytesnacks");
  id->set_domain("development");
  id->set_name("many.wf");
  id->set_version("v1");
  for (int i = 0; i < n; ++i) {
    auto* node = spec.mutable_template_()->add_nodes();
    if (!empty) node->mutable_metadata()->set_name(std::string(40, 'n'));
  }
  return spec;
}

}  // namespace

TEST_CASE("compile e2e: flytecd compile shows 20 of a repeated error, then how many more",
          "[compile]") {
  const fs::path dir = fs::temp_directory_path() / ("flytecd-many-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "many.tgz";
  test::write_package(file,
                      {{"000_many.wf_2.pb", nodes_without_id(5000, false).SerializeAsString()}});
  auto r = run_cli("compile " + file.string());
  fs::remove_all(dir);
  CHECK(r.rc == 1);
  size_t lines = 0, no_id = 0;
  for (size_t at = 0; (at = r.output.find('\n', at)) != std::string::npos; ++at) ++lines;
  for (size_t at = 0; (at = r.output.find("a node has no id", at)) != std::string::npos; ++at)
    ++no_id;
  INFO(r.output.substr(0, 4000));
  CHECK(no_id == 20);
  CHECK_THAT(r.output, Catch::Contains("error: … and 4,980 more of the same\n"));
  CHECK(lines < 200);  // every other message of those nodes is grouped the same way
  CHECK_THAT(r.output, Catch::Contains("does not compile"));
}

TEST_CASE("compile e2e: the emulator refuses a CreateWorkflow decode bomb before decoding it",
          "[compile][memory]") {
  Admin admin;
  fa::WorkflowCreateRequest req;
  *req.mutable_spec() = nodes_without_id(200000, true);  // 400 KB on the wire, ~30 MB decoded
  *req.mutable_id() = req.spec().template_().id();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  fa::WorkflowCreateResponse resp;
  auto st = admin.raw->CreateWorkflow(&ctx, req, &resp);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(),
             Catch::StartsWith("CreateWorkflow request: decoding it would take"));
  CHECK_THAT(st.error_message(), Catch::Contains("bytes per byte of protobuf"));
  // The emulator serves on: an ordinary package is created through the same (raw) methods.
  auto ok = admin.create(
      hydrated(testing::read_bytes(testing::package_fixtures() / "valid-register.tgz")));
  INFO(ok.error_message());
  CHECK(ok.ok());
}

namespace {

// The package without its task members (*_1.pb): its workflow references tasks it does not
// hold, as a package that reuses tasks registered by another does.
std::string without_tasks(const std::string& package) {
  auto members = testing::untar(package);
  std::vector<std::pair<std::string, std::string>> kept;
  for (auto& m : members)
    if (m.first.size() < 5 || m.first.compare(m.first.size() - 5, 5, "_1.pb") != 0)
      kept.push_back(std::move(m));
  REQUIRE(kept.size() + 2 == members.size());
  return testing::tgz(kept);
}

}  // namespace

// Issue 22 item 10: a task the package references but does not hold was a warning and its node
// went unchecked even with FlyteAdmin at hand. With a live target it is fetched (GetTask) and
// type-checked, as FlyteAdmin's CreateWorkflow checks it against its database.
TEST_CASE("compile e2e: references to registered tasks are type-checked against FlyteAdmin",
          "[compile]") {
  Admin admin;
  // valid-register.tgz's tasks are registered at v1 (its workflow too).
  REQUIRE(
      admin
          .create(hydrated(testing::read_bytes(testing::package_fixtures() / "valid-register.tgz")))
          .ok());
  sinks::flyteadmin::AdminConfig cfg;
  cfg.endpoint = admin.emu->address();
  cfg.insecure = true;
  cfg.max_retries = 0;  // the unreachable case below fails at once
  cfg.per_rpc_timeout_ms = 3000;
  auto sink = sinks::flyteadmin::AdminSink::connect(cfg, "test");
  REQUIRE(sink.ok());
  REQUIRE((*sink)->looks_up_entities());

  // The mismatched workflow alone, at v1: its tasks are the registered ones.
  const auto mismatch = hydrated(without_tasks(testing::binding_mismatch_package()));
  const auto offline = registration::compile_package(mismatch, "b.tgz");
  CHECK(offline.ok());  // offline: a warning, the node unchecked
  REQUIRE_FALSE(offline.warnings.empty());
  CHECK_THAT(offline.warnings[0], Catch::Contains("is not in the package; not checked"));
  const auto live = registration::compile_package(mismatch, "b.tgz", sink->get());
  CHECK_FALSE(live.ok());
  REQUIRE(live.errors.size() == 1);
  CHECK_THAT(live.errors[0], Catch::Contains("node n1 input a: STRING is not castable from "
                                             "INTEGER (n0.t1_int_output)"));
  CHECK(live.warnings.empty());
  // FlyteAdmin (the emulator) refuses the same workflow for the same reason.
  auto st = admin.create(mismatch);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::Contains("MismatchingTypes, Node Id: n1"));

  // The original workflow alone compiles against the registered tasks, without a warning.
  const auto good = hydrated(
      without_tasks(testing::read_bytes(testing::package_fixtures() / "valid-register.tgz")));
  const auto ok = registration::compile_package(good, "g.tgz", sink->get());
  CHECK(ok.ok());
  CHECK(ok.warnings.empty());

  // At a version nobody registered, the tasks are not found: FlyteAdmin's error, not a warning.
  auto pkg = registration::read_package(
      without_tasks(testing::read_bytes(testing::package_fixtures() / "valid-register.tgz")),
      "v9.tgz");
  REQUIRE(pkg.ok());
  registration::HydrateParams p;
  p.project = "flytesnacks";
  p.domain = "development";
  p.version = "v9";
  REQUIRE(registration::hydrate(*pkg, p).ok());
  const auto missing = registration::compile_package(*pkg, "v9.tgz", sink->get());
  CHECK_FALSE(missing.ok());
  REQUIRE_FALSE(missing.errors.empty());
  CHECK_THAT(missing.errors[0], Catch::Contains("@v9 not found"));
  CHECK(admin.emu->calls("GetTask") >= 2);

  // An unreachable target is an error of the lookup, never a silent pass.
  admin.emu.reset();
  const auto down = registration::check_compiles(good, "g.tgz", sink->get());
  CHECK_FALSE(down.ok());
  CHECK_THAT(down.error().message, Catch::Contains("look up task"));
}

}  // namespace FLYTECD_UNITY_ID
