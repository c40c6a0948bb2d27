// Ownership that survives a lost ledger (daemon/pass/ownership.hpp, applied_record.hpp): the
// applied-revision record, the pure rebuild, and the pass rebuilding from the record.
#include "daemon/pass/ownership.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "daemon/pass/applied_record.hpp"
#include "daemon/pass/pass.hpp"
#include "daemon/reconcile/diff.hpp"
#include "tests/unit/daemon/pass/pass_fixtures.hpp"
#include "tests/unit/sinks/memory_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace admin = flyteidl::admin;
namespace fs = std::filesystem;

namespace {

using pass_test::documents;
using pass_test::label;

// A record store in memory with the file store's compare-and-swap semantics.
class MemoryRecordStore final : public pass::RecordStore {
 public:
  Result<std::optional<pass::StoredRecord>> read() override {
    ++reads;
    if (!have) return std::optional<pass::StoredRecord>();
    return std::optional<pass::StoredRecord>(pass::StoredRecord{record, std::to_string(version)});
  }
  Result<std::string> write(const pass::AppliedRecord& r, const std::string& expected) override {
    if (expected != (have ? std::to_string(version) : ""))
      return make_error(ErrorCode::conflict, "stale");
    record = r;
    have = true;
    ++version;
    ++writes;
    return std::to_string(version);
  }
  std::string describe() const override { return "memory record"; }
  pass::AppliedRecord record;
  bool have = false;
  int version = 0, reads = 0, writes = 0;
};

std::unique_ptr<ledger::Ledger> open_ledger() {
  auto l = ledger::Ledger::open(":memory:");
  REQUIRE(l);
  return std::move(*l);
}

// One replica: its ledger (replaceable: a wiped state directory), the shared sink and record,
// and the history of revisions its source can read.
struct Replica {
  testing::MemorySink& sink;
  MemoryRecordStore& record;
  std::map<std::string, model::Documents>& history;
  std::unique_ptr<ledger::Ledger> ledger = open_ledger();

  pass::Report run(const std::string& rev, pass::Mode mode, reconcile::Policy policy = {}) {
    pass::Wiring w;
    w.sink = &sink;
    w.ledger = ledger.get();
    w.target = "memory";
    w.record = &record;
    w.revision_at = [this](const std::string& id) -> Result<pass::EarlierRevision> {
      auto it = history.find(id);
      if (it == history.end()) return make_error(ErrorCode::not_found, "no revision " + id);
      pass::EarlierRevision e;
      e.docs = it->second;
      return e;
    };
    pass::Options o;
    o.mode = mode;
    o.policy = policy;
    o.parallelism = 2;
    o.config_fingerprint = "fp";
    o.writer = "replica";
    return pass::run(pass::Revision{rev, "", &history.at(rev), "", 0}, w, o);
  }
};

bool has_step(const reconcile::Plan& p, reconcile::Action a, const std::string& key) {
  for (const auto& s : p.steps)
    if (s.action == a && s.key == key) return true;
  return false;
}

}  // namespace

TEST_CASE("applied record: JSON round trip, bounded, unknown fields ignored, bad fields named",
          "[pass][ownership]") {
  pass::AppliedRecord r{"abc123", "def456", "sha256:ff", "0.1.0", "pod-a", 1700000000};
  const std::string text = pass::to_json(r);
  CHECK(text.size() < 1024);
  auto back = pass::parse_applied_record(text, "test");
  REQUIRE(back);
  CHECK(back->converged == "abc123");
  CHECK(back->in_flight == "def456");
  CHECK(back->config_fingerprint == "sha256:ff");
  CHECK(back->writer == "pod-a");
  CHECK(back->updated_at == 1700000000);
  CHECK(pass::parse_applied_record(R"({"converged":"x","future":1})", "t"));
  auto bad = pass::parse_applied_record(R"({"converged":7})", "cm ns/name");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::invalid_input);
  CHECK(bad.error().message.find("cm ns/name") != std::string::npos);
  CHECK(bad.error().message.find("'converged' is not a string") != std::string::npos);
  CHECK_FALSE(pass::parse_applied_record("not json", "t"));
}

