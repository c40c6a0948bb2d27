#include "daemon/config/config.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
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

TEST_CASE("config: packages.verify entries and packages.trustedRoot, errors with file:line",
          "[config][signature]") {
  auto cfg = flytecd::config::defaults();
  REQUIRE(
      load("packages:\n"
           "  trustedRoot: /etc/flytecd/trusted_root.json\n"
           "  verify:\n"
           "    - prefix: oci://ghcr.io/acme/\n"
           "      keyFile: /etc/flytecd/cosign.pub\n"
           "    - prefix: oci://ghcr.io/\n"
           "      matchOIDCIdentity:\n"
           "        - {issuer: ^https://issuer$, subject: ^https://github\\.com/acme/.*$}\n",
           cfg));
  CHECK(cfg.packages.trusted_root_file == "/etc/flytecd/trusted_root.json");
  REQUIRE(cfg.packages.verify.size() == 2);
  CHECK(cfg.packages.verify[0].prefix == "oci://ghcr.io/acme/");
  CHECK(cfg.packages.verify[0].key_file == "/etc/flytecd/cosign.pub");
  CHECK(cfg.packages.verify[0].where == "config packages.verify[0]");
  CHECK(cfg.packages.verify[1].identities.size() == 1);
  // What is wrong, where, and what was expected.
  auto no_prefix = load("packages:\n  verify:\n    - keyFile: /k.pub\n", cfg);
  REQUIRE_FALSE(no_prefix);
  CHECK_THAT(no_prefix.error().message,
             Catch::Contains(":3: packages.verify[0].prefix: no prefix"));
  auto bad_re = load(
      "packages:\n  verify:\n    - prefix: oci://h/\n      matchOIDCIdentity:\n"
      "        - issuer: ^x$\n          subject: ^(a$\n",
      cfg);
  REQUIRE_FALSE(bad_re);
  CHECK_THAT(bad_re.error().message,
             Catch::Contains(":6: packages.verify[0].matchOIDCIdentity[0].subject"));
  CHECK_THAT(bad_re.error().message, Catch::Contains("is not an RE2 expression"));
  auto repo_key =
      load("packages:\n  verify:\n    - {prefix: oci://h/, key: keys/cosign.pub}\n", cfg);
  REQUIRE_FALSE(repo_key);
  CHECK_THAT(repo_key.error().message, Catch::Contains("expected keyFile"));
  auto not_list = load("packages:\n  verify: {prefix: oci://h/}\n", cfg);
  REQUIRE_FALSE(not_list);
  CHECK_THAT(not_list.error().message, Catch::Contains("expected a list"));
}

