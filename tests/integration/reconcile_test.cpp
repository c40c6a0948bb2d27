// Reconciling projects and overrides against the FlyteAdmin emulator over real gRPC on loopback.
// Live state is checked through raw List RPCs, not through flytecd's own view.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "daemon/cli/commands.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/model/loader.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/pass/apply.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "sources/local/directory_reader.hpp"
#include "test_paths.hpp"
#include "tests/integration/target_state.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace fs = std::filesystem;
namespace admin = flyteidl::admin;
using reconcile::State;

namespace {

const std::vector<std::string> k_writes = {"RegisterProject",
                                           "UpdateProject",
                                           "UpdateProjectAttributes",
                                           "UpdateProjectDomainAttributes",
                                           "UpdateWorkflowAttributes",
                                           "DeleteProjectAttributes",
                                           "DeleteProjectDomainAttributes",
                                           "DeleteWorkflowAttributes"};

State example_desired() {
  auto files = sources::local::read_yaml_tree(fs::path(FLYTECD_SOURCE_DIR) / "repo-layout-example",
                                              4u << 20);
  REQUIRE(files.ok());
  auto r = model::load_documents(*files, model::Limits{}, model::Policy{});
  REQUIRE(r.ok());
  return reconcile::desired_state(r.documents);
}

struct Harness {
  std::unique_ptr<sinks::emulator::Emulator> emu;
  std::unique_ptr<sinks::flyteadmin::AdminSink> sink;
  std::unique_ptr<ledger::Ledger> ledger;
  std::unique_ptr<flyteidl::service::AdminService::Stub> raw;  // "another client"

  explicit Harness(sinks::emulator::Options opts = {},
                   const std::string& ledger_path = ":memory:") {
    auto e = sinks::emulator::Emulator::start(opts);
    REQUIRE(e.ok());
    emu = std::move(*e);
    connect();
    auto l = ledger::Ledger::open(ledger_path);
    REQUIRE(l.ok());
    ledger = std::move(*l);
  }
  void connect() {
    sinks::flyteadmin::AdminConfig cfg;
    cfg.endpoint = emu->address();
    cfg.insecure = true;
    cfg.per_rpc_timeout_ms = 5000;
    auto s = sinks::flyteadmin::AdminSink::connect(cfg, "test");
    REQUIRE(s.ok());
    sink = std::move(*s);
    raw = flyteidl::service::AdminService::NewStub(
        grpc::CreateChannel(emu->address(), grpc::InsecureChannelCredentials()));
  }
  uint64_t writes() const {
    uint64_t n = 0;
    for (const auto& m : k_writes) n += emu->calls(m);
    return n;
  }
  pass::ApplyReport apply(const State& desired, reconcile::Policy policy = {}) {
    pass::ApplyOptions o;
    o.revision = "test";
    o.policy = policy;
    return pass::apply(*sink, *ledger, desired, o);
  }
  // Every override row, read with ListMatchableAttributes by another client: key -> bytes.
  std::map<std::string, std::string> live_rows() {
    std::map<std::string, std::string> out;
    for (auto type : model::all_attribute_types()) {
      grpc::ClientContext ctx;
      admin::ListMatchableAttributesRequest req;
      req.set_resource_type(type);
      admin::ListMatchableAttributesResponse resp;
      REQUIRE(raw->ListMatchableAttributes(&ctx, req, &resp).ok());
      for (const auto& row : resp.configurations())
        out[reconcile::override_key(model::Scope{row.project(), row.domain(), row.workflow()},
                                    type)] = model::canonical_bytes(row.attributes());
    }
    return out;
  }
  std::set<std::string> live_projects() {
    std::set<std::string> out;
    for (const char* f : {"neq(state,1)", "eq(state,1)"}) {
      grpc::ClientContext ctx;
      admin::ProjectListRequest req;
      req.set_filters(f);
      admin::Projects resp;
      REQUIRE(raw->ListProjects(&ctx, req, &resp).ok());
      for (const auto& p : resp.projects()) out.insert(p.id());
    }
    return out;
  }
  void set_label(const model::Scope& s, const std::string& value) {
    grpc::ClientContext ctx;
    admin::MatchingAttributes ma;
    ma.mutable_execution_cluster_label()->set_value(value);
    grpc::Status st;
    if (s.workflow.empty()) {
      admin::ProjectDomainAttributesUpdateRequest req;
      req.mutable_attributes()->set_project(s.project);
      req.mutable_attributes()->set_domain(s.domain);
      *req.mutable_attributes()->mutable_matching_attributes() = ma;
      admin::ProjectDomainAttributesUpdateResponse resp;
      st = raw->UpdateProjectDomainAttributes(&ctx, req, &resp);
    } else {
      admin::WorkflowAttributesUpdateRequest req;
      req.mutable_attributes()->set_project(s.project);
      req.mutable_attributes()->set_domain(s.domain);
      req.mutable_attributes()->set_workflow(s.workflow);
      *req.mutable_attributes()->mutable_matching_attributes() = ma;
      admin::WorkflowAttributesUpdateResponse resp;
      st = raw->UpdateWorkflowAttributes(&ctx, req, &resp);
    }
    REQUIRE(st.ok());
  }
};

std::map<std::string, std::string> desired_rows(const State& d) {
  std::map<std::string, std::string> out;
  for (const auto& [k, o] : d.overrides) out[k] = model::canonical_bytes(o.value);
  return out;
}

void require_converged(const pass::ApplyReport& r) {
  INFO("error: " << r.error << ", failed steps: " << r.failed << ", rounds: " << r.rounds);
  REQUIRE(r.ok());
}

void check_ledger_matches(ledger::Ledger& l, const State& desired) {
  auto managed = l.managed();
  REQUIRE(managed.ok());
  for (const auto& [k, o] : desired.overrides) {
    INFO(k);
    REQUIRE(managed->count(k));
    CHECK(managed->at(k).hash == reconcile::hash_of(o));
  }
  for (const auto& [id, p] : desired.projects) CHECK(managed->count(reconcile::project_key(id)));
  auto ic = l.integrity_check();
  REQUIRE(ic.ok());
  CHECK(*ic == "ok");
}

}  // namespace