TEST_CASE("applied record file: atomic replace, compare-and-swap, a stale writer loses",
          "[pass][ownership]") {
  const fs::path dir = fs::temp_directory_path() / ("flytecd-record-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  pass::FileRecordStore store(dir / "applied-revision.json");
  auto none = store.read();
  REQUIRE(none);
  CHECK_FALSE(*none);
  pass::AppliedRecord a{"rev1", "", "fp", "v", "me", 1};
  auto t1 = store.write(a, "");
  REQUIRE(t1);
  CHECK_FALSE(fs::exists(dir / "applied-revision.json.tmp"));
  // A second writer that read nothing (or an old token) loses, and the record is unchanged.
  auto stale = store.write(pass::AppliedRecord{"other", "", "fp", "v", "them", 2}, "");
  REQUIRE_FALSE(stale);
  CHECK(stale.error().code == ErrorCode::conflict);
  auto t2 = store.write(pass::AppliedRecord{"rev2", "", "fp", "v", "me", 3}, *t1);
  REQUIRE(t2);
  auto old_token = store.write(pass::AppliedRecord{"rev0", "", "fp", "v", "me", 4}, *t1);
  CHECK_FALSE(old_token);
  auto now = store.read();
  REQUIRE(now);
  REQUIRE(*now);
  CHECK((*now)->record.converged == "rev2");
  CHECK((*now)->token == *t2);
  // A torn or hand-edited file is named in the error, and any writer may replace it.
  { std::ofstream(dir / "applied-revision.json") << "{\"converged\": "; }
  auto torn = store.read();
  REQUIRE_FALSE(torn);
  CHECK(torn.error().message.find("applied-revision.json") != std::string::npos);
  CHECK(store.write(a, ""));
  fs::remove_all(dir);
}

TEST_CASE("ownership: owned objects are the converged revision's, in flight where live has it",
          "[pass][ownership]") {
  reconcile::State conv, flight, live;
  auto put = [](reconcile::State& s, const std::string& project, const std::string& value) {
    model::Override o = label(project, value);
    reconcile::OverrideState st{o.scope, o.type, o.value.get()};
    s.overrides[reconcile::override_key(o.scope, o.type)] = st;
  };
  put(conv, "a", "blue");  // unchanged in flight
  put(conv, "b", "blue");  // changed in flight, written: live = in flight
  put(conv, "c", "blue");  // changed in flight, not yet written: live = converged
  put(conv, "d", "blue");  // removed in flight
  put(flight, "a", "blue");
  put(flight, "b", "green");
  put(flight, "c", "green");
  put(flight, "e", "green");  // new in flight, created
  put(flight, "f", "green");  // new in flight, not created
  put(live, "a", "blue");
  put(live, "b", "green");
  put(live, "c", "blue");
  put(live, "d", "blue");
  put(live, "e", "green");
  auto rows = pass::owned_objects(conv, "R", &flight, "I", live);
  std::map<std::string, std::string> rev_of;
  for (const auto& r : rows) rev_of[r.key.substr(r.key.find("/") + 1, 1)] = r.revision;
  CHECK(rev_of == std::map<std::string, std::string>{
                      {"a", "R"}, {"b", "I"}, {"c", "R"}, {"d", "R"}, {"e", "I"}});
  // Without a pass in flight: exactly the converged revision's objects.
  CHECK(pass::owned_objects(conv, "R", nullptr, "", live).size() == 4);
}

TEST_CASE("ownership: a rebuild is needed when the record names a revision the ledger does not",
          "[pass][ownership]") {
  pass::AppliedRecord r;
  r.converged = "R";
  r.config_fingerprint = "fp";
  CHECK(pass::needs_rebuild(r, "", "fp"));
  CHECK(pass::needs_rebuild(r, "older", "fp"));
  CHECK_FALSE(pass::needs_rebuild(r, "R", "fp"));
  CHECK_FALSE(pass::needs_rebuild(r, "", "another target"));  // not this configuration's
  r.converged.clear();
  CHECK_FALSE(pass::needs_rebuild(r, "", "fp"));
}

// The issue's reproduction, on the pass: apply, drop a project from Git, lose the ledger, change
// an object out of band, plan again.
TEST_CASE("ownership: with the ledger wiped, the pass rebuilds it from the record's revision",
          "[pass][ownership]") {
  testing::MemorySink sink;
  MemoryRecordStore record;
  std::map<std::string, model::Documents> history{{"R1", documents(4)}};
  Replica first{sink, record, history};
  auto applied = first.run("R1", pass::Mode::execute);
  REQUIRE(applied.outcome == pass::Outcome::success);
  CHECK(applied.ownership.state ==
        flytecd::pass::Ownership::State::none);  // a first start: nothing owned, no record
  REQUIRE(record.have);
  CHECK(record.record.converged == "R1");
  CHECK(record.record.in_flight.empty());
  CHECK(record.record.config_fingerprint == "fp");
  const int writes_after_first = record.writes;
  CHECK(writes_after_first == 2);  // in flight, then converged

  // A no-op pass writes no record.
  CHECK(first.run("R1", pass::Mode::execute).outcome == pass::Outcome::success);
  CHECK(record.writes == writes_after_first);

  // Git drops p3; an operator changes p0's label by hand; the state directory is lost.
  model::Documents r2 = documents(4);
  r2.projects.pop_back();
  r2.overrides.pop_back();
  r2.document_count -= 2;
  history["R2"] = r2;
  auto live = sink.state();
  model::Override hand = label("p0", "red");
  live.overrides[reconcile::override_key(hand.scope, hand.type)].value = hand.value.get();
  sink.set_state(live);
  Replica restarted{sink, record, history};

  auto plan = restarted.run("R2", pass::Mode::plan);
  REQUIRE(plan.outcome == pass::Outcome::success);
  CHECK(plan.ownership.state == flytecd::pass::Ownership::State::rebuilt);
  CHECK(plan.ownership.from_revision == "R1");
  CHECK(plan.ownership.objects == 8);
  CHECK(plan.plan.unmanaged.empty());  // nothing flytecd created is "unmanaged"
  CHECK(has_step(plan.plan, reconcile::Action::remove, "project/p3"));
  const std::string p3_label = reconcile::override_key(label("p3", "").scope, hand.type);
  CHECK(has_step(plan.plan, reconcile::Action::remove, p3_label));
  REQUIRE(plan.plan.drift.size() == 1);  // the change by hand is drift, with its value
  CHECK(plan.plan.drift[0].detail == "changed outside Git");
  REQUIRE_FALSE(plan.plan.drift[0].changes.empty());
  CHECK(reconcile::change_line(plan.plan.drift[0].changes[0]).find("red") != std::string::npos);
  // Plan mode rebuilt in memory: the replica's ledger is still empty.
  CHECK(*restarted.ledger->owns_nothing());
  CHECK(sink.rpcs() > 0);  // (the first replica's writes)

  auto exec = restarted.run("R2", pass::Mode::execute);
  REQUIRE(exec.outcome == pass::Outcome::success);
  CHECK(exec.ownership.state == flytecd::pass::Ownership::State::rebuilt);
  CHECK(sink.state().projects.at("p3").archived);
  CHECK(record.record.converged == "R2");
  CHECK(*restarted.ledger->converged_revision() == "R2");
  // Converged: the next pass uses the ledger.
  CHECK(restarted.run("R2", pass::Mode::execute).ownership.state ==
        flytecd::pass::Ownership::State::ledger);
}

TEST_CASE("ownership: a record for another configuration, or an unreadable revision, is not used",
          "[pass][ownership]") {
  testing::MemorySink sink;
  MemoryRecordStore record;
  std::map<std::string, model::Documents> history{{"R1", documents(2)}};
  Replica a{sink, record, history};
  REQUIRE(a.run("R1", pass::Mode::execute).outcome == pass::Outcome::success);

  record.record.config_fingerprint = "another target";
  Replica b{sink, record, history};
  auto other = b.run("R1", pass::Mode::plan);
  CHECK(other.ownership.state == flytecd::pass::Ownership::State::none);
  CHECK(other.ownership.message.find("another target") != std::string::npos);

  record.record.config_fingerprint = "fp";
  record.record.converged = "gone";
  Replica c{sink, record, history};
  auto lost = c.run("R1", pass::Mode::plan);
  CHECK(lost.outcome == pass::Outcome::success);
  CHECK(lost.ownership.state == flytecd::pass::Ownership::State::unavailable);
  CHECK(lost.ownership.message.find("no revision gone") != std::string::npos);
}

TEST_CASE("ownership: a stale writer's record write is a conflict, reported, the record kept",
          "[pass][ownership]") {
  testing::MemorySink sink;
  MemoryRecordStore record;
  std::map<std::string, model::Documents> history{{"R1", documents(2)}, {"R2", documents(3)}};
  Replica old_leader{sink, record, history};
  REQUIRE(old_leader.run("R1", pass::Mode::execute).outcome == pass::Outcome::success);
  // Between the old leader's read and its write, a new leader writes the record.
  struct Racing final : pass::RecordStore {
    MemoryRecordStore& inner;
    explicit Racing(MemoryRecordStore& i) : inner(i) {}
    Result<std::optional<pass::StoredRecord>> read() override {
      auto r = inner.read();
      pass::AppliedRecord theirs = inner.record;
      theirs.writer = "new leader";
      (void)inner.write(theirs, std::to_string(inner.version));
      return r;
    }
    Result<std::string> write(const pass::AppliedRecord& r, const std::string& t) override {
      return inner.write(r, t);
    }
    std::string describe() const override { return "racing"; }
  } racing(record);
  pass::Wiring w;
  w.sink = &sink;
  w.ledger = old_leader.ledger.get();
  w.target = "memory";
  w.record = &racing;
  pass::Options o;
  o.mode = pass::Mode::execute;
  o.config_fingerprint = "fp";
  auto rep = pass::run(pass::Revision{"R2", "", &history.at("R2"), "", 0}, w, o);
  CHECK(rep.outcome == pass::Outcome::success);
  REQUIRE(rep.record_error);
  CHECK(rep.record_error->code == ErrorCode::conflict);
  CHECK(record.record.writer == "new leader");
}

TEST_CASE("ownership: a directory revision is not rebuilt from (its content then is gone)",
          "[pass][ownership]") {
  testing::MemorySink sink;
  MemoryRecordStore record;
  std::map<std::string, model::Documents> history{{"dir:/repo", documents(3)}};
  Replica a{sink, record, history};
  REQUIRE(a.run("dir:/repo", pass::Mode::execute).outcome == pass::Outcome::success);
  REQUIRE(record.record.converged == "dir:/repo");
  // The directory changed (p2 dropped) and the ledger was lost: nothing is claimed from what
  // the directory holds now.
  model::Documents now = documents(2);
  history["dir:/repo"] = now;
  Replica b{sink, record, history};
  auto plan = b.run("dir:/repo", pass::Mode::plan);
  CHECK(plan.ownership.state == flytecd::pass::Ownership::State::unavailable);
  CHECK(plan.ownership.message.find("directory") != std::string::npos);
  CHECK(plan.plan.drift.empty());
}

}  // namespace FLYTECD_UNITY_ID
