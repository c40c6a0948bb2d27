// The Flyte 2 sink against the Flyte 2 emulator over real gRPC on loopback, driven by the same
// apply() the reconcile pass runs: a round trip that writes nothing the second time, a write
// between flytecd's read and its write (FailedPrecondition: re-read, drift with values, healed
// with self-heal, left and reported without it), and 8 concurrent out-of-band writers.
#include "sinks/flyte2/flyte2_sink.hpp"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <thread>

#include "daemon/pass/apply.hpp"
#include "daemon/reconcile/plan.hpp"
#include "flyteidl2/project/project_service.grpc.pb.h"
#include "flyteidl2/settings/settings_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace fset = flyteidl2::settings;

namespace {

struct Peer {
  std::unique_ptr<sinks::emulator::Emulator> emu;
  std::unique_ptr<fset::SettingsService::Stub> stub;
  std::unique_ptr<sinks::flyte2::Flyte2Sink> sink;

  explicit Peer(std::vector<std::string> schema_lacks = {}) {
    sinks::emulator::Options o;
    o.flyte2 = true;
    o.flyte2_schema_lacks = std::move(schema_lacks);
    o.db_path = ":memory:";
    auto started = sinks::emulator::Emulator::start(o);
    if (!started) FAIL(started.error().message);
    emu = std::move(*started);
    stub = fset::SettingsService::NewStub(
        grpc::CreateChannel(emu->address(), grpc::InsecureChannelCredentials()));
    sinks::flyteadmin::AdminConfig cfg;
    cfg.endpoint = emu->address();
    cfg.insecure = true;
    auto s = sinks::flyte2::Flyte2Sink::connect(cfg, "flyte2 test");
    if (!s) FAIL(s.error().message);
    sink = std::move(*s);
  }
  // The record at `key`'s own scope, as the server holds it.
  fset::SettingsRecord read(const std::string& object_key) {
    fset::GetSettingsForEditRequest req;
    *req.mutable_key() = *sinks::flyte2::settings_key_of(object_key);
    fset::GetSettingsForEditResponse resp;
    grpc::ClientContext ctx;
    REQUIRE(stub->GetSettingsForEdit(&ctx, req, &resp).ok());
    return resp.levels(resp.levels_size() - 1);
  }
  // An out-of-band write of the default queue at `key`: Update with the version read (Create when
  // there is none), retried on a stale version; false if it never lands.
  bool write_queue(const std::string& object_key, const std::string& queue, int attempts = 50) {
    for (int i = 0; i < attempts; ++i) {
      auto rec = read(object_key);
      fset::Settings s = rec.settings();
      s.mutable_run()->mutable_default_queue()->set_state(fset::SETTING_STATE_VALUE);
      s.mutable_run()->mutable_default_queue()->set_string_value(queue);
      grpc::ClientContext ctx;
      grpc::Status st;
      if (rec.version() == 0) {
        fset::CreateSettingsRequest req;
        *req.mutable_key() = rec.key();
        *req.mutable_settings() = s;
        fset::CreateSettingsResponse resp;
        st = stub->CreateSettings(&ctx, req, &resp);
      } else {
        fset::UpdateSettingsRequest req;
        *req.mutable_key() = rec.key();
        *req.mutable_settings() = s;
        req.set_version(rec.version());
        fset::UpdateSettingsResponse resp;
        st = stub->UpdateSettings(&ctx, req, &resp);
      }
      if (st.ok()) return true;
      if (st.error_code() != grpc::StatusCode::FAILED_PRECONDITION &&
          st.error_code() != grpc::StatusCode::ALREADY_EXISTS)
        return false;
    }
    return false;
  }
};

sinks::ObjectValue queue_settings(const std::string& queue, const std::string& memory = "") {
  auto s = std::make_shared<fset::Settings>();
  s->mutable_run()->mutable_default_queue()->set_state(fset::SETTING_STATE_VALUE);
  s->mutable_run()->mutable_default_queue()->set_string_value(queue);
  if (!memory.empty()) {
    auto* m = s->mutable_task_resource()->mutable_max()->mutable_memory();
    m->set_state(fset::SETTING_STATE_VALUE);
    m->set_quantity_value(memory);
  }
  return sinks::ObjectValue{"settings", std::move(s)};
}

const std::string k_project = "settings/flyte/development/flytesnacks";
const std::string k_domain = "settings/flyte/development/";

std::unique_ptr<ledger::Ledger> memory_ledger() {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l.ok());
  return std::move(*l);
}