TEST_CASE("reconcile: applying the example makes live equal desired, a second apply writes nothing",
          "[integration][reconcile]") {
  Harness h;
  State desired = example_desired();
  require_converged(h.apply(desired));
  CHECK(h.live_rows() == desired_rows(desired));
  for (const auto& [id, p] : desired.projects) CHECK(h.live_projects().count(id));
  check_ledger_matches(*h.ledger, desired);

  uint64_t before = h.writes();
  CHECK(before > 0);
  auto again = h.apply(desired);
  require_converged(again);
  CHECK(again.first_plan.steps.empty());
  CHECK(h.writes() == before);
}

TEST_CASE("reconcile: a change by another client is drift, reverted only with self-heal",
          "[integration][reconcile]") {
  Harness h;
  State desired = example_desired();
  require_converged(h.apply(desired));
  // Pick a managed project-domain EXECUTION_CLUSTER_LABEL row, or create the scenario on one.
  const auto it =
      std::find_if(desired.overrides.begin(), desired.overrides.end(),
                   [](const auto& kv) { return kv.second.type == admin::EXECUTION_CLUSTER_LABEL; });
  REQUIRE(it != desired.overrides.end());
  const model::Scope scope = it->second.scope;
  REQUIRE(scope.level() != model::Level::project);
  h.set_label(scope, "changed-by-hand");
  auto changed = h.live_rows();

  reconcile::Policy report_only;
  report_only.self_heal = false;
  auto r1 = h.apply(desired, report_only);
  require_converged(r1);
  REQUIRE(r1.first_plan.drift.size() == 1);
  CHECK(r1.first_plan.drift[0].key == it->first);
  CHECK(h.live_rows() == changed);  // reported, not reverted

  auto r2 = h.apply(desired);
  require_converged(r2);
  REQUIRE(r2.first_plan.drift.size() == 1);
  CHECK(r2.first_plan.drift[0].healed);
  CHECK(h.live_rows() == desired_rows(desired));
}

