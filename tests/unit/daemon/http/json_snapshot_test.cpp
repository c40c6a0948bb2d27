#include "daemon/http/json_snapshot.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::http::JsonSnapshot;

TEST_CASE("json snapshot: rendered once per change, the same pointer in between",
          "[http][snapshot]") {
  JsonSnapshot s;
  s["revision"] = "abc";
  const auto first = s.rendered();
  CHECK(*first == R"({"revision":"abc"})");
  CHECK(s.rendered() == first);
  CHECK(s.rendered() == first);
  CHECK(s.renders() == 1);

  s["drift"] = 0;
  const auto second = s.rendered();
  CHECK(second != first);
  CHECK(*second == R"({"drift":0,"revision":"abc"})");
  CHECK(*first == R"({"revision":"abc"})");  // readers holding the old one keep it intact
  CHECK(s.renders() == 2);

  s.erase("absent");  // not a change
  CHECK(s.rendered() == second);
  s.erase("drift");
  CHECK(*s.rendered() == R"({"revision":"abc"})");
  CHECK(s.renders() == 3);
}

TEST_CASE("json snapshot: live extra members are compared, not versioned", "[http][snapshot]") {
  JsonSnapshot s;
  s["revision"] = "abc";
  const nlohmann::json leader = {{"leader", {{"isLeader", true}}}};
  const auto a = s.rendered(leader);
  CHECK(*a == R"({"leader":{"isLeader":true},"revision":"abc"})");
  CHECK(s.rendered(leader) == a);
  const auto b = s.rendered({{"leader", {{"isLeader", false}}}});
  CHECK(b != a);
  CHECK(*b == R"({"leader":{"isLeader":false},"revision":"abc"})");
  CHECK(s.document().count("leader") == 0);  // extras never enter the document
  CHECK(s.renders() == 2);
}

TEST_CASE("json snapshot: invalid UTF-8 is replaced, not thrown", "[http][snapshot]") {
  JsonSnapshot s;
  s["name"] = std::string("bad \xff byte");
  CHECK(*s.rendered() == "{\"name\":\"bad \xEF\xBF\xBD byte\"}");
}

}  // namespace FLYTECD_UNITY_ID