// Wraps the sink: `before_write` runs once, just before the first write step reaches the server
// (after flytecd observed): an out-of-band writer between flytecd's read and its write.
class RacedSink final : public sinks::Sink {
 public:
  RacedSink(sinks::Sink& inner, std::function<void()> before_write)
      : m_inner(inner), m_before(std::move(before_write)) {}
  sinks::Capabilities capabilities() const override { return m_inner.capabilities(); }
  void expect(const std::set<std::string>& keys) override { m_inner.expect(keys); }
  Result<sinks::State> observe() override { return m_inner.observe(); }
  Status execute(const sinks::Step& s) override {
    if (s.action != sinks::Action::adopt && !m_fired.exchange(true)) m_before();
    Status st = m_inner.execute(s);
    if (!st) errors.push_back(st.error());
    return st;
  }
  std::string describe() const override { return m_inner.describe(); }
  std::vector<Error> errors;

 private:
  sinks::Sink& m_inner;
  std::function<void()> m_before;
  std::atomic<bool> m_fired{false};
};

pass::ApplyReport run_apply(sinks::Sink& sink, ledger::Ledger& ledger,
                            const reconcile::State& desired, bool self_heal,
                            const std::string& revision, bool prune = false) {
  auto managed = ledger.managed();
  REQUIRE(managed.ok());
  sink.expect(reconcile::expected_objects(desired, *managed));
  pass::ApplyOptions o;
  o.revision = revision;
  o.policy.self_heal = self_heal;
  o.policy.prune = prune;
  o.policy.allow_empty = true;
  return pass::apply(sink, ledger, desired, o);
}

std::string queue_of(const fset::SettingsRecord& r) {
  return r.settings().run().default_queue().string_value();
}

}  // namespace

TEST_CASE("flyte2 sink: round trip into the emulator, a second apply writes nothing",
          "[flyte2][sink]") {
  Peer peer;
  auto ledger = memory_ledger();
  reconcile::State desired;
  desired.objects[k_project] = queue_settings("gpu", "8Gi");
  desired.objects[k_domain] = queue_settings("default");

  auto first = run_apply(*peer.sink, *ledger, desired, true, "r1");
  INFO(first.error);
  REQUIRE(first.ok());
  CHECK(first.rpc_steps == 2);
  CHECK(peer.emu->calls("CreateSettings") == 2);
  auto rec = peer.read(k_project);
  CHECK(rec.version() == 1);
  CHECK(queue_of(rec) == "gpu");
  CHECK(rec.settings().task_resource().max().memory().quantity_value() == "8Gi");

  const uint64_t creates = peer.emu->calls("CreateSettings");
  const uint64_t updates = peer.emu->calls("UpdateSettings");
  auto second = run_apply(*peer.sink, *ledger, desired, true, "r1");
  REQUIRE(second.ok());
  CHECK(second.rpc_steps == 0);
  CHECK(second.first_plan.in_sync == 2);
  CHECK(peer.emu->calls("CreateSettings") == creates);
  CHECK(peer.emu->calls("UpdateSettings") == updates);

  // Git changes one leaf: an Update with the version observed, the record's version moves on.
  desired.objects[k_project] = queue_settings("cpu", "8Gi");
  auto third = run_apply(*peer.sink, *ledger, desired, true, "r2");
  REQUIRE(third.ok());
  CHECK(third.rpc_steps == 1);
  rec = peer.read(k_project);
  CHECK(rec.version() == 2);
  CHECK(queue_of(rec) == "cpu");
  // The ledger records the server's version beside the hash.
  auto recorded = ledger->managed();
  REQUIRE(recorded.ok());
  CHECK(recorded->at(k_project).version == 2);
  CHECK(recorded->at(k_domain).version == 1);

  // Removed from Git (prune on): the record is cleared to empty settings, and read as absent.
  desired.objects.erase(k_domain);
  auto pruned = run_apply(*peer.sink, *ledger, desired, false, "r3", true);
  REQUIRE(pruned.ok());
  auto cleared = peer.read(k_domain);
  CHECK(cleared.version() == 2);
  CHECK(cleared.settings().ByteSizeLong() == 0);
  auto live = peer.sink->observe();
  REQUIRE(live.ok());
  CHECK(live->objects.count(k_domain) == 0);
  CHECK(live->objects.count(k_project) == 1);
}

