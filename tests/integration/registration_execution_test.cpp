// Registration planned, then executed: what execution registers is what the plan saw (OCI tags that
// move, packages that change, entities FlyteAdmin lost), and `flytecd apply` end to end with
// overrides and packages. Against the FlyteAdmin emulator over real gRPC on loopback.

#include <archive.h>
#include <archive_entry.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "daemon/registration/registrar_context.hpp"
#include "tests/integration/registration_harness.hpp"
#include "tests/oci/oci_test_support.hpp"
#include "tests/support/tools.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace registration_test;

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

namespace {
// The harness's resolver, counting the loads of each package address.
class CountingResolver : public registration::PackageResolver {
 public:
  explicit CountingResolver(registration::PackageResolver& inner) : m_inner(inner) {}
  Result<sources::LoadedPackage> load(const model::Registration& r,
                                      const sources::LoadControl& control) override {
    {
      std::lock_guard<std::mutex> lock(m_mu);
      ++m_loads[r.package];
    }
    return m_inner.load(r, control);
  }
  std::string identity(const model::Registration& r) const override { return m_inner.identity(r); }
  std::map<std::string, int> loads() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_loads;
  }

 private:
  registration::PackageResolver& m_inner;
  std::mutex m_mu;
  std::map<std::string, int> m_loads;
};
}  // namespace

TEST_CASE("a plan reads each package once however many registrations name it",
          "[registration][integration][plan]") {
  Harness h;
  // Nine registrations of one package (three names and versions in each domain, none activating:
  // two would keep one launch plan ACTIVE) and one of another.
  std::vector<model::Registration> regs;
  for (const char* domain : {"development", "staging", "production"})
    for (const std::string name : {"a", "b", "c"})
      regs.push_back(reg(name, "flytesnacks", domain, "v-" + name, "packages/flytesnacks-core.tgz",
                         model::Activate::none));
  regs.push_back(reg("other", "ml", "development", "v1", "packages/valid-register.tgz"));
  registration::RegistrarOptions o;
  o.revision = "test";
  o.parallelism = 8;
  CountingResolver counting(*h.packages);
  auto plan = registration::plan_registrations(regs, *h.sink, counting, *h.ledger, o);
  REQUIRE(plan.ok());
  CHECK(counting.loads() == std::map<std::string, int>{{"packages/flytesnacks-core.tgz", 1},
                                                       {"packages/valid-register.tgz", 1}});
  // Each registration still planned from its package: the same digest and counts as alone.
  auto alone = registration::plan_registrations({regs[4]}, *h.sink, *h.packages, *h.ledger, o);
  REQUIRE(alone.ok());
  REQUIRE(plan->items.size() == regs.size());
  for (const auto& it : plan->items) {
    INFO(it.key << ": " << it.message);
    CHECK(it.state == registration::ItemState::register_);
    if (it.registration->package != regs[4].package) continue;
    CHECK(it.package.digest == alone->items.at(0).package.digest);
    CHECK(it.launch_plans == alone->items.at(0).launch_plans);
    CHECK(it.count(registration::StepKind::create_tasks) == 1);
    CHECK(it.steps.at(2).count == 39);
  }

  // Executed, then planned again: in sync, each package read once more.
  auto rep = registration::execute_registrations(*plan, *h.sink, counting, *h.ledger, o);
  REQUIRE(rep.ok());
  const auto before = counting.loads();
  auto again = registration::plan_registrations(regs, *h.sink, counting, *h.ledger, o);
  REQUIRE(again.ok());
  for (const auto& it : again->items) CHECK(it.state == registration::ItemState::in_sync);
  auto after = counting.loads();
  CHECK(after["packages/flytesnacks-core.tgz"] - before.at("packages/flytesnacks-core.tgz") == 1);
  CHECK(after["packages/valid-register.tgz"] - before.at("packages/valid-register.tgz") == 1);
}

// A registration skipped before it reads its package (cancelled, FlyteAdmin unreachable, its
// scope's launch plans unreadable) gives up its share: the bytes are not held for it until the
// plan's observation ends.
TEST_CASE("a registration skipped before reading its package does not keep the package held",
          "[registration][integration][plan]") {
  Harness h;
  std::vector<model::Registration> regs;
  for (const std::string name : {"a", "b", "c"})
    regs.push_back(reg(name, "flytesnacks", "development", "v-" + name,
                       "packages/flytesnacks-core.tgz", model::Activate::none));
  registration::RegistrarOptions o;
  registration::MemoryBudget memory(1ull << 30);
  CircuitBreaker breaker;
  registration::detail::Context ctx(*h.sink, *h.packages, *h.ledger, o, memory, breaker);
  {
    // Skipped before anyone loaded it.
    registration::detail::SharedLoads loads(ctx, regs);
    const auto& order = loads.order();
    loads.skip(order[0]);
    auto first = loads.get(order[1]);
    REQUIRE(*first);
    CHECK(loads.held() == 1);  // the third still asks
    auto last = loads.get(order[2]);
    CHECK(last == first);
    CHECK(loads.held() == 0);
  }
  {
    // Skipped after the first loaded it.
    registration::detail::SharedLoads loads(ctx, regs);
    const auto& order = loads.order();
    auto first = loads.get(order[0]);
    REQUIRE(*first);
    CHECK(loads.held() == 1);
    loads.skip(order[1]);
    CHECK(loads.held() == 1);
    loads.skip(order[2]);
    CHECK(loads.held() == 0);
  }
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

TEST_CASE(
    "registered is observed per scope, not per registration: the versions FlyteAdmin lacks "
    "register again",
    "[registration][integration]") {
  Harness h;
  Harness other;  // another FlyteAdmin, which holds only v2
  std::vector<model::Registration> regs;
  for (const char* v : {"v1", "v2", "v3"})
    regs.push_back(reg(std::string("small-") + v, "flytesnacks", "development", v,
                       "packages/valid-register.tgz", model::Activate::none));
  REQUIRE(h.run(regs).ok());
  REQUIRE(other.run({regs[1]}).ok());
  registration::RegistrarOptions dry;
  dry.revision = "test";
  dry.dry_run = true;
  dry.parallelism = 4;
  const uint64_t lists = other.emu->calls("ListLaunchPlans");
  const uint64_t writes = other.entity_writes();
  auto plan = registration::reconcile_registrations(regs, *other.sink, *h.packages, *h.ledger, dry);
  REQUIRE(plan.ok());
  // One ListLaunchPlans for the three versions of the one scope (it was one per registration).
  CHECK(other.emu->calls("ListLaunchPlans") == lists + 1);
  CHECK(item(plan, "small-v2").state == flytecd::registration::RegistrationState::in_sync);
  for (const char* name : {"small-v1", "small-v3"}) {
    const auto& o = item(plan, name);
    INFO(registration::describe(o));
    CHECK(o.state == flytecd::registration::RegistrationState::register_);
    CHECK_THAT(registration::describe(o), Catch::Contains("missing in FlyteAdmin: launch plan"));
  }
  CHECK(other.entity_writes() == writes);  // a dry run
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
