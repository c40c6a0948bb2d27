// The emulator's store: group commit (issue 24). Concurrent write RPCs share SQLite
// transactions, and a write is acknowledged (Tx::commit returns) only once it is on disk.
#include "sinks/emulator/store.hpp"

#include "daemon/common/sqlite.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using flytecd::sinks::emulator::DeferredAck;
using flytecd::sinks::emulator::ProjectRow;
using flytecd::sinks::emulator::ResourceKey;
using flytecd::sinks::emulator::ResourceRow;
using flytecd::sinks::emulator::Store;
using flytecd::sinks::emulator::Tx;
namespace resource_sql = flytecd::sinks::emulator::resource_sql;

struct TempDb {
  fs::path dir;
  TempDb() {
    dir = fs::temp_directory_path() /
          ("flytecd-store-" +
           std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(dir);
  }
  ~TempDb() { fs::remove_all(dir); }
  std::string path() const { return (dir / "admin.db").string(); }
};

ResourceRow row(int thread, int i) {
  return ResourceRow{ResourceKey{"p", "development",
                                 "wf-" + std::to_string(thread) + "-" + std::to_string(i), "", 1},
                     0, "attrs"};
}

// Opens the database again (what a restarted emulator reads) and counts its resource rows of
// type 1.
size_t resources_after_reopen(const std::string& path) {
  auto again = Store::open(path);
  REQUIRE(again);
  auto tx = (*again)->begin(false);
  REQUIRE(tx);
  auto rows = tx->list_resources(1);
  REQUIRE(rows);
  return rows->size();
}

TEST_CASE(
    "emulator store: writes from 8 threads are each acknowledged, all are there after a reopen, "
    "and they share transactions",
    "[emulator][store]") {
  TempDb db;
  constexpr int threads = 8, per_thread = 150;
  std::atomic<int> failed{0};
  {
    auto store = Store::open(db.path());
    REQUIRE(store);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (int i = 0; i < per_thread; ++i) {
          auto tx = (*store)->begin(true);
          if (!tx || !tx->upsert_resource(row(t, i)) || !tx->commit()) ++failed;
        }
      });
    for (auto& th : pool) th.join();
    const auto stats = (*store)->group_commit_stats();
    CHECK(stats.writes == threads * per_thread);
    CHECK(stats.commits >= 1);
    // Writes that end while the committer syncs form the next group: groups of one would make
    // as many commits as writes.
    CHECK(stats.commits < stats.writes);
  }
  CHECK(failed == 0);
  CHECK(resources_after_reopen(db.path()) == static_cast<size_t>(threads * per_thread));
}

TEST_CASE(
    "emulator store: a writer that finishes while another waits keeps the transaction open for it: "
    "two writes, one commit",
    "[emulator][store]") {
  TempDb db;
  // A group stays open at most 20 ms by default; this test takes its time to be sure the second
  // writer waits.
  auto store = Store::open(db.path(), std::chrono::seconds(30));
  REQUIRE(store);
  std::atomic<bool> second_done{false};
  auto first = (*store)->begin(true);
  REQUIRE(first);
  REQUIRE(first->upsert_resource(row(0, 0)));
  std::thread second([&] {
    auto tx = (*store)->begin(true);  // waits for the first Tx
    second_done = tx && tx->upsert_resource(row(1, 0)) && tx->commit();
  });
  // The second writer is waiting for the store by now; the first commit leaves the group open
  // for it and returns once the second has committed the group.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(first->commit());
  { Tx done = std::move(*first); }  // releases the store
  second.join();
  CHECK(second_done);
  const auto stats = (*store)->group_commit_stats();
  CHECK(stats.writes == 2);
  CHECK(stats.commits == 1);
}

TEST_CASE(
    "emulator store: a write that fails inside a group (duplicate project) loses only itself, and "
    "a reader sees every acknowledged write",
    "[emulator][store]") {
  TempDb db;
  auto store = Store::open(db.path());
  REQUIRE(store);
  constexpr int threads = 6, ids = 40;
  std::atomic<int> inserted{0}, duplicates{0}, other{0}, acknowledged{0}, read_short{0};
  std::atomic<bool> writing{true};
  std::thread reader([&] {
    while (writing) {
      const int before = acknowledged.load();
      auto tx = (*store)->begin(false);
      if (!tx) continue;
      auto rows = tx->list_projects();
      if (rows && static_cast<int>(rows->size()) < before) ++read_short;
    }
  });
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int i = 0; i < ids; ++i) {
        auto tx = (*store)->begin(true);
        if (!tx) {
          ++other;
          continue;
        }
        auto st = tx->insert_project(ProjectRow{"project-" + std::to_string(i), "blob", 0, 0});
        if (!st) {
          (st.error().code == flytecd::ErrorCode::already_exists ? duplicates : other)++;
          continue;  // the Tx rolls its savepoint back
        }
        if (tx->commit()) {
          ++inserted;
          ++acknowledged;
        } else {
          ++other;
        }
      }
    });
  for (auto& th : pool) th.join();
  writing = false;
  reader.join();
  CHECK(inserted == ids);
  CHECK(duplicates == (threads - 1) * ids);
  CHECK(other == 0);
  CHECK(read_short == 0);
  auto tx = (*store)->begin(false);
  REQUIRE(tx);
  auto rows = tx->list_projects();
  REQUIRE(rows);
  CHECK(rows->size() == static_cast<size_t>(ids));
}

