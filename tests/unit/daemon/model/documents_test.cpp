#include <catch2/catch.hpp>

#include "daemon/model/documents.hpp"
#include "flyteidl/admin/matchable_resource.pb.h"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::model::PackedAttributes;
namespace admin = flyteidl::admin;

namespace {
admin::MatchingAttributes labels(std::initializer_list<std::pair<const char*, const char*>> kv) {
  admin::MatchingAttributes m;
  auto* values = m.mutable_workflow_execution_config()->mutable_labels()->mutable_values();
  for (const auto& [k, v] : kv) (*values)[k] = v;
  return m;
}
}  // namespace

TEST_CASE("packed attributes: get returns a message equal to the one packed", "[model]") {
  admin::MatchingAttributes m;
  auto* q = m.mutable_execution_queue_attributes();
  for (int i = 0; i < 1000; ++i) q->add_tags(i % 2 ? "a" : "gpu");
  const PackedAttributes packed(m);
  const auto back = packed.get();
  CHECK(back.SerializeAsString() == m.SerializeAsString());
  CHECK(back.execution_queue_attributes().tags_size() == 1000);
  CHECK(back.execution_queue_attributes().tags(1) == "a");
  // Held as wire bytes: about 3 bytes per one-letter tag, not a string object each.
  CHECK(packed.bytes().size() < 5 * 1000);
  CHECK(packed.bytes().capacity() <= packed.bytes().size() + 32);
}

TEST_CASE("packed attributes: equal values pack equal whatever the map insertion order",
          "[model]") {
  const PackedAttributes a(labels({{"team", "ml"}, {"cost", "c1"}, {"env", "prod"}}));
  const PackedAttributes b(labels({{"env", "prod"}, {"team", "ml"}, {"cost", "c1"}}));
  CHECK(a == b);
  CHECK(a.bytes() == b.bytes());
  CHECK_FALSE(a == PackedAttributes(labels({{"team", "ml"}})));
}

TEST_CASE("packed attributes: unknown fields survive the round trip", "[model]") {
  // A field number FlyteAdmin's MatchingAttributes does not have (a newer server's field).
  admin::MatchingAttributes m;
  m.mutable_execution_cluster_label()->set_value("east");
  std::string wire = m.SerializeAsString();
  wire += std::string("\xf8\x07\x2a", 3);  // field 127, varint 42
  admin::MatchingAttributes with_unknown;
  REQUIRE(with_unknown.ParseFromString(wire));
  const PackedAttributes packed(with_unknown);
  const auto back = packed.get();
  CHECK(back.execution_cluster_label().value() == "east");
  CHECK(back.SerializeAsString() == wire);
}

TEST_CASE("packed attributes: edit changes the value, copies share nothing", "[model]") {
  PackedAttributes a(labels({{"team", "ml"}}));
  PackedAttributes copy = a;
  a.edit([](admin::MatchingAttributes& v) {
    (*v.mutable_workflow_execution_config()->mutable_labels()->mutable_values())["team"] = "data";
  });
  CHECK(a.get().workflow_execution_config().labels().values().at("team") == "data");
  CHECK(copy.get().workflow_execution_config().labels().values().at("team") == "ml");
  CHECK_FALSE(a == copy);
  // An empty value packs to nothing and reads back empty.
  const PackedAttributes empty{admin::MatchingAttributes{}};
  CHECK(empty.bytes().empty());
  CHECK_FALSE(empty.get().has_execution_cluster_label());
  CHECK(PackedAttributes{} == empty);
}

}  // namespace FLYTECD_UNITY_ID