TEST_CASE(
    "flyte2 sink: a write between flytecd's read and its write is FailedPrecondition: "
    "re-read, drift with values, healed with self-heal or left without it",
    "[flyte2][sink]") {
  for (const bool self_heal : {true, false}) {
    DYNAMIC_SECTION("selfHeal " << self_heal) {
      Peer peer;
      auto ledger = memory_ledger();
      reconcile::State desired;
      desired.objects[k_project] = queue_settings("gpu");
      REQUIRE(run_apply(*peer.sink, *ledger, desired, self_heal, "r1").ok());

      // Git changes gpu -> cpu; someone writes "theirs" after flytecd read version 1.
      desired.objects[k_project] = queue_settings("cpu");
      RacedSink raced(*peer.sink, [&] { REQUIRE(peer.write_queue(k_project, "theirs")); });
      auto r = run_apply(raced, *ledger, desired, self_heal, "r2");
      REQUIRE(raced.errors.size() == 1);
      CHECK(raced.errors[0].code == ErrorCode::stale);
      CHECK(raced.errors[0].message.find("FAILED_PRECONDITION") != std::string::npos);
      CHECK(raced.errors[0].message.find("settings version conflict") != std::string::npos);
      CHECK(r.rounds >= 2);  // observed again after the refusal
      // The later round's plan saw the out-of-band value as drift, with both values.
      bool reported = false;
      for (const auto& res : r.results)
        if (res.status && res.step.drift) reported = true;
      auto rec = peer.read(k_project);
      if (self_heal) {
        REQUIRE(r.ok());
        CHECK(reported);
        CHECK(queue_of(rec) == "cpu");
        CHECK(rec.version() == 3);  // 1 flytecd, 2 theirs, 3 flytecd with version 2
      } else {
        CHECK(queue_of(rec) == "theirs");  // never overwritten
        CHECK(rec.version() == 2);
        bool drifted = false;
        for (const auto& o : r.objects)
          if (o.key == k_project && o.state == pass::ObjectState::drifted) {
            drifted = true;
            CHECK(o.detail.find("changed outside Git") != std::string::npos);
          }
        CHECK(drifted);
      }
    }
  }
}

TEST_CASE(
    "flyte2 sink: 8 concurrent out-of-band writers lose no acknowledged update Git does "
    "not override, and flytecd never writes with a stale version",
    "[flyte2][sink]") {
  Peer peer;
  auto ledger = memory_ledger();
  reconcile::State desired;
  desired.objects[k_project] = queue_settings("gpu");
  // The writers' own scopes (not in Git) and, for two of them, the managed one.
  std::atomic<bool> stop{false};
  std::vector<std::string> last(8);
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w)
    writers.emplace_back([&, w] {
      const std::string key =
          w < 6 ? "settings/flyte/development/team" + std::to_string(w) : k_project;
      for (int i = 0; i < 40 && !stop; ++i) {
        const std::string value = "w" + std::to_string(w) + "-" + std::to_string(i);
        if (peer.write_queue(key, value)) last[w] = value;
      }
    });
  int passes = 0;
  for (; passes < 20; ++passes) {
    auto r = run_apply(*peer.sink, *ledger, desired, true, "r1");
    for (const auto& res : r.results)
      if (!res.status) CHECK(res.status.error().code == ErrorCode::stale);
  }
  stop = true;
  for (auto& t : writers) t.join();
  // Each writer's last acknowledged update of a scope Git does not hold is what the server holds.
  for (int w = 0; w < 6; ++w)
    CHECK(queue_of(peer.read("settings/flyte/development/team" + std::to_string(w))) == last[w]);
  // The managed scope converges to Git once the writers stop.
  auto r = run_apply(*peer.sink, *ledger, desired, true, "r1");
  CHECK(r.ok());
  CHECK(queue_of(peer.read(k_project)) == "gpu");
  // Every flytecd write was conditional on a version it had read: a refused one never landed, so
  // the server saw no UpdateSettings from flytecd without one (version 0 is InvalidArgument).
  const auto counts = peer.sink->rpc_counts();
  CHECK(counts.count("UpdateSettings INVALID_ARGUMENT") == 0);
  for (const auto& [call, n] : counts) {
    INFO(call << " x" << n);
    CHECK((call.rfind("GetSettingsForEdit OK", 0) == 0 || call == "ListProjects OK" ||
           call == "CreateSettings OK" || call == "UpdateSettings OK" ||
           call == "UpdateSettings FAILED_PRECONDITION" ||
           call == "CreateSettings ALREADY_EXISTS"));  // a writer created it first
  }
}