TEST_CASE("config: a flyte2 section makes the target Flyte 2, with admin's keys and errors",
          "[config][flyte2]") {
  auto cfg = flytecd::config::defaults();
  CHECK_FALSE(cfg.flyte2.enabled);
  REQUIRE(load("flyte2: {}\n", cfg));
  CHECK(cfg.flyte2.enabled);
  CHECK(cfg.flyte2.admin.endpoint.empty());  // the embedded Flyte 2 emulator
  auto full = flytecd::config::defaults();
  REQUIRE(
      load("flyte2:\n  endpoint: dns:///f2:443\n  caCertFilePath: /etc/ca.pem\n"
           "  authType: ClientSecret\n  clientId: flytecd\n",
           full));
  CHECK(full.flyte2.enabled);
  CHECK(full.flyte2.admin.endpoint == "dns:///f2:443");
  CHECK(full.flyte2.admin.ca_cert_file_path == "/etc/ca.pem");
  CHECK(full.flyte2.admin.client_id == "flytecd");
  CHECK(full.admin.endpoint.empty());  // admin: is left alone
  auto bad = flytecd::config::defaults();
  auto s = load("repo: .\nflyte2:\n  endpoint: x\n  endpont: y\n", bad);
  REQUIRE_FALSE(s);
  // A typo is an error (it would otherwise target the embedded emulator without a word).
  CHECK_THAT(s.error().message,
             Catch::Contains(":4: flyte2.endpont: unknown key (expected endpoint, insecure, "));
  auto list = flytecd::config::defaults();
  auto l = load("flyte2: [a]\n", list);
  REQUIRE_FALSE(l);
  CHECK_THAT(l.error().message, Catch::Contains("flyte2: expected a mapping"));
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

TEST_CASE("config: driftScanInterval defaults to the interval and is checked like it",
          "[config][duration]") {
  auto cfg = flytecd::config::defaults();
  REQUIRE(load("interval: 2m\n", cfg));
  CHECK(cfg.drift_scan() == 120);  // the default: every interval's pass is whole
  REQUIRE(load("interval: 30s\ndriftScanInterval: 10m\n", cfg));
  CHECK(cfg.drift_scan() == 600);
  CHECK(cfg.interval_seconds == 30);
  auto bad = load("driftScanInterval: 0.5s\n", cfg);
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("driftScanInterval: \"0.5s\" is out of range"));
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

// Issue 23 item 2: the keys are one schema. What a key holds comes from its row, so every key's
// conversion error says what was expected (history.maxEntries said "a string"; log was missing
// from the top-level list), and the environment variables are the rows' too.
TEST_CASE(
    "config: every key's error comes from the schema: what it holds, and the keys a section has",
    "[config]") {
  auto cfg = flytecd::config::defaults();
  auto e = load("history:\n  maxEntries: lots\n", cfg);
  REQUIRE_FALSE(e);
  CHECK_THAT(e.error().message, Catch::Contains(":2: history.maxEntries:"));
  CHECK_THAT(e.error().message, Catch::Contains("(expected a whole number, 1 or more)"));
  auto t = load("packages:\n  fetchTimeout: [1, 2]\n", cfg);
  REQUIRE_FALSE(t);
  CHECK_THAT(t.error().message, Catch::Contains("packages.fetchTimeout"));
  CHECK_THAT(t.error().message, Catch::Contains("(expected a duration like 30s, 5m or 1h)"));
  auto u = load("logs: {level: info}\n", cfg);
  REQUIRE_FALSE(u);
  CHECK_THAT(u.error().message,
             Catch::Contains(
                 "logs: unknown key (expected repo, stateDir, flytectlConfig, admin, flyte2, "
                 "policy, domains, parallelism, lockWait, git, interval, driftScanInterval, http, "
                 "notifications, packages, history, kubernetes, log)"));
  auto g = load("git:\n  url: https://example.com/r.git\n  branch: main\n", cfg);
  REQUIRE_FALSE(g);
  CHECK_THAT(g.error().message, Catch::Contains(":3: git.branch: unknown key (expected url, ref,"));
  auto l = load("log: {level: loud}\n", cfg);
  REQUIRE_FALSE(l);
  CHECK_THAT(
      l.error().message,
      Catch::Contains("log.level: 'loud' is not one of trace, debug, info, warn, error, off"));
  auto ok = flytecd::config::defaults();
  REQUIRE(
      load("log: {level: debug, format: json}\nhttp: {ui: false}\nhistory: {maxAgeDays: 2}\n", ok));
  CHECK(ok.log.level == "debug");
  CHECK(ok.log.format == "json");
  CHECK_FALSE(ok.http.ui);
  CHECK(ok.history.max_age_seconds == 2 * 24 * 3600);
}

TEST_CASE("config: the schema lists every plain key once, with its variable and what it holds",
          "[config]") {
  std::map<std::string, flytecd::config::KeyInfo> by;
  for (const auto& k : flytecd::config::keys()) CHECK(by.emplace(k.name, k).second);
  REQUIRE(by.count("git.url"));
  CHECK(by.at("git.url").env == "FLYTECD_GIT_URL");
  CHECK(by.at("interval").expected == "a duration like 30s, 5m or 1h");
  CHECK(by.at("policy.selfHeal").env == "FLYTECD_SELF_HEAL");
  CHECK(by.at("packages.maxPackageBytes").expected ==
        "a positive number of bytes (e.g. 268435456)");
  CHECK(by.count("kubernetes") == 0);  // a section with its own parser, not a key
  // Each variable is read: FLYTECD_GIT_REF sets git.ref, a bad boolean names its variable.
  ::setenv("FLYTECD_GIT_REF", "release", 1);
  ::setenv("FLYTECD_PRUNE", "maybe", 1);
  auto cfg = flytecd::config::defaults();
  auto s = flytecd::config::apply_env(cfg);
  ::unsetenv("FLYTECD_GIT_REF");
  ::unsetenv("FLYTECD_PRUNE");
  CHECK(cfg.git.ref == "release");
  REQUIRE_FALSE(s);
  CHECK_THAT(s.error().message, Catch::Contains("FLYTECD_PRUNE: 'maybe' is not true or false"));
}

}  // namespace FLYTECD_UNITY_ID
