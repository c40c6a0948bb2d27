// flytepropeller/pkg/compiler/validators/typing.go AreTypesCastable and utils.go
// LiteralTypeForLiteral, as the emulator applies them to launch-plan inputs.
#include "sinks/emulator/literal_types.hpp"

#include <catch2/catch.hpp>

#include "sinks/emulator/admin_common.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {
namespace fc = flyteidl::core;
using namespace flytecd::sinks::emulator::detail;

fc::LiteralType simple(fc::SimpleType t) {
  fc::LiteralType lt;
  lt.set_simple(t);
  return lt;
}
fc::LiteralType list_of(const fc::LiteralType& t) {
  fc::LiteralType lt;
  *lt.mutable_collection_type() = t;
  return lt;
}
fc::LiteralType map_of(const fc::LiteralType& t) {
  fc::LiteralType lt;
  *lt.mutable_map_value_type() = t;
  return lt;
}
fc::LiteralType union_of(std::initializer_list<fc::LiteralType> ts) {
  fc::LiteralType lt;
  for (const auto& t : ts) *lt.mutable_union_type()->add_variants() = t;
  return lt;
}
fc::LiteralType blob(const std::string& format) {
  fc::LiteralType lt;
  lt.mutable_blob()->set_format(format);
  return lt;
}
fc::LiteralType dataset(const std::string& format) {
  fc::LiteralType lt;
  lt.mutable_structured_dataset_type()->set_format(format);
  return lt;
}
}  // namespace

TEST_CASE("literal types: castability follows Flyte's rules", "[emulator][literal_types]") {
  CHECK(types_castable(simple(fc::INTEGER), simple(fc::INTEGER)));
  CHECK_FALSE(types_castable(simple(fc::INTEGER), simple(fc::FLOAT)));
  CHECK_FALSE(types_castable(simple(fc::INTEGER), simple(fc::NONE)));
  CHECK(types_castable(simple(fc::NONE), simple(fc::NONE)));
  // Optional[int] takes an int and a None; an int | float union takes neither ambiguously.
  CHECK(types_castable(simple(fc::INTEGER), union_of({simple(fc::INTEGER), simple(fc::NONE)})));
  CHECK(types_castable(simple(fc::NONE), union_of({simple(fc::INTEGER), simple(fc::NONE)})));
  CHECK_FALSE(types_castable(simple(fc::STRING), union_of({simple(fc::INTEGER)})));
  // A union upstream needs every variant accepted; a single-variant union is unwrapped.
  CHECK(types_castable(union_of({simple(fc::INTEGER)}), simple(fc::INTEGER)));
  CHECK_FALSE(types_castable(union_of({simple(fc::INTEGER), simple(fc::STRING)}),
                             union_of({simple(fc::INTEGER)})));
  // Collections and maps compare their element types; an empty (NONE) one matches any.
  CHECK(types_castable(list_of(simple(fc::INTEGER)), list_of(simple(fc::INTEGER))));
  CHECK_FALSE(types_castable(list_of(simple(fc::INTEGER)), list_of(simple(fc::STRING))));
  CHECK(types_castable(list_of(simple(fc::NONE)), list_of(simple(fc::STRING))));
  CHECK_FALSE(types_castable(map_of(simple(fc::INTEGER)), list_of(simple(fc::INTEGER))));
  CHECK(types_castable(map_of(simple(fc::NONE)), map_of(simple(fc::FLOAT))));
  // Blobs: an empty format matches any.
  CHECK(types_castable(blob("csv"), blob("")));
  CHECK(types_castable(blob(""), blob("parquet")));
  CHECK_FALSE(types_castable(blob("csv"), blob("parquet")));
  // Structured datasets: formats compare case-insensitively, None is accepted.
  CHECK(types_castable(dataset("PARQUET"), dataset("parquet")));
  CHECK_FALSE(types_castable(dataset("csv"), dataset("parquet")));
  CHECK(types_castable(simple(fc::NONE), dataset("parquet")));
  // Enums from strings and back.
  fc::LiteralType color;
  color.mutable_enum_type()->add_values("red");
  CHECK(types_castable(simple(fc::STRING), color));
  CHECK(types_castable(color, simple(fc::STRING)));
  CHECK_FALSE(types_castable(simple(fc::INTEGER), color));
  // Metadata and annotations are ignored, a differing structure tag is not.
  auto tagged = simple(fc::INTEGER);
  tagged.mutable_structure()->set_tag("a");
  auto annotated = simple(fc::INTEGER);
  (*annotated.mutable_annotation()->mutable_annotations()->mutable_fields())["k"].set_string_value(
      "v");
  CHECK(types_castable(annotated, simple(fc::INTEGER)));
  CHECK_FALSE(types_castable(tagged, simple(fc::INTEGER)));
}

TEST_CASE("literal types: the type of a literal value", "[emulator][literal_types]") {
  fc::Literal l;
  CHECK_FALSE(literal_type_for(l).has_value());
  CHECK(literal_type_error(literal_type_for(l)).rfind("got unknown literal type: [<nil>].", 0) ==
        0);
  l.mutable_scalar()->mutable_primitive()->set_float_value(1.5);
  CHECK(go_prototext(*literal_type_for(l)) == "simple:FLOAT");
  fc::Literal none;
  none.mutable_scalar()->mutable_none_type();
  CHECK(go_prototext(*literal_type_for(none)) == "simple:NONE");
  fc::Literal binary;
  binary.mutable_scalar()->mutable_binary()->set_tag("msgpack");
  CHECK(go_prototext(*literal_type_for(binary)) == "simple:STRUCT");
  fc::Literal generic;
  generic.mutable_scalar()->mutable_generic();
  CHECK(go_prototext(*literal_type_for(generic)) == "simple:STRUCT");

  // Nested collections of mixed element types become a collection of one flattened union.
  fc::Literal outer;
  auto* a = outer.mutable_collection()->add_literals()->mutable_collection();
  a->add_literals()->mutable_scalar()->mutable_primitive()->set_integer(1);
  a->add_literals()->mutable_scalar()->mutable_primitive()->set_string_value("x");
  auto* b = outer.mutable_collection()->add_literals()->mutable_collection();
  b->add_literals()->mutable_scalar()->mutable_primitive()->set_boolean(true);
  CHECK(go_prototext(*literal_type_for(outer)) ==
        "collection_type:{collection_type:{union_type:{variants:{collection_type:{simple:BOOLEAN}} "
        "variants:{simple:INTEGER} variants:{simple:STRING}}}}");

  fc::Literal map;
  (*map.mutable_map()->mutable_literals())["k"].mutable_scalar()->mutable_primitive()->set_integer(
      1);
  CHECK(go_prototext(*literal_type_for(map)) == "map_value_type:{simple:INTEGER}");
  fc::Literal empty_map;
  empty_map.mutable_map();
  CHECK(go_prototext(*literal_type_for(empty_map)) == "map_value_type:{simple:NONE}");
}

}  // namespace FLYTECD_UNITY_ID
