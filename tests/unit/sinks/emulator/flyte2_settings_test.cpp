// The Flyte 2 emulator (flytecd emulator --flyte2), over real gRPC on 127.0.0.1:0: each case is a
// behaviour of flyteorg/flyte main's runs/service/settings_service.go and
// runs/repository/impl/settings.go.

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "flyteidl2/settings/settings_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sinks/emulator/flyte2_settings.hpp"
#include "tests/unit/sinks/emulator/flyte2_peer.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

namespace fset = flyteidl2::settings;
using flytecd::sinks::emulator::Emulator;
using flytecd::sinks::emulator::Options;

struct Flyte2Peer : flytecd_test::Flyte2Emulator<fset::SettingsService> {
  using Flyte2Emulator::Flyte2Emulator;
  fset::GetSettingsForEditResponse edit(const fset::SettingsKey& key, grpc::Status* st = nullptr) {
    fset::GetSettingsForEditRequest req;
    *req.mutable_key() = key;
    fset::GetSettingsForEditResponse resp;
    auto s = call(&fset::SettingsService::Stub::GetSettingsForEdit, req, &resp);
    if (st) *st = s;
    return resp;
  }
  grpc::Status create(const fset::SettingsKey& key, const fset::Settings& settings,
                      uint64_t* version = nullptr) {
    fset::CreateSettingsRequest req;
    *req.mutable_key() = key;
    *req.mutable_settings() = settings;
    fset::CreateSettingsResponse resp;
    auto s = call(&fset::SettingsService::Stub::CreateSettings, req, &resp);
    if (version) *version = resp.settingsrecord().version();
    return s;
  }
  grpc::Status update(const fset::SettingsKey& key, const fset::Settings& settings, uint64_t v,
                      uint64_t* version = nullptr) {
    fset::UpdateSettingsRequest req;
    *req.mutable_key() = key;
    *req.mutable_settings() = settings;
    req.set_version(v);
    fset::UpdateSettingsResponse resp;
    auto s = call(&fset::SettingsService::Stub::UpdateSettings, req, &resp);
    if (version) *version = resp.settingsrecord().version();
    return s;
  }
};

fset::SettingsKey key(const std::string& org, const std::string& domain = "",
                      const std::string& project = "") {
  fset::SettingsKey k;
  k.set_org(org);
  k.set_domain(domain);
  k.set_project(project);
  return k;
}

fset::Settings queue(const std::string& name) {
  fset::Settings s;
  auto* q = s.mutable_run()->mutable_default_queue();
  q->set_state(fset::SETTING_STATE_VALUE);
  q->set_string_value(name);
  return s;
}

}  // namespace

TEST_CASE("flyte2 emulator: the storage key normalizes an empty org to flyte") {
  using flytecd::sinks::emulator::settings_storage_key;
  CHECK(settings_storage_key(key("")) == "v1:flyte::");
  CHECK(settings_storage_key(key("acme", "development", "p")) == "v1:acme:development:p");
  CHECK(settings_storage_key(key("", "production")) == "v1:flyte:production:");
}

TEST_CASE("flyte2 emulator: GetSettingsForEdit returns every covered level, broadest first") {
  Flyte2Peer peer;
  grpc::Status st;
  auto resp = peer.edit(key("", "development", "flytesnacks"), &st);
  REQUIRE(st.ok());
  REQUIRE(resp.levels_size() == 3);
  CHECK(resp.levels(0).key().domain().empty());
  CHECK(resp.levels(1).key().domain() == "development");
  CHECK(resp.levels(1).key().project().empty());
  CHECK(resp.levels(2).key().project() == "flytesnacks");
  for (const auto& l : resp.levels()) {
    CHECK(l.version() == 0);  // absent: the client's signal to Create
    CHECK(l.has_settings());
  }
  CHECK(resp.requestedkey().project() == "flytesnacks");
  // The empty org and "flyte" are one record.
  REQUIRE(peer.create(key(""), queue("default")).ok());
  auto again = peer.edit(key("flyte", "development"));
  REQUIRE(again.levels_size() == 2);
  CHECK(again.levels(0).version() == 1);
  CHECK(again.levels(0).settings().run().default_queue().string_value() == "default");
  CHECK(again.levels(1).version() == 0);
}

