// type_of: literalTypeForLiterals as FlyteAdmin infers a collection's element type (one
// implementation, shared by flytecd's compile step and the emulator).
#include <google/protobuf/text_format.h>

#include <catch2/catch.hpp>

#include "sinks/workflow_compiler.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::sinks::compiler;
namespace fc = flyteidl::core;

namespace {

fc::Literal literal(const std::string& text) {
  fc::Literal l;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &l));
  return l;
}

fc::LiteralType lt(const std::string& text) {
  fc::LiteralType t;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &t));
  return t;
}

std::string str(const std::string& s) {
  return "literals { scalar { primitive { string_value: \"" + s + "\" } } }";
}

std::string union_of(const std::string& value, const std::string& type) {
  return "literals { scalar { union { value { scalar { primitive { " + value + " } } } type { " +
         type + " } } } }";
}

}  // namespace

TEST_CASE("literal types: an empty inner list takes the type of its siblings",
          "[compile][issue22]") {
  // [["foo"], []] is a List[List[STRING]], as FlyteAdmin infers it.
  const auto t = type_of(literal("collection { literals { collection { " + str("foo") +
                                 " } } literals { collection { } } }"));
  REQUIRE(t);
  CHECK(go_text(*t) == "collection_type:{collection_type:{simple:STRING}}");
  CHECK(castable(*t, lt("collection_type { collection_type { simple: STRING } }")));
  // Only empty lists: List[List[NONE]].
  const auto e = type_of(literal("collection { literals { collection { } } }"));
  REQUIRE(e);
  CHECK(go_text(*e) == "collection_type:{collection_type:{simple:NONE}}");
}

TEST_CASE("literal types: lists of union values merge into one union (buildMultipleTypeUnion)",
          "[compile][issue22]") {
  const std::string u = "union_type { variants { simple: INTEGER } variants { simple: STRING } }";
  // [[u(1)], [u("a")]] into List[List[Union[INTEGER, STRING]]].
  const auto t =
      type_of(literal("collection { literals { collection { " +
                      union_of("integer: 1", "simple: INTEGER") + " } } literals { collection { " +
                      union_of("string_value: \"a\"", "simple: STRING") + " } } }"));
  REQUIRE(t);
  CHECK(go_text(*t) ==
        "collection_type:{collection_type:{union_type:{variants:{simple:INTEGER} "
        "variants:{simple:STRING}}}}");
  CHECK(castable(*t, lt("collection_type { collection_type { " + u + " } }")));
  // Mixed plain values: variants sorted by their prototext.
  const auto m = type_of(
      literal("collection { " + str("a") + " literals { scalar { primitive { integer: 1 } } } }"));
  REQUIRE(m);
  CHECK(go_text(*m) ==
        "collection_type:{union_type:{variants:{simple:INTEGER} "
        "variants:{simple:STRING}}}");
}

}  // namespace FLYTECD_UNITY_ID
