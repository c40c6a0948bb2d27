#include "daemon/config/config.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;

namespace {
flytecd::Status load(const std::string& yaml, flytecd::config::Config& cfg) {
  std::string tmpl = (fs::temp_directory_path() / "flytecd-config-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const std::string file = tmpl + "/flytecd.yaml";
  std::ofstream(file) << yaml;
  auto s = flytecd::config::load_file(file, cfg);
  fs::remove_all(tmpl);
  return s;
}
}  // namespace

// Issue 10.8: `maxPruneShare: -1` or `2` was accepted; `cacheMaxBytes: -1` said "bad conversion"
// and named no key.
TEST_CASE("config: maxPruneShare outside [0, 1] is refused naming the key", "[config]") {
  for (const char* share : {"-1", "2", "1.01"}) {
    auto cfg = flytecd::config::defaults();
    auto s = load(std::string("policy:\n  maxPruneShare: ") + share + "\n", cfg);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("policy.maxPruneShare"));
    CHECK_THAT(s.error().message, Catch::Contains("between 0 and 1"));
  }
  auto cfg = flytecd::config::defaults();
  CHECK(load("policy: {maxPruneShare: 0.25, allowEmpty: true}\n", cfg));
  CHECK(cfg.policy.max_prune_share == 0.25);
  CHECK(cfg.policy.allow_empty);
}

TEST_CASE("config: a value of the wrong type names its key, line and what was expected",
          "[config]") {
  auto cfg = flytecd::config::defaults();
  auto s = load("packages:\n  cacheMaxBytes: -1\n", cfg);
  REQUIRE_FALSE(s);
  CHECK_THAT(s.error().message, Catch::Contains(":2: packages.cacheMaxBytes:"));
  CHECK_THAT(s.error().message, Catch::Contains("a number of bytes"));
  auto p = load("parallelism: many\n", cfg);
  REQUIRE_FALSE(p);
  CHECK_THAT(p.error().message, Catch::Contains("parallelism"));
  auto b = load("policy:\n  prune: perhaps\n", cfg);
  REQUIRE_FALSE(b);
  CHECK_THAT(b.error().message, Catch::Contains("policy.prune"));
  CHECK_THAT(b.error().message, Catch::Contains("true or false"));
}

TEST_CASE("config: lockWait is a duration", "[config][lock]") {
  auto cfg = flytecd::config::defaults();
  CHECK(load("lockWait: 30s\n", cfg));
  CHECK(cfg.lock_wait_seconds == 30);
  CHECK_FALSE(load("lockWait: soon\n", cfg));
}

// ConfigMap mode writes overrides to FlyteAdmin's ConfigMap, not through Update*Attributes, so
// the documents' policy must know it (project-scope pluginOverrides stay allowed there).
TEST_CASE("config: kubernetes.configMap.enabled puts the document policy in ConfigMap mode",
          "[config]") {
  auto cfg = flytecd::config::defaults();
  CHECK_FALSE(cfg.documents.configmap_mode);
  REQUIRE(load("kubernetes:\n  configMap: {enabled: true}\n", cfg));
  CHECK(cfg.documents.configmap_mode);
  auto off = flytecd::config::defaults();
  REQUIRE(load("kubernetes:\n  configMap: {enabled: false}\n", off));
  CHECK_FALSE(off.documents.configmap_mode);
}

// Issue 27.8: parse_seconds let NaN through, overflowed static_cast<int> (-2147483648 s) and
// truncated "0.5s" to 0 s: each a busy loop against Git and FlyteAdmin.
TEST_CASE("config: an interval that is not a sane duration is refused naming the key and range",
          "[config][duration]") {
  for (const char* bad : {"nan", "1e10", "inf", "-5m"}) {
    auto cfg = flytecd::config::defaults();
    auto s = load(std::string("interval: \"") + bad + "\"\n", cfg);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message,
               Catch::EndsWith(":1: interval: \"" + std::string(bad) +
                               "\" is not a duration (expected e.g. 30s, 5m, 1h; between 1s and "
                               "24h)"));
  }
  for (const char* bad : {"600000h", "0.5s", "0"}) {
    auto cfg = flytecd::config::defaults();
    auto s = load(std::string("interval: ") + bad + "\n", cfg);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("interval: \"" + std::string(bad) +
                                                  "\" is out of range (expected between 1s and "
                                                  "24h)"));
    CHECK(cfg.interval_seconds == 180);  // unchanged
  }
  auto cfg = flytecd::config::defaults();
  REQUIRE(load("interval: 1500ms\n", cfg));
  CHECK(cfg.interval_seconds == 1.5);  // sub-second precision kept, not truncated
  REQUIRE(load("interval: 1h30m\n", cfg));
  CHECK(cfg.interval_seconds == 5400);
  auto lw = load("lockWait: nan\n", cfg);
  REQUIRE_FALSE(lw);
  CHECK_THAT(lw.error().message, Catch::Contains("lockWait: \"nan\" is not a duration"));
  CHECK_FALSE(load("lockWait: 2h\n", cfg));  // at most 1h
  CHECK(load("lockWait: 0s\n", cfg));
}

// Issue 27.8: a ConfigMap mounted where a file was expected made YAML::LoadFile throw an I/O
// exception nobody caught (SIGABRT).
TEST_CASE("config: --config or flytectlConfig naming a directory is an error, not an abort",
          "[config]") {
  std::string tmpl = (fs::temp_directory_path() / "flytecd-config-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  auto cfg = flytecd::config::defaults();
  flytecd::Status s = flytecd::ok_status();
  REQUIRE_NOTHROW(s = flytecd::config::load_file(tmpl, cfg));
  REQUIRE_FALSE(s);
  CHECK(s.error().message == "config " + tmpl + ": is a directory (expected a YAML file)");
  std::ofstream(tmpl + "/flytecd.yaml") << "flytectlConfig: " << tmpl << "\n";
  REQUIRE_NOTHROW(s = flytecd::config::load_file(tmpl + "/flytecd.yaml", cfg));
  REQUIRE_FALSE(s);
  CHECK_THAT(s.error().message, Catch::Contains("flytectl config " + tmpl +
                                                ": is a directory (expected a YAML file)"));
  fs::remove_all(tmpl);
}

// Issue 26: the web page is on by default; `http.ui: false` turns it off; anything else is named.
TEST_CASE("config: http.ui is true by default and false turns the web page off", "[config][page]") {
  auto cfg = flytecd::config::defaults();
  CHECK(cfg.http.ui);
  CHECK(load("http: {listen: \"127.0.0.1:9000\", ui: false}\n", cfg));
  CHECK_FALSE(cfg.http.ui);
  CHECK(cfg.http.listen == "127.0.0.1:9000");
  auto s = load("http:\n  ui: sometimes\n", cfg);
  REQUIRE_FALSE(s);
  CHECK_THAT(s.error().message, Catch::Contains("http.ui"));
  CHECK_THAT(s.error().message, Catch::Contains("true or false"));
}

}  // namespace FLYTECD_UNITY_ID
