// The FlyteAdmin sink's asynchronous steps (gRPC's callback client) against the emulator on
// loopback: retries on a timer, RegisterProject of a project that is there, the empty-scope
// refusal, the window, and the pass that records the steps that ended together in one ledger
// transaction.
#include <grpcpp/grpcpp.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "daemon/ledger/ledger.hpp"
#include "daemon/pass/apply.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "tests/support/steps.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using testing::label_step;
using testing::project_step;
namespace admin = flyteidl::admin;

namespace {

struct Target {
  std::unique_ptr<sinks::emulator::Emulator> emu;
  std::unique_ptr<sinks::flyteadmin::AdminSink> sink;

  explicit Target(const std::string& faults = "", int max_retries = 4, int window = 64) {
    sinks::emulator::Options opts;
    opts.seed = 7;
    auto rules = sinks::emulator::parse_faults(faults);
    REQUIRE(rules.ok());
    opts.faults = *rules;
    auto e = sinks::emulator::Emulator::start(opts);
    REQUIRE(e.ok());
    emu = std::move(*e);
    sinks::flyteadmin::AdminConfig cfg;
    cfg.endpoint = emu->address();
    cfg.insecure = true;
    cfg.per_rpc_timeout_ms = 5000;
    cfg.max_retries = max_retries;
    cfg.max_in_flight = window;
    auto s = sinks::flyteadmin::AdminSink::connect(cfg, "test");
    REQUIRE(s.ok());
    sink = std::move(*s);
  }
  // Runs every step through execute_async at once (the sink's gate bounds them) and waits for
  // all; their outcomes in step order.
  std::vector<Status> run(const std::vector<sinks::Step>& steps) {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<Status>> out(steps.size());
    size_t ended = 0;
    for (size_t i = 0; i < steps.size(); ++i)
      sink->execute_async(steps[i], [&, i](Status st) {
        std::lock_guard<std::mutex> lock(mu);
        out[i] = std::move(st);
        ++ended;
        cv.notify_one();
      });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ended == steps.size(); });
    std::vector<Status> statuses;
    for (auto& o : out) statuses.push_back(std::move(*o));
    return statuses;
  }
  uint64_t count(const std::string& key) const {
    auto counts = sink->rpc_counts();
    auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  }
};

std::string live_label(sinks::emulator::Emulator& emu, const std::string& project,
                       const std::string& workflow) {
  auto stub = flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel(emu.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  admin::WorkflowAttributesGetRequest req;
  req.set_project(project);
  req.set_domain("development");
  req.set_workflow(workflow);
  req.set_resource_type(admin::EXECUTION_CLUSTER_LABEL);
  admin::WorkflowAttributesGetResponse resp;
  auto st = stub->GetWorkflowAttributes(&ctx, req, &resp);
  if (!st.ok()) return "<" + st.error_message() + ">";
  return resp.attributes().matching_attributes().execution_cluster_label().value();
}

}  // namespace

TEST_CASE("admin sink async: 200 steps with 30% UNAVAILABLE answers all land, retried on a timer",
          "[admin-sink][async][faults]") {
  Target t("writes:rate=0.3,code=UNAVAILABLE", 8, 16);
  REQUIRE(t.run({project_step("p", "P")}).at(0));
  std::vector<sinks::Step> steps;
  for (int i = 0; i < 200; ++i)
    steps.push_back(label_step("p", "wf." + std::to_string(i), "c" + std::to_string(i)));
  auto statuses = t.run(steps);
  for (size_t i = 0; i < statuses.size(); ++i) {
    INFO(i << ": " << (statuses[i] ? "ok" : statuses[i].error().message));
    CHECK(statuses[i]);
  }
  // Every answer is counted, the refused ones too, and each step ended with one OK.
  CHECK(t.count("UpdateWorkflowAttributes OK") == 200);
  CHECK(t.count("UpdateWorkflowAttributes UNAVAILABLE") > 20);
  CHECK(t.count("UpdateWorkflowAttributes UNAVAILABLE") ==
        t.emu->calls("UpdateWorkflowAttributes") - 200);
  CHECK(live_label(*t.emu, "p", "wf.0") == "c0");
  CHECK(live_label(*t.emu, "p", "wf.199") == "c199");
}

