#include <catch2/catch.hpp>

#include <string>

#include "daemon/common/scan.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

// The inputs that overflowed std::regex's recursive matcher must be answered, in linear time.
TEST_CASE("scan: matchers answer on inputs of hundreds of kilobytes", "[scan]") {
  const std::string long_ok(300'000, 'a');
  CHECK(scan::is_url_safe(long_ok));
  CHECK(scan::dns1123_label_pattern(long_ok));
  CHECK_FALSE(scan::is_dns1123_label(long_ok));
  CHECK(scan::is_oci_repository_pattern(long_ok));
  CHECK(scan::is_host_port(long_ok));
  CHECK(scan::is_loose_host_port(long_ok));
  CHECK_FALSE(scan::is_k8s_name_part(long_ok));
  const std::string digits(300'000, '7');
  CHECK(scan::is_integer_text(digits));
  CHECK(scan::is_float_text(digits + ".5e3"));
  CHECK(scan::looks_numeric(digits));
  CHECK(scan::is_proto_duration(digits + "s"));
  CHECK(scan::is_base64_text(long_ok + "=="));
}

TEST_CASE("scan: RFC 1123 labels and subdomains", "[scan]") {
  CHECK(scan::is_dns1123_label("a"));
  CHECK(scan::is_dns1123_label("my-project-1"));
  CHECK_FALSE(scan::is_dns1123_label(""));
  CHECK_FALSE(scan::is_dns1123_label("-a"));
  CHECK_FALSE(scan::is_dns1123_label("a-"));
  CHECK_FALSE(scan::is_dns1123_label("A"));
  CHECK_FALSE(scan::is_dns1123_label("a_b"));
  CHECK(scan::is_dns1123_label(std::string(63, 'a')));
  CHECK_FALSE(scan::is_dns1123_label(std::string(64, 'a')));
  CHECK(scan::is_dns1123_subdomain("example.com"));
  CHECK_FALSE(scan::is_dns1123_subdomain("example..com"));
  CHECK_FALSE(scan::is_dns1123_subdomain(".example"));
  CHECK_FALSE(scan::is_dns1123_subdomain(std::string(254, 'a')));
}

TEST_CASE("scan: Kubernetes label keys and values as FlyteAdmin validates them", "[scan]") {
  CHECK(scan::is_k8s_qualified_name("team"));
  CHECK(scan::is_k8s_qualified_name("example.com/team_name.x"));
  CHECK(scan::is_k8s_qualified_name("A"));
  CHECK_FALSE(scan::is_k8s_qualified_name("a b/c"));
  CHECK_FALSE(scan::is_k8s_qualified_name("/c"));
  CHECK_FALSE(scan::is_k8s_qualified_name("a/"));
  CHECK_FALSE(scan::is_k8s_qualified_name("a/b/c"));
  CHECK_FALSE(scan::is_k8s_qualified_name("_a"));
  CHECK(scan::is_k8s_label_value(""));
  CHECK(scan::is_k8s_label_value("ml-team.v1"));
  CHECK_FALSE(scan::is_k8s_label_value("ml team"));
  CHECK_FALSE(scan::is_k8s_label_value(std::string(60'000, 'x')));
}

TEST_CASE("scan: OCI names, tags, digests and hosts", "[scan]") {
  CHECK(scan::is_oci_repository_pattern("flyte/core-examples"));
  CHECK(scan::is_oci_repository_pattern("a__b/c.d/e---f"));
  CHECK_FALSE(scan::is_oci_repository_pattern("a___b"));
  CHECK_FALSE(scan::is_oci_repository_pattern("a._b"));
  CHECK_FALSE(scan::is_oci_repository_pattern("Flyte/core"));
  CHECK_FALSE(scan::is_oci_repository_pattern("flyte//core"));
  CHECK_FALSE(scan::is_oci_repository_pattern("/flyte"));
  CHECK_FALSE(scan::is_oci_repository_pattern(""));
  CHECK(scan::is_oci_tag("v1.2.3_rc-1"));
  CHECK(scan::is_oci_tag("_x"));
  CHECK_FALSE(scan::is_oci_tag(".x"));
  CHECK_FALSE(scan::is_oci_tag(std::string(129, 'a')));
  CHECK(scan::is_sha256_digest("sha256:" + std::string(64, 'a')));
  CHECK_FALSE(scan::is_sha256_digest("sha256:" + std::string(64, 'A')));
  CHECK_FALSE(scan::is_sha256_digest("sha256:" + std::string(63, 'a')));
  CHECK(scan::is_host_port("registry.example.com"));
  CHECK(scan::is_host_port("localhost:5000"));
  CHECK(scan::is_host_port("[::1]:5000"));
  CHECK(scan::is_host_port("[fe80::1]"));
  CHECK_FALSE(scan::is_host_port("-bad.example"));
  CHECK_FALSE(scan::is_host_port("host:"));
  CHECK_FALSE(scan::is_host_port("host:123456"));
  CHECK_FALSE(scan::is_host_port("ho st"));
  CHECK_FALSE(scan::is_host_port("[]"));
}

TEST_CASE("scan: numbers, durations and base64 in protobuf's JSON forms", "[scan]") {
  CHECK(scan::is_integer_text("-12"));
  CHECK(scan::is_integer_text("+7"));
  CHECK_FALSE(scan::is_integer_text("-"));
  CHECK_FALSE(scan::is_integer_text("1.0"));
  CHECK(scan::is_float_text(".5"));
  CHECK(scan::is_float_text("5."));
  CHECK(scan::is_float_text("-1.5E+10"));
  CHECK_FALSE(scan::is_float_text("."));
  CHECK_FALSE(scan::is_float_text("1e"));
  CHECK_FALSE(scan::is_float_text("1.5x"));
  CHECK(scan::looks_numeric("1.2.3"));
  CHECK(scan::looks_numeric("1e5"));
  CHECK_FALSE(scan::looks_numeric("1Gi"));
  CHECK_FALSE(scan::looks_numeric(""));
  CHECK(scan::is_proto_duration("30s"));
  CHECK(scan::is_proto_duration("-1.5s"));
  CHECK(scan::is_proto_duration("1.123456789s"));
  CHECK_FALSE(scan::is_proto_duration("1.1234567890s"));
  CHECK_FALSE(scan::is_proto_duration("1.s"));
  CHECK_FALSE(scan::is_proto_duration("30"));
  CHECK_FALSE(scan::is_proto_duration("30m"));
  CHECK(scan::is_base64_text("aGVsbG8="));
  CHECK(scan::is_base64_text("a-_b=="));
  CHECK(scan::is_base64_text(""));
  CHECK_FALSE(scan::is_base64_text("a==="));
  CHECK_FALSE(scan::is_base64_text("a=b"));
}

TEST_CASE("scan: printable escapes control characters and bounds the length", "[scan]") {
  CHECK(scan::printable("ok") == "ok");
  CHECK(scan::printable("a\nINFO forged line\r\x1b[31m") == "a\\nINFO forged line\\r\\x1b[31m");
  const std::string big(60'000, 'x');
  std::string out = scan::printable(big);
  CHECK(out.size() < 260);
  CHECK(out.find("(60000 bytes)") != std::string::npos);
  // A multi-byte character is never cut in half.
  std::string utf8 = std::string(199, 'a') + "é" + "tail";
  std::string cut = scan::printable(utf8);
  CHECK(cut.rfind(std::string(199, 'a') + "…", 0) == 0);
}

}  // namespace FLYTECD_UNITY_ID
