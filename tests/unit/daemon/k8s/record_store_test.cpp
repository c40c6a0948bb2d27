// The applied-revision record as ConfigMap data (pure), and its `kubernetes:` settings.
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include "daemon/k8s/record_store.hpp"
#include "daemon/k8s/settings.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

flytecd::pass::AppliedRecord sample() {
  flytecd::pass::AppliedRecord r;
  r.converged = "0123456789abcdef0123456789abcdef01234567";
  r.in_flight = "89abcdef0123456789abcdef0123456789abcdef";
  r.config_fingerprint = "sha256:feed";
  r.version = "0.9.0";
  r.writer = "flytecd-5d9f-abcde";
  r.updated_at = 1764600000;
  return r;
}

}  // namespace

TEST_CASE("record store: one ConfigMap data key per field, round-tripped", "[k8s][record]") {
  const auto r = sample();
  auto data = flytecd::k8s::record_data(r);
  CHECK(data == std::map<std::string, std::string>{{"converged", r.converged},
                                                   {"inFlight", r.in_flight},
                                                   {"configFingerprint", "sha256:feed"},
                                                   {"version", "0.9.0"},
                                                   {"writer", "flytecd-5d9f-abcde"},
                                                   {"updatedAt", "1764600000"}});
  data["addedByANewerFlytecd"] = "ignored";
  auto back = flytecd::k8s::record_from_data(data, "ConfigMap ns/rec");
  REQUIRE(back);
  CHECK(back->converged == r.converged);
  CHECK(back->in_flight == r.in_flight);
  CHECK(back->config_fingerprint == r.config_fingerprint);
  CHECK(back->version == r.version);
  CHECK(back->writer == r.writer);
  CHECK(back->updated_at == r.updated_at);
}

TEST_CASE("record store: missing keys are empty, and a bad updatedAt names the ConfigMap",
          "[k8s][record]") {
  auto partial = flytecd::k8s::record_from_data({{"converged", "abc"}}, "ConfigMap ns/rec");
  REQUIRE(partial);
  CHECK(partial->converged == "abc");
  CHECK(partial->in_flight.empty());
  CHECK(partial->updated_at == 0);
  for (const char* bad : {"yesterday", "12x", "99999999999999999999999"}) {
    auto r = flytecd::k8s::record_from_data({{"updatedAt", bad}}, "ConfigMap ns/rec");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == flytecd::ErrorCode::invalid_input);
    CHECK_THAT(r.error().message, Catch::Contains("ConfigMap ns/rec: data.updatedAt"));
  }
}

TEST_CASE("record store: the object is labelled and carries resourceVersion only to replace",
          "[k8s][record]") {
  auto created = flytecd::k8s::record_config_map("rec", "ns", "", sample());
  CHECK(created["apiVersion"] == "v1");
  CHECK(created["kind"] == "ConfigMap");
  CHECK(created["metadata"]["name"] == "rec");
  CHECK(created["metadata"]["namespace"] == "ns");
  CHECK(created["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "flytecd");
  CHECK_FALSE(created["metadata"].contains("resourceVersion"));
  CHECK(created["data"]["updatedAt"] == "1764600000");
  auto replaced = flytecd::k8s::record_config_map("rec", "ns", "42", sample());
  CHECK(replaced["metadata"]["resourceVersion"] == "42");
  // Well under 1 KiB for two full commit ids.
  CHECK(replaced["data"].dump().size() < 1024);
}

TEST_CASE("kubernetes settings: appliedRecord and events keys, defaults and namespace",
          "[k8s][record][events]") {
  flytecd::k8s::Settings d;
  CHECK(d.applied_record.name == "flytecd-applied-revision");
  CHECK_FALSE(d.applied_record.enabled.has_value());
  CHECK(d.applied_record.on(true));  // on whenever flytecd talks to the API
  CHECK_FALSE(d.applied_record.on(false));
  CHECK(d.events.enabled);
  CHECK(d.events.interval_ms == 300000);

  flytecd::k8s::Settings s;
  REQUIRE(flytecd::k8s::parse_settings(
              YAML::Load("{appliedRecord: {enabled: true, name: rev}, events: {enabled: false, "
                         "interval: 30s}}"),
              "test", s)
              .ok());
  CHECK(s.applied_record.on(false));
  CHECK(s.applied_record.name == "rev");
  CHECK_FALSE(s.events.enabled);
  CHECK(s.events.interval_ms == 30000);
  s.api_server = "https://127.0.0.1:6443";
  s.api_namespace = "ops";
  auto r = flytecd::k8s::resolve_in_cluster(s);
  REQUIRE(r);
  CHECK(r->applied_record.record_namespace == "ops");

  flytecd::k8s::Settings bad;
  auto typo = flytecd::k8s::parse_settings(YAML::Load("{appliedRecord: {nmae: x}}"), "t", bad);
  REQUIRE_FALSE(typo.ok());
  CHECK_THAT(typo.error().message, Catch::Contains("kubernetes.appliedRecord.nmae"));
  auto empty = flytecd::k8s::parse_settings(YAML::Load("{appliedRecord: {name: ''}}"), "t", bad);
  CHECK_FALSE(empty.ok());
  auto interval = flytecd::k8s::parse_settings(YAML::Load("{events: {interval: soon}}"), "t", bad);
  REQUIRE_FALSE(interval.ok());
  CHECK_THAT(interval.error().message, Catch::Contains("kubernetes.events.interval"));
}

}  // namespace FLYTECD_UNITY_ID
