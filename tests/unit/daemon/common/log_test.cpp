#include "daemon/common/log.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

// Issue 21: the JSON log pattern wrote the message raw, so a message with a quote, a newline or
// a registry's bytes was not JSON. Every line is one object now, with the thread's fields.
TEST_CASE("log: a JSON line is one object whatever the message holds", "[log]") {
  const std::string hostile = "say \"hi\"\n\tthen \\ \x01 caf\xe9 \xe6\x97\xa5";
  const auto line = log::json_line("2026-12-02T10:00:00.000Z", "warning", "git:origin", hostile);
  CHECK(line.find('\n') == std::string::npos);
  const auto j = nlohmann::json::parse(line);
  CHECK(j["time"] == "2026-12-02T10:00:00.000Z");
  CHECK(j["level"] == "warning");
  CHECK(j["logger"] == "git:origin");
  CHECK(j["message"] == "say \"hi\"\n\tthen \\ \x01 caf\xef\xbf\xbd \xe6\x97\xa5");
  CHECK(j.size() == 4);
}

TEST_CASE("log: structured fields belong to the thread and its scope", "[log]") {
  {
    const log::Fields pass{{"revision", "abc123"}, {"trigger", "webhook"}};
    {
      const log::Fields step{{"object", "override/p/d/x"}, {"trigger", "inner"}};
      const auto j = nlohmann::json::parse(log::json_line("t", "info", "daemon", "m"));
      CHECK(j["revision"] == "abc123");
      CHECK(j["object"] == "override/p/d/x");
      CHECK(j["trigger"] == "inner");  // the inner scope shadows the outer value
      // Another thread sees none of them.
      std::string other;
      std::thread([&] { other = log::json_line("t", "info", "daemon", "m"); }).join();
      CHECK_FALSE(nlohmann::json::parse(other).contains("revision"));
    }
    const auto j = nlohmann::json::parse(log::json_line("t", "info", "daemon", "m"));
    CHECK(j["trigger"] == "webhook");
    CHECK_FALSE(j.contains("object"));
  }
  CHECK_FALSE(nlohmann::json::parse(log::json_line("t", "info", "d", "m")).contains("revision"));
}

TEST_CASE("log: the command line's format wins over the configuration file's", "[log]") {
  log::init_from_command_line("", "");
  log::configure("", "json");
  CHECK(log::json_format());
  log::init_from_command_line("", "text");
  log::configure("", "json");
  CHECK_FALSE(log::json_format());
  log::init_from_command_line("warn", "");
  log::configure("debug", "");
  CHECK(spdlog::get_level() == spdlog::level::warn);
  log::init("info", false);  // spdlog's default, what the other tests run with
}

}  // namespace FLYTECD_UNITY_ID
