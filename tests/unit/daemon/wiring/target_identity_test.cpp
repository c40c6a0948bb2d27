// Ownership belongs to one target: the identity a state directory keys its ledgers by.
#include "daemon/wiring/target_identity.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "daemon/pass/applied_record.hpp"
#include "daemon/wiring/wiring.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using namespace flytecd;

TEST_CASE("target identity: one spelling per endpoint", "[wiring][target]") {
  using wiring::normalize_endpoint;
  CHECK(normalize_endpoint("dns:///Admin.Example.com:81") == "admin.example.com:81");
  CHECK(normalize_endpoint("admin.example.com:81") == "admin.example.com:81");
  CHECK(normalize_endpoint("grpc://admin.example.com:81/") == "admin.example.com:81");
  CHECK(normalize_endpoint("dns:///admin.example.com") == "admin.example.com:443");
  CHECK(normalize_endpoint("admin.example.com:") == "admin.example.com:443");
  CHECK(normalize_endpoint("[::1]:8089") == "[::1]:8089");
  CHECK(normalize_endpoint("ipv4:127.0.0.1:8089") == "127.0.0.1:8089");
  CHECK(normalize_endpoint("unix:///run/Admin.sock") == "unix:///run/Admin.sock");
}

TEST_CASE("target identity: two FlyteAdmins are two targets, the emulator is one of its own",
          "[wiring][target]") {
  config::Config a = config::defaults(), b = a, e = a, a2 = a;
  a.state_dir = b.state_dir = e.state_dir = a2.state_dir = "/var/lib/flytecd";
  a.admin.endpoint = "dns:///127.0.0.1:8089";
  a2.admin.endpoint = "127.0.0.1:8089";
  b.admin.endpoint = "dns:///127.0.0.1:8090";
  const auto ia = wiring::target_identity(a), ib = wiring::target_identity(b),
             ie = wiring::target_identity(e);
  CHECK(ia.id == "flyteadmin 127.0.0.1:8089");
  CHECK(wiring::target_identity(a2).id == ia.id);
  CHECK(ib.id != ia.id);
  CHECK(ie.id == "flyteadmin emulator (embedded)");
  CHECK(ia.slug.rfind("flyteadmin-127.0.0.1-8089-", 0) == 0);
  CHECK(ia.slug != ib.slug);
  CHECK(ie.slug.rfind("embedded-emulator-", 0) == 0);
  CHECK(wiring::target_dir(a) == fs::path("/var/lib/flytecd/targets") / ia.slug);
  CHECK(wiring::target_dir(a).parent_path() == wiring::target_dir(b).parent_path());
}

TEST_CASE("target state: a switch is said once, an earlier ledger moves only to its own target",
          "[wiring][target]") {
  const fs::path dir =
      fs::temp_directory_path() / ("flytecd-target-state-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  config::Config a = config::defaults();
  a.state_dir = dir.string();
  a.repo = "repo";
  a.admin.endpoint = "dns:///127.0.0.1:8089";
  config::Config b = a;
  b.admin.endpoint = "dns:///127.0.0.1:8090";
  // An earlier flytecd's ledger and its record, written for A.
  std::ofstream(dir / "ledger.db") << "sqlite";
  pass::AppliedRecord rec;
  rec.converged = "abc";
  rec.config_fingerprint = wiring::ownership_fingerprint(a);
  std::ofstream(pass::record_file(a.state_dir)) << pass::to_json(rec);

  // B: the earlier ledger is not B's; it stays where it is, and that is said.
  auto pb = wiring::prepare_target_state(b, /*write=*/true);
  REQUIRE(pb);
  CHECK(fs::exists(dir / "ledger.db"));
  CHECK(pb->ledger == wiring::target_dir(b) / "ledger.db");
  REQUIRE(pb->notices.size() == 1);
  CHECK(pb->notices[0].find("is not used for flyteadmin 127.0.0.1:8090") != std::string::npos);

  // A reader of A uses the earlier ledger in place, and moves nothing.
  auto ra = wiring::prepare_target_state(a, /*write=*/false);
  REQUIRE(ra);
  CHECK(ra->ledger == dir / "ledger.db");
  CHECK(ra->notices.empty());

  // A writer of A: the ledger and record move into A's directory; the switch from B is said.
  auto pa = wiring::prepare_target_state(a, /*write=*/true);
  REQUIRE(pa);
  CHECK_FALSE(fs::exists(dir / "ledger.db"));
  CHECK(fs::exists(wiring::target_dir(a) / "ledger.db"));
  CHECK(fs::exists(wiring::target_dir(a) / "applied-revision.json"));
  REQUIRE(pa->notices.size() == 2);
  CHECK(pa->notices[0].find("moved from") != std::string::npos);
  CHECK(pa->notices[1].find("was last used with flyteadmin 127.0.0.1:8090") != std::string::npos);
  // Once: the next writer of A says nothing.
  auto again = wiring::prepare_target_state(a, /*write=*/true);
  REQUIRE(again);
  CHECK(again->notices.empty());
  const auto known = wiring::known_targets(a.state_dir);
  REQUIRE(known.size() == 1);  // only A has a ledger
  CHECK(known[0].first == "flyteadmin 127.0.0.1:8089");
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