TEST_CASE("reconcile: unmanaged rows stay untouched, an override removed from Git is deleted",
          "[integration][reconcile]") {
  Harness h;
  State desired = example_desired();
  require_converged(h.apply(desired));
  model::Scope foreign{"flytesnacks", "staging", "someone.elses.workflow"};
  h.set_label(foreign, "theirs");
  const std::string foreign_key = reconcile::override_key(foreign, admin::EXECUTION_CLUSTER_LABEL);

  // Remove one workflow-level override from Git.
  auto victim = std::find_if(
      desired.overrides.begin(), desired.overrides.end(),
      [](const auto& kv) { return kv.second.scope.level() == model::Level::workflow; });
  REQUIRE(victim != desired.overrides.end());
  const std::string victim_key = victim->first;
  desired.overrides.erase(victim);

  auto r = h.apply(desired);
  require_converged(r);
  CHECK(std::find(r.first_plan.unmanaged.begin(), r.first_plan.unmanaged.end(), foreign_key) !=
        r.first_plan.unmanaged.end());
  auto rows = h.live_rows();
  CHECK(rows.count(foreign_key) == 1);
  CHECK(rows.count(victim_key) == 0);
  rows.erase(foreign_key);
  CHECK(rows == desired_rows(desired));
  CHECK(h.ledger->managed()->count(victim_key) == 0);
}

TEST_CASE("reconcile: the mass-prune guard refuses and deletes nothing",
          "[integration][reconcile]") {
  Harness h;
  State desired = example_desired();
  require_converged(h.apply(desired));
  auto before = h.live_rows();
  uint64_t writes = h.writes();
  State emptied = desired;
  emptied.overrides.clear();
  auto r = h.apply(emptied);
  CHECK(r.refused);
  CHECK_FALSE(r.ok());
  CHECK(r.error.find("refusing to remove") != std::string::npos);
  CHECK(h.live_rows() == before);
  CHECK(h.writes() == writes);
  reconcile::Policy allow;
  allow.allow_mass_prune = true;
  require_converged(h.apply(emptied, allow));
  CHECK(h.live_rows().empty());
}

TEST_CASE(
    "reconcile: deleting a broad row converges although FlyteAdmin cascades it to narrower rows",
    "[integration][reconcile]") {
  Harness h;
  State desired;
  desired.projects["p"] = reconcile::ProjectState{"p", "P", "", {}, false};
  auto add = [&](model::Scope s, const std::string& v) {
    reconcile::OverrideState o;
    o.scope = s;
    o.type = admin::EXECUTION_CLUSTER_LABEL;
    o.value.mutable_execution_cluster_label()->set_value(v);
    desired.overrides[reconcile::override_key(s, o.type)] = o;
  };
  add({"p", "", ""}, "project");
  add({"p", "development", ""}, "pd");
  add({"p", "development", "wf"}, "wf");
  add({"p", "staging", "wf"}, "wf-staging");
  require_converged(h.apply(desired));
  REQUIRE(h.live_rows() == desired_rows(desired));

  desired.overrides.erase(reconcile::override_key({"p", "", ""}, admin::EXECUTION_CLUSTER_LABEL));
  auto r = h.apply(desired);
  require_converged(r);
  CHECK(h.live_rows() == desired_rows(desired));
  // The plan predicted the cascade: the narrower rows are re-created in the same reconcile.
  size_t recreated = 0;
  for (const auto& s : r.first_plan.steps)
    recreated += s.reason.find("cascade") != std::string::npos;
  CHECK(recreated == 3);
  check_ledger_matches(*h.ledger, desired);
}

