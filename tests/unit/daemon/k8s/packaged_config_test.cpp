// The default configuration shipped in the .deb (packaging/etc/flytecd/config.yaml) parses as
// shipped and with every optional setting uncommented, so no key shown to users is fictional.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/config/config.hpp"
#include "test_paths.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "# key: v" (one hash, at column 0) is an optional setting; "## text" is an explanation.
std::string uncomment_settings(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) line = line.substr(2);
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("packaging: the shipped default config parses as installed", "[packaging]") {
  const fs::path file = fs::path(FLYTECD_SOURCE_DIR) / "packaging/etc/flytecd/config.yaml";
  auto cfg = flytecd::config::defaults();
  auto s = flytecd::config::load_file(file.string(), cfg);
  INFO((s ? std::string() : s.error().message));
  REQUIRE(s.ok());
  CHECK(cfg.state_dir == "/var/lib/flytecd");
  CHECK(cfg.repo == "/usr/share/doc/flytecd/examples/repo-layout-example");
  CHECK(cfg.interval_seconds == 180);
  CHECK(cfg.http.listen == "127.0.0.1:8080");
  CHECK(cfg.admin.endpoint.empty());  // embedded emulator until the user sets one
}

TEST_CASE("packaging: every optional setting in the default config is a real key", "[packaging]") {
  const fs::path src = fs::path(FLYTECD_SOURCE_DIR) / "packaging/etc/flytecd/config.yaml";
  const std::string text = uncomment_settings(slurp(src));
  const fs::path file =
      fs::temp_directory_path() / ("flytecd-config-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << text;
  auto cfg = flytecd::config::defaults();
  auto s = flytecd::config::load_file(file.string(), cfg);
  fs::remove(file);
  INFO(text);
  INFO((s ? std::string() : s.error().message));
  REQUIRE(s.ok());
  CHECK(cfg.git.url == "https://github.com/acme/flyte-gitops");
  CHECK(cfg.git.password_file == "/run/credentials/flytecd.service/git-token");
  CHECK(cfg.git.allowed_signers_file == "/etc/flytecd/allowed_signers");
  CHECK(cfg.admin.endpoint == "dns:///flyte.example.com:443");
  CHECK(cfg.admin.auth_type == "ClientSecret");
  CHECK(cfg.http.sync_token_file == "/run/credentials/flytecd.service/sync-token");
  CHECK(cfg.notifications.size() == 2);
  CHECK(cfg.kubernetes.leader_election.enabled);
  CHECK(cfg.kubernetes.config_map.name == "flyte-admin-overrides");
  CHECK(cfg.kubernetes.applied_record.on(false));
  CHECK(cfg.kubernetes.applied_record.name == "flytecd-applied-revision");
  CHECK(cfg.kubernetes.events.interval_ms == 300000);
  CHECK(cfg.packages.registry == "registry.example.com");
  CHECK(cfg.packages.max_package_bytes == 268435456);
  CHECK(cfg.packages.memory_budget_bytes == 268435456);
}

TEST_CASE("packaging: a zero package memory bound is refused naming the key", "[packaging]") {
  const fs::path file =
      fs::temp_directory_path() / ("flytecd-config-zero-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "packages:\n  memoryBudgetBytes: 0\n";
  auto cfg = flytecd::config::defaults();
  auto s = flytecd::config::load_file(file.string(), cfg);
  fs::remove(file);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Catch::Contains("packages.memoryBudgetBytes"));
  CHECK_THAT(s.error().message, Catch::Contains("positive"));
}

TEST_CASE("packaging: the kustomize base's config.yaml parses and enables leader election",
          "[packaging][k8s]") {
  const fs::path file = fs::path(FLYTECD_SOURCE_DIR) / "packaging/kustomize/base/config.yaml";
  auto cfg = flytecd::config::defaults();
  auto s = flytecd::config::load_file(file.string(), cfg);
  INFO((s ? std::string() : s.error().message));
  REQUIRE(s.ok());
  CHECK(cfg.http.listen == "0.0.0.0:8080");
  CHECK(cfg.kubernetes.leader_election.enabled);
  CHECK(cfg.kubernetes.leader_election.lease_duration_ms == 15000);
  CHECK(cfg.kubernetes.leader_election.renew_deadline_ms == 10000);
  CHECK(cfg.kubernetes.leader_election.retry_period_ms == 2000);
  CHECK_FALSE(cfg.kubernetes.config_map.enabled);
  CHECK(cfg.kubernetes.config_map.restart_deployment == "flyteadmin");
  CHECK(cfg.kubernetes.applied_record.on(false));
  CHECK(cfg.kubernetes.applied_record.name == "flytecd-applied-revision");
  CHECK(cfg.kubernetes.events.enabled);
}

}  // namespace FLYTECD_UNITY_ID