TEST_CASE("flyte2 emulator: Create starts at version 1 and refuses a second record") {
  Flyte2Peer peer;
  uint64_t v = 0;
  REQUIRE(peer.create(key("acme", "development"), queue("q1"), &v).ok());
  CHECK(v == 1);
  auto st = peer.create(key("acme", "development"), queue("q2"));
  CHECK(st.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  CHECK(st.error_message() == "settings already exists: v1:acme:development:");
  CHECK(peer.edit(key("acme", "development"))
            .levels(1)
            .settings()
            .run()
            .default_queue()
            .string_value() == "q1");
}

TEST_CASE("flyte2 emulator: Update is conditional on the version and is not an upsert") {
  Flyte2Peer peer;
  const auto k = key("acme", "production", "p1");
  // No record: NotFound (not created).
  auto missing = peer.update(k, queue("q"), 1);
  CHECK(missing.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(missing.error_message() == "settings not found: v1:acme:production:p1");
  CHECK(peer.edit(k).levels(2).version() == 0);
  // Version 0 is refused before the store is asked.
  auto zero = peer.update(k, queue("q"), 0);
  CHECK(zero.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  REQUIRE(peer.create(k, queue("q1")).ok());
  uint64_t v = 0;
  REQUIRE(peer.update(k, queue("q2"), 1, &v).ok());
  CHECK(v == 2);
  // A stale version: FailedPrecondition, and nothing written.
  auto stale = peer.update(k, queue("q3"), 1);
  CHECK(stale.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(stale.error_message() == "settings version conflict: v1:acme:production:p1");
  auto now = peer.edit(k).levels(2);
  CHECK(now.version() == 2);
  CHECK(now.settings().run().default_queue().string_value() == "q2");
}

TEST_CASE("flyte2 emulator: malformed requests are InvalidArgument, GetSettings Unimplemented") {
  Flyte2Peer peer;
  grpc::Status st;
  peer.edit(key("acme", "", "p1"), &st);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "a project-scope key requires a domain");
  fset::GetSettingsForEditRequest no_key;
  fset::GetSettingsForEditResponse resp;
  st = peer.call(&fset::SettingsService::Stub::GetSettingsForEdit, no_key, &resp);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "key is required");
  fset::CreateSettingsRequest no_settings;
  *no_settings.mutable_key() = key("acme");
  fset::CreateSettingsResponse cresp;
  st = peer.call(&fset::SettingsService::Stub::CreateSettings, no_settings, &cresp);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "key and settings are required");
  fset::GetSettingsRequest get;
  *get.mutable_key() = key("acme");
  fset::GetSettingsResponse gresp;
  st = peer.call(&fset::SettingsService::Stub::GetSettings, get, &gresp);
  CHECK(st.error_code() == grpc::StatusCode::UNIMPLEMENTED);
  CHECK(peer.emu->calls("GetSettings") == 1);
}

TEST_CASE("flyte2 emulator: 8 concurrent writers of one record lose no acknowledged update") {
  Flyte2Peer peer;
  const auto k = key("acme", "development", "p1");
  REQUIRE(peer.create(k, queue("start")).ok());
  // Each writer reads, then updates with the version it read; a conflict re-reads. Every
  // acknowledged update must be a distinct version: none overwrote another blind.
  std::atomic<int> acknowledged{0}, conflicts{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 10; ++i) {
        for (int attempt = 0; attempt < 200; ++attempt) {
          const uint64_t read = peer.edit(k).levels(2).version();
          auto st = peer.update(k, queue("w" + std::to_string(w) + "-" + std::to_string(i)), read);
          if (st.ok()) {
            ++acknowledged;
            break;
          }
          REQUIRE(st.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
          ++conflicts;
        }
      }
    });
  for (auto& t : writers) t.join();
  CHECK(acknowledged == 80);
  // Version 1 from Create, then one increment per acknowledged update.
  CHECK(peer.edit(k).levels(2).version() == 81);
}

TEST_CASE("flyte2 emulator: records survive a restart on the same database file") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("flytecd-flyte2-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "settings.db").string();
  {
    Flyte2Peer peer(db);
    REQUIRE(peer.create(key("acme"), queue("kept")).ok());
    REQUIRE(peer.update(key("acme"), queue("kept2"), 1).ok());
  }
  Flyte2Peer again(db);
  auto level = again.edit(key("acme")).levels(0);
  CHECK(level.version() == 2);
  CHECK(level.settings().run().default_queue().string_value() == "kept2");
  std::filesystem::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