TEST_CASE("reconcile: import then plan shows no changes", "[integration][reconcile]") {
  fs::path dir = fs::temp_directory_path() / ("flytecd-import-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  cli::TargetOptions t;
  t.state_dir = (dir / "state").string();
  t.repo = (fs::path(FLYTECD_SOURCE_DIR) / "repo-layout-example").string();
  std::ostringstream out, err;
  REQUIRE(cli::run_apply(t, "text", out, err) == 0);
  // The state directory that applied the example manages its registrations, which an imported
  // repository does not declare: the check says so and import exits 1 (the files are written).
  std::ostringstream import_out;
  CHECK(cli::run_import(t, (dir / "imported").string(), import_out, err) == 1);
  INFO(import_out.str() << err.str());
  CHECK(import_out.str().find("would remove 6 registration(s) flytecd manages") !=
        std::string::npos);
  REQUIRE(fs::exists(dir / "imported" / "projects"));
  // Against the same deployment, with a ledger that never saw this repository.
  cli::TargetOptions fresh = t;
  fs::create_directories(dir / "fresh-state");
  fs::copy_file(dir / "state/emulator.db", dir / "fresh-state/emulator.db");
  fresh.state_dir = (dir / "fresh-state").string();
  fresh.repo = (dir / "imported").string();
  std::ostringstream plan_out;
  CHECK(cli::run_plan_live(fresh, "text", plan_out, err) == 0);
  INFO(plan_out.str());
  CHECK(plan_out.str().find("no changes") != std::string::npos);
  std::ostringstream apply_out;
  CHECK(cli::run_apply(fresh, "text", apply_out, err) == 0);
  CHECK(apply_out.str().find("applied 0 steps") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("reconcile: 30% UNAVAILABLE on every write plus 200 ms latency still converges",
          "[integration][reconcile][faults]") {
  sinks::emulator::Options opts;
  opts.seed = 42;
  auto rule = sinks::emulator::parse_fault("writes:rate=0.3,code=UNAVAILABLE,latency=200ms");
  REQUIRE(rule.ok());
  opts.faults.push_back(*rule);
  Harness h(opts);
  State desired = example_desired();
  auto r = h.apply(desired);
  require_converged(r);
  h.emu->set_faults({});
  CHECK(h.live_rows() == desired_rows(desired));
  check_ledger_matches(*h.ledger, desired);
  CHECK(h.apply(desired).first_plan.steps.empty());
}

TEST_CASE("reconcile: the emulator killed mid-apply and restarted, the next apply converges",
          "[integration][reconcile][faults]") {
  fs::path dir = fs::temp_directory_path() / ("flytecd-restart-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  sinks::emulator::Options opts;
  opts.db_path = (dir / "admin.db").string();
  auto slow = sinks::emulator::parse_fault("writes:latency=40ms");
  REQUIRE(slow.ok());
  opts.faults.push_back(*slow);
  Harness h(opts, (dir / "ledger.db").string());
  State desired = example_desired();
  const std::string address = h.emu->address();
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    h.emu->shutdown();
  });
  pass::ApplyOptions ao;
  ao.revision = "r1";
  ao.max_rounds = 1;
  auto interrupted = pass::apply(*h.sink, *h.ledger, desired, ao);
  killer.join();
  CHECK_FALSE(interrupted.ok());
  // Restart on the same port and database.
  opts.listen = address;
  opts.faults.clear();
  auto again = sinks::emulator::Emulator::start(opts);
  REQUIRE(again.ok());
  h.emu = std::move(*again);
  h.connect();
  require_converged(h.apply(desired));
  CHECK(h.live_rows() == desired_rows(desired));
  check_ledger_matches(*h.ledger, desired);
  fs::remove_all(dir);
}

TEST_CASE(
    "reconcile: flytecd apply killed with SIGKILL at 20 points, each following apply converges",
    "[integration][reconcile][faults]") {
  fs::path dir = fs::temp_directory_path() / ("flytecd-kill-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  State desired = example_desired();
  const std::string repo = (fs::path(FLYTECD_SOURCE_DIR) / "repo-layout-example").string();
  auto run = [&](const std::string& endpoint, int kill_after_ms) -> int {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int log = open((dir / "apply.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(log, 1);
      dup2(log, 2);
      execl(FLYTECD_BINARY, FLYTECD_BINARY, "apply", "--repo", repo.c_str(), "--state-dir",
            (dir / "state").c_str(), "--admin-endpoint", endpoint.c_str(), "--insecure",
            "--parallelism", "2", "--log-level", "error", static_cast<char*>(nullptr));
      _exit(127);
    }
    if (kill_after_ms >= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kill_after_ms));
      kill(pid, SIGKILL);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  };
  for (int i = 0; i < 20; ++i) {
    // A fresh deployment each time (a target of its own, so its ledger starts empty), so every
    // kill lands mid-apply.
    sinks::emulator::Options opts;
    auto slow = sinks::emulator::parse_fault("writes:latency=15ms");
    opts.faults.push_back(*slow);
    auto emu = sinks::emulator::Emulator::start(opts);
    REQUIRE(emu.ok());
    const int delay = 40 + i * 25;
    run((*emu)->address(), delay);
    (*emu)->set_faults({});
    INFO("killed after " << delay << " ms");
    int rc = run((*emu)->address(), -1);
    std::ifstream log(dir / "apply.log");
    std::stringstream text;
    text << log.rdbuf();
    INFO(text.str());
    REQUIRE(rc == 0);
    auto l =
        ledger::Ledger::open(testing::target_ledger(dir / "state", (*emu)->address()).string());
    REQUIRE(l.ok());
    check_ledger_matches(**l, desired);
  }
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
