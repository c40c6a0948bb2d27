// open_target: the sinks come from the sink table; the embedded emulator is started first.
#include "daemon/wiring/target.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;

TEST_CASE("open_target: with no endpoint the emulator row of the sink table, counted calls",
          "[wiring]") {
  const fs::path dir = fs::temp_directory_path() / "flytecd-open-target";
  fs::remove_all(dir);
  flytecd::config::Config cfg;
  cfg.state_dir = dir.string();
  auto t = flytecd::wiring::open_target(cfg);
  REQUIRE(t);
  REQUIRE(t->embedded());
  REQUIRE(t->sinks.size() == 1);  // no ConfigMap: one sink, nothing routed
  CHECK(t->routed == nullptr);
  CHECK(&t->pass_sink() == t->sinks.front().sink.get());
  CHECK(t->pass_sink().describe() == t->description);  // the label the table's factory gave
  CHECK(t->pass_sink().entities() != nullptr);
  // The daemon's flytecd_rpc_total reads the counts of every sink through the Sink interface.
  REQUIRE(t->pass_sink().observe());
  uint64_t calls = 0;
  for (const auto& [key, n] : t->rpc_counts()) calls += n;
  CHECK(calls > 0);
  t = flytecd::Result<flytecd::wiring::Target>(
      flytecd::make_error(flytecd::ErrorCode::internal, "closed"));  // release lock and emulator
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