TEST_CASE("admin sink async: a step whose retries run out fails with the last answer",
          "[admin-sink][async][faults]") {
  Target t("UpdateWorkflowAttributes:rate=1,code=UNAVAILABLE", 2);
  REQUIRE(t.run({project_step("p", "P")}).at(0));
  auto st = t.run({label_step("p", "wf", "c")}).at(0);
  REQUIRE_FALSE(st);
  CHECK(st.error().code == ErrorCode::unavailable);
  CHECK(st.error().message.find("flyteadmin: UpdateWorkflowAttributes: UNAVAILABLE") == 0);
  CHECK(t.emu->calls("UpdateWorkflowAttributes") == 3);  // the first call and 2 retries
  CHECK(t.count("UpdateWorkflowAttributes UNAVAILABLE") == 3);
}

TEST_CASE("admin sink async: a permanent refusal is not retried", "[admin-sink][async]") {
  Target t;
  // No project "nowhere": FlyteAdmin refuses the attributes of a project it does not have.
  auto st = t.run({label_step("nowhere", "wf", "c")}).at(0);
  REQUIRE_FALSE(st);
  CHECK_FALSE(st.error().retryable());
  CHECK(t.emu->calls("UpdateWorkflowAttributes") == 1);
}

TEST_CASE("admin sink async: creating a project that is there makes it match with UpdateProject",
          "[admin-sink][async]") {
  Target t;
  REQUIRE(t.run({project_step("p", "first name")}).at(0));
  CHECK(t.emu->calls("UpdateProject") == 0);  // registered: nothing more to do
  REQUIRE(t.run({project_step("p", "second name")}).at(0));
  CHECK(t.count("RegisterProject ALREADY_EXISTS") == 1);
  CHECK(t.emu->calls("UpdateProject") == 1);
  auto got = t.sink->observe();
  REQUIRE(got);
  CHECK(got->projects.at("p").name == "second name");
}

TEST_CASE("admin sink async: an empty project is refused before anything is sent",
          "[admin-sink][async]") {
  Target t;
  auto st = t.run({label_step("", "wf", "c")}).at(0);
  REQUIRE_FALSE(st);
  CHECK(st.error().code == ErrorCode::invalid_input);
  CHECK(st.error().message.find("not sent") != std::string::npos);
  CHECK(t.emu->calls("UpdateWorkflowAttributes") == 0);
  CHECK(t.sink->rpc_counts().empty());
}

TEST_CASE("admin sink async: at most maxInFlight steps are in flight", "[admin-sink][async]") {
  // Each write takes 100 ms in the emulator: 20 steps through a window of 4 cannot end in less
  // than 5 rounds of 100 ms, however fast the machine (a lower bound: it cannot flake).
  Target t("writes:latency=100ms", 4, 4);
  REQUIRE(t.run({project_step("p", "P")}).at(0));
  std::vector<sinks::Step> steps;
  for (int i = 0; i < 20; ++i) steps.push_back(label_step("p", "wf." + std::to_string(i), "c"));
  const auto started = std::chrono::steady_clock::now();
  for (const auto& st : t.run(steps)) CHECK(st);
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(480));
  CHECK(t.count("UpdateWorkflowAttributes OK") == 20);
}

TEST_CASE("admin sink async: an apply records the steps that ended together in one transaction",
          "[admin-sink][async][apply]") {
  // Each write waits 50 ms in the emulator, so the steps in flight end at about the same time.
  Target t("writes:latency=50ms");
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  reconcile::State desired;
  desired.projects["p"] = sinks::ProjectState{"p", "P", "", {}, false};
  for (int i = 0; i < 40; ++i) {
    auto s = label_step("p", "wf." + std::to_string(i), "c" + std::to_string(i));
    desired.overrides[s.key] = *s.desired;
  }
  pass::ApplyOptions o;
  o.revision = "r1";
  const auto before = (*l)->write_groups();
  auto r = pass::apply(*t.sink, **l, desired, o);
  INFO(r.error);
  REQUIRE(r.ok());
  CHECK(r.results.size() == 41);
  // 41 rows in fewer transactions; how many depends on how the answers arrive (about 2 steps a
  // transaction on a saturated machine). The exact grouping is apply_test's ("end together").
  CHECK((*l)->write_groups() - before < 41);
  auto managed = (*l)->managed();
  REQUIRE(managed);
  CHECK(managed->size() == 41);
  CHECK(live_label(*t.emu, "p", "wf.39") == "c39");
}

}  // namespace FLYTECD_UNITY_ID