TEST_CASE("flyte2 sink: projects through ProjectService, paged past one page, archived on prune",
          "[flyte2][sink]") {
  Peer peer;  // the emulator seeds the server's default project, flytesnacks
  auto projects = flyteidl2::project::ProjectService::NewStub(
      grpc::CreateChannel(peer.emu->address(), grpc::InsecureChannelCredentials()));
  auto get = [&](const std::string& id, flyteidl2::project::Project* out) {
    flyteidl2::project::GetProjectRequest req;
    req.set_id(id);
    flyteidl2::project::GetProjectResponse resp;
    grpc::ClientContext ctx;
    auto st = projects->GetProject(&ctx, req, &resp);
    *out = resp.project();
    return st;
  };
  auto ledger = memory_ledger();
  reconcile::State desired;
  // More than one page of ListProjects (500): every one is observed, none created twice.
  for (int i = 0; i < 520; ++i) {
    const std::string id = "p" + std::to_string(1000 + i);
    desired.projects[id] = sinks::ProjectState{id, "Project " + id, "", {}, false};
  }
  desired.projects["ml"] = sinks::ProjectState{"ml", "ML", "models", {{"team", "ml"}}, false};
  desired.objects[k_project] = queue_settings("gpu");

  auto first = run_apply(*peer.sink, *ledger, desired, true, "r1");
  INFO(first.error);
  REQUIRE(first.ok());
  CHECK(peer.emu->calls("CreateProject") == 521);
  flyteidl2::project::Project got;
  REQUIRE(get("ml", &got).ok());
  CHECK(got.name() == "ML");
  CHECK(got.description() == "models");
  CHECK(got.labels().values().at("team") == "ml");

  auto second = run_apply(*peer.sink, *ledger, desired, true, "r1");
  REQUIRE(second.ok());
  CHECK(second.rpc_steps == 0);
  CHECK(peer.emu->calls("CreateProject") == 521);
  CHECK(peer.emu->calls("UpdateProject") == 0);
  CHECK(peer.emu->calls("ListProjects") >= 4);  // two pages of active ones, and archived ones

  // A changed description is an UpdateProject of the whole project.
  desired.projects["ml"].description = "models and features";
  auto third = run_apply(*peer.sink, *ledger, desired, true, "r2");
  REQUIRE(third.ok());
  CHECK(peer.emu->calls("UpdateProject") == 1);
  REQUIRE(get("ml", &got).ok());
  CHECK(got.description() == "models and features");
  CHECK(got.labels().values().at("team") == "ml");  // the whole project is sent: labels kept

  // Dropped from Git with prune: archived (Flyte 2 has no delete), and observed as archived.
  desired.projects.erase("ml");
  auto pruned = run_apply(*peer.sink, *ledger, desired, false, "r3", true);
  INFO(pruned.error);
  REQUIRE(pruned.ok());
  REQUIRE(get("ml", &got).ok());
  CHECK(got.state() == flyteidl2::project::PROJECT_STATE_ARCHIVED);
  auto observed = peer.sink->observe();
  REQUIRE(observed.ok());
  CHECK(observed->projects.at("ml").archived);
  // The server's own project, which Git never declared, is left alone.
  REQUIRE(get("flytesnacks", &got).ok());
  CHECK(got.state() == flyteidl2::project::PROJECT_STATE_ACTIVE);
  CHECK(observed->projects.size() == 522);
}

TEST_CASE("flyte2 sink: a field the server does not keep is reported once, not drift forever",
          "[flyte2][sink]") {
  Peer peer({"storage.rawDataPath"});  // a server whose schema predates storage.raw_data_path
  auto ledger = memory_ledger();
  reconcile::State desired;
  auto value = std::make_shared<fset::Settings>();
  value->mutable_run()->mutable_default_queue()->set_state(fset::SETTING_STATE_VALUE);
  value->mutable_run()->mutable_default_queue()->set_string_value("gpu");
  value->mutable_storage()->mutable_raw_data_path()->set_state(fset::SETTING_STATE_VALUE);
  value->mutable_storage()->mutable_raw_data_path()->set_string_value("s3://bucket/raw");
  desired.objects[k_project] = sinks::ObjectValue{"settings", value};

  auto first = run_apply(*peer.sink, *ledger, desired, true, "r1");
  INFO(first.error);
  REQUIRE(first.ok());  // converged: the re-observation does not call for the field again
  CHECK(first.rpc_steps == 1);
  CHECK(peer.sink->unkept_fields() == std::set<std::string>{"storage.rawDataPath"});
  auto rec = peer.read(k_project);
  CHECK(queue_of(rec) == "gpu");
  CHECK_FALSE(rec.settings().storage().has_raw_data_path());  // the server dropped it

  // The next passes write nothing and see no drift.
  for (int i = 0; i < 3; ++i) {
    auto again = run_apply(*peer.sink, *ledger, desired, false, "r1");
    REQUIRE(again.ok());
    CHECK(again.rpc_steps == 0);
    CHECK(again.first_plan.in_sync == 1);
    CHECK(again.first_plan.drift.empty());
  }
  CHECK(peer.emu->calls("UpdateSettings") == 0);

  // An out-of-band change of a field the server keeps is still drift.
  REQUIRE(peer.write_queue(k_project, "cpu"));
  auto drifted = run_apply(*peer.sink, *ledger, desired, false, "r1");
  REQUIRE(drifted.first_plan.drift.size() == 1);
  // Written at version 1 by flytecd, version 2 by the other writer.
  CHECK(drifted.first_plan.drift[0].detail.find(
            "the record is at version 2; flytecd wrote version 1") != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