TEST_CASE(
    "emulator store: with a DeferredAck a write returns before its sync, and when_durable "
    "acknowledges it once its group is on disk, in group order",
    "[emulator][store]") {
  TempDb db;
  constexpr int writes = 200;
  std::mutex mu;
  std::vector<uint64_t> acked;  // groups, in acknowledgement order
  std::vector<std::promise<bool>> done(writes);
  {
    auto store = Store::open(db.path());
    REQUIRE(store);
    uint64_t last_group = 0;
    for (int i = 0; i < writes; ++i) {
      std::optional<DeferredAck::Pending> pending;
      {
        DeferredAck deferred;
        auto tx = (*store)->begin(true);
        REQUIRE(tx);
        REQUIRE(tx->upsert_resource(row(0, i)));
        REQUIRE(tx->commit());  // does not wait for the sync
        pending = deferred.pending();
      }
      REQUIRE(pending);
      CHECK(pending->store == store->get());
      CHECK(pending->group >= last_group);
      last_group = pending->group;
      const uint64_t group = pending->group;
      (*store)->when_durable(group, [&, i, group](flytecd::Status st) {
        {
          std::lock_guard<std::mutex> lock(mu);
          acked.push_back(group);
        }
        done[static_cast<size_t>(i)].set_value(static_cast<bool>(st));
      });
    }
    for (auto& d : done) {
      auto f = d.get_future();
      REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
      CHECK(f.get());
    }
    std::lock_guard<std::mutex> lock(mu);
    CHECK(acked.size() == static_cast<size_t>(writes));
    CHECK(std::is_sorted(acked.begin(), acked.end()));
    // Without a DeferredAck the thread waits again: the write is durable when commit returns.
    auto tx = (*store)->begin(true);
    REQUIRE(tx);
    REQUIRE(tx->upsert_resource(row(1, 0)));
    REQUIRE(tx->commit());
  }
  CHECK(resources_after_reopen(db.path()) == static_cast<size_t>(writes + 1));
}

namespace {
// How SQLite runs `query` on the file at `path` (EXPLAIN QUERY PLAN's details), its `params` ?s
// bound to 2.
std::string plan_of(const std::string& path, const std::string& query, int params) {
  auto db = flytecd::sqlite::Database::open(path, "test");
  REQUIRE(db);
  auto st = (*db)->prepare("EXPLAIN QUERY PLAN " + query, "explain");
  REQUIRE(st);
  for (int i = 0; i < params; ++i) st->bind(2);
  std::string plan;
  for (auto row = st->step(); row && *row; row = st->step()) plan += st->text(3) + "\n";
  return plan;
}
// The plans of the store's own statements (resource_sql, store.hpp), each ? bound to 2.
std::string plan_of(const std::string& path, const std::string& query) {
  return plan_of(path, query, static_cast<int>(std::count(query.begin(), query.end(), '?')));
}
std::string list_resources_plan(const std::string& path) {
  return plan_of(path, resource_sql::list_of_type());
}
// At project-domain scope: a project-domain PLUGIN_OVERRIDE write's lookup.
std::string first_like_plan(const std::string& path) {
  return plan_of(path, resource_sql::first_like(ResourceKey{"p", "development", "", "", 2}));
}
std::string most_specific_plan(const std::string& path) {
  return plan_of(path, resource_sql::most_specific());
}
}  // namespace

TEST_CASE(
    "emulator store: one type's rows are listed through its index, by priority then insertion",
    "[emulator][store]") {
  TempDb db;
  {
    auto store = Store::open(db.path());
    REQUIRE(store);
    auto tx = (*store)->begin(true);
    REQUIRE(tx);
    // Types 1-3 interleaved; type 2 at priorities 1, 3, 3, 2 in that order of insertion.
    int n = 0;
    for (int prio : {1, 3, 3, 2})
      for (int type : {1, 2, 3}) {
        ResourceKey key{"p" + std::to_string(n++), "development", "", "", type};
        REQUIRE(tx->upsert_resource(ResourceRow{key, prio, "attrs"}));
      }
    REQUIRE(tx->commit());
    auto read = (*store)->begin(false);
    REQUIRE(read);
    auto rows = read->list_resources(2);
    REQUIRE(rows);
    std::vector<std::string> got;
    for (const auto& r : *rows) got.push_back(r.key.project + "@" + std::to_string(r.priority));
    CHECK(got == std::vector<std::string>{"p4@3", "p7@3", "p10@2", "p1@1"});
  }
  // Read through resources_by_type: no scan of the other types' rows, no sort.
  std::string plan = list_resources_plan(db.path());
  INFO(plan);
  CHECK(plan.find("resources_by_type") != std::string::npos);
  CHECK(plan.find("TEMP B-TREE") == std::string::npos);
  // A Get of the most specific row stays on the (project, domain, ...) index: on the type's it
  // would walk every row of the type.
  CHECK(most_specific_plan(db.path()).find("sqlite_autoindex_resources_1") != std::string::npos);
  // So does a project-domain PLUGIN_OVERRIDE write's lookup of the oldest row (without the +,
  // SQLite took the type's index and a cold apply ran at half the raw rate).
  CHECK(first_like_plan(db.path()).find("sqlite_autoindex_resources_1") != std::string::npos);
  // A file from before the index gets it when opened.
  {
    auto raw = flytecd::sqlite::Database::open(db.path(), "test");
    REQUIRE(raw);
    REQUIRE((*raw)->exec("DROP INDEX resources_by_type", "drop"));
  }
  CHECK(list_resources_plan(db.path()).find("resources_by_type") == std::string::npos);
  REQUIRE(Store::open(db.path()));
  CHECK(list_resources_plan(db.path()).find("resources_by_type") != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
