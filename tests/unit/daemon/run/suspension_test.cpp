#include "daemon/run/suspension.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <random>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using namespace flytecd;

namespace {

fs::path temp_dir() {
  auto d =
      fs::temp_directory_path() / ("flytecd-suspension-" + std::to_string(std::random_device{}()));
  fs::create_directories(d);
  return d;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace

TEST_CASE("suspension: no file means not suspended, written state reads back", "[suspension]") {
  const auto dir = temp_dir();
  const auto file = run::suspension_file(dir);
  CHECK(file == dir / "suspended.json");
  auto none = run::read_suspension(file);
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  run::Suspension s{"2026-12-01T13:00:00Z", "maintenance | \"window\"", "cli alice (127.0.0.1:5)"};
  REQUIRE(run::write_suspension(file, s).ok());
  auto back = run::read_suspension(file);
  REQUIRE(back.ok());
  REQUIRE(back->has_value());
  CHECK((*back)->since == s.since);
  CHECK((*back)->reason == s.reason);
  CHECK((*back)->by == s.by);

  // Resume removes it; removing again is fine.
  REQUIRE(run::write_suspension(file, std::nullopt).ok());
  CHECK_FALSE(fs::exists(file));
  REQUIRE(run::write_suspension(file, std::nullopt).ok());
  fs::remove_all(dir);
}

TEST_CASE("suspension: a write replaces the file whole and leaves no temporary", "[suspension]") {
  const auto dir = temp_dir();
  const auto file = run::suspension_file(dir);
  // A longer previous content: a replace must not leave its tail behind.
  write_text(file, std::string(4000, ' ') + "{\"since\":\"old\",\"reason\":\"" +
                       std::string(2000, 'x') + "\"}");
  REQUIRE(run::write_suspension(file, run::Suspension{"new", "short", "b"}).ok());
  auto back = run::read_suspension(file);
  REQUIRE(back.ok());
  REQUIRE(back->has_value());
  CHECK((*back)->since == "new");
  CHECK((*back)->reason == "short");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  CHECK(entries == 1);  // no suspended.json.tmp left over
  // The state directory is created when missing.
  const auto nested = run::suspension_file(dir / "a" / "b");
  REQUIRE(run::write_suspension(nested, run::Suspension{"t", "", ""}).ok());
  CHECK(fs::exists(nested));
  fs::remove_all(dir);
}

TEST_CASE("suspension: a corrupt file is an error naming it", "[suspension]") {
  const auto dir = temp_dir();
  const auto file = run::suspension_file(dir);
  for (const std::string text :
       {"{not json", "[1,2]", "{\"since\": 5}", "{\"reason\": \"no since\"}", ""}) {
    INFO(text);
    write_text(file, text);
    auto r = run::read_suspension(file);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::invalid_input);
    CHECK_THAT(r.error().message, Catch::Contains(file.string()));
  }
  fs::remove_all(dir);
}

TEST_CASE("suspension: project suspensions read back in project order, and none removes the file",
          "[suspension]") {
  const auto dir = temp_dir();
  const auto file = run::project_suspension_file(dir);
  CHECK(file == dir / "suspended-projects.json");
  auto none = run::read_project_suspensions(file);
  REQUIRE(none.ok());
  CHECK(none->empty());
  run::ProjectSuspensions s;
  s["ml-training"] = run::Suspension{"2026-12-01T13:00:00Z", "quota review", "alice"};
  s["data-eng"] = run::Suspension{"2026-12-01T14:00:00Z", "", "bob"};
  REQUIRE(run::write_project_suspensions(file, s).ok());
  auto back = run::read_project_suspensions(file);
  REQUIRE(back.ok());
  REQUIRE(back->size() == 2);
  CHECK(back->at("ml-training").reason == "quota review");
  CHECK(back->at("data-eng").by == "bob");
  const auto j = run::to_json(*back);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["project"] == "data-eng");
  CHECK(j[1]["since"] == "2026-12-01T13:00:00Z");
  REQUIRE(run::write_project_suspensions(file, {}).ok());
  CHECK_FALSE(fs::exists(file));
  fs::remove_all(dir);
}

TEST_CASE("suspension: a corrupt project suspension file is an error, not a resume",
          "[suspension]") {
  const auto dir = temp_dir();
  const auto file = run::project_suspension_file(dir);
  for (const char* text :
       {"not json", "[]", R"({"projects": {}})", R"({"projects": [{"since": "x"}]})",
        R"({"projects": [{"project": 5}]})"}) {
    write_text(file, text);
    auto r = run::read_project_suspensions(file);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("suspended-projects.json") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("suspension: a project's suspend keeps since/by, resume removes it, a bad id is refused",
          "[suspension]") {
  using flytecd::run::change_project_suspension;
  using flytecd::run::ProjectSuspensions;
  using flytecd::run::Suspension;
  const Suspension first{"2026-01-01T00:00:00Z", "quota", "alice"};
  auto on = change_project_suspension({}, true, "ml-training", first);
  REQUIRE(on);
  REQUIRE(on->count("ml-training"));
  CHECK(on->at("ml-training").by == "alice");

  // Suspended again: since and by stay; a new reason replaces the old, an empty one keeps it.
  auto again = change_project_suspension(*on, true, "ml-training",
                                         Suspension{"2026-02-02T00:00:00Z", "audit", "bob"});
  REQUIRE(again);
  CHECK(again->at("ml-training").since == first.since);
  CHECK(again->at("ml-training").by == "alice");
  CHECK(again->at("ml-training").reason == "audit");
  auto quiet = change_project_suspension(*again, true, "ml-training",
                                         Suspension{"2026-03-03T00:00:00Z", "", "carol"});
  REQUIRE(quiet);
  CHECK(quiet->at("ml-training").reason == "audit");

  // Another project is added beside it; resume removes only the one named.
  auto two = change_project_suspension(*quiet, true, "data_eng", first);
  REQUIRE(two);
  CHECK(two->size() == 2);
  auto off = change_project_suspension(*two, false, "ml-training", first);
  REQUIRE(off);
  CHECK(off->size() == 1);
  CHECK(off->count("data_eng") == 1);
  auto idle = change_project_suspension(*off, false, "never-suspended", first);
  REQUIRE(idle);
  REQUIRE(idle->size() == 1);
  CHECK(idle->count("data_eng") == 1);

  for (const std::string& bad :
       std::vector<std::string>{"", "a/b", "space here", "x.y", std::string(64, 'p')}) {
    INFO(bad);
    auto refused = change_project_suspension(*off, true, bad, first);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::invalid_input);
    CHECK_THAT(refused.error().message, Catch::Contains("not a Flyte project id"));
  }
  CHECK(change_project_suspension({}, true, std::string(63, 'p'), first));
}

}  // namespace FLYTECD_UNITY_ID
