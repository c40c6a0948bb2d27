#include <catch2/catch.hpp>

#include "daemon/common/quantity.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::quantity::parse_quantity;

TEST_CASE("quantity: Kubernetes suffixes parse to base units", "[quantity]") {
  CHECK(parse_quantity("1")->value == Approx(1));
  CHECK(parse_quantity("500m")->value == Approx(0.5));
  CHECK(parse_quantity("1.5")->value == Approx(1.5));
  CHECK(parse_quantity("2Gi")->value == Approx(2.0 * 1024 * 1024 * 1024));
  CHECK(parse_quantity("512Mi")->value == Approx(512.0 * 1024 * 1024));
  CHECK(parse_quantity("1k")->value == Approx(1000));
  CHECK(parse_quantity("1e3")->value == Approx(1000));
  CHECK(parse_quantity("1E-2")->value == Approx(0.01));
  CHECK(parse_quantity("128974848")->value == Approx(128974848));
  CHECK(parse_quantity(".5")->value == Approx(0.5));
  CHECK(parse_quantity("+3")->value == Approx(3));
}

TEST_CASE("quantity: malformed quantities are rejected", "[quantity]") {
  for (const char* bad :
       {"", "2x", "Gi", "1.5.5Gi", "1 Gi", "1gi", "--1", "1e", "abc", "1Kii", "."})
    CHECK_FALSE(parse_quantity(bad).has_value());
}

TEST_CASE("quantity: comparisons across suffixes", "[quantity]") {
  CHECK(parse_quantity("1500m")->value < parse_quantity("2")->value);
  CHECK(parse_quantity("1Gi")->value > parse_quantity("1G")->value);
  CHECK(parse_quantity("1024Mi")->value == Approx(parse_quantity("1Gi")->value));
}

// Issue 10.8: a 10^31+1 default over a 10^31 limit passed (long double lost the last digit).
TEST_CASE("quantity: comparison is exact", "[quantity]") {
  auto q = [](const char* s) {
    auto v = flytecd::quantity::parse_quantity(s);
    REQUIRE(v);
    return *v;
  };
  using flytecd::quantity::compare;
  CHECK(compare(q("10000000000000000000000000000001"), q("10000000000000000000000000000000")) > 0);
  CHECK(compare(q("1e31"), q("10000000000000000000000000000000")) == 0);
  CHECK(compare(q("1Ki"), q("1024")) == 0);
  CHECK(compare(q("1Gi"), q("1073741824")) == 0);
  CHECK(compare(q("1Gi"), q("1G")) > 0);
  CHECK(compare(q("500m"), q("0.5")) == 0);
  CHECK(compare(q("0.1"), q("100m")) == 0);
  CHECK(compare(q("1n"), q("0")) > 0);
  CHECK(compare(q("-1"), q("0")) < 0);
  CHECK(compare(q("-2"), q("-1")) < 0);
  CHECK(compare(q("0"), q("-0")) == 0);
  CHECK(compare(q("1.5Ei"), q("1536Pi")) == 0);
  CHECK(compare(q("007"), q("7")) == 0);
  CHECK_FALSE(flytecd::quantity::parse_quantity(std::string(101, '9')));
}

// k8s.io/apimachinery resource.Quantity Value() and String(), as FlyteAdmin's task_validator.go
// compares and prints them.
TEST_CASE("quantity: Value() rounds up to an integer, String() is the canonical form",
          "[quantity]") {
  using flytecd::quantity::canonical;
  using flytecd::quantity::value_ceil;
  auto v = [](const char* s) { return value_ceil(*parse_quantity(s)); };
  auto c = [](const char* s) { return canonical(*parse_quantity(s)); };
  CHECK(v("500m") == 1);
  CHECK(v("200m") == 1);
  CHECK(v("1.5") == 2);
  CHECK(v("2") == 2);
  CHECK(v("1.000") == 1);
  CHECK(v("1Ki") == 1024);
  CHECK(v("1.5Ki") == 1536);
  CHECK(v("0") == 0);
  CHECK(v("-1.5") == -2);
  CHECK(v("1e30") == INT64_MAX);

  CHECK(c("1.5") == "1500m");
  CHECK(c("500m") == "500m");
  CHECK(c("0.05") == "50m");
  CHECK(c("2000m") == "2");
  CHECK(c("1000") == "1k");
  CHECK(c("1500") == "1500");
  CHECK(c("1024Mi") == "1Gi");
  CHECK(c("2048Mi") == "2Gi");
  CHECK(c("1.5Ki") == "1536");
  CHECK(c("0.5Ki") == "512");
  CHECK(c("1536Mi") == "1536Mi");
  CHECK(c("1Gi") == "1Gi");
  CHECK(c("1e3") == "1e3");
  CHECK(c("0") == "0");
  CHECK(c("0.1n") == "1n");
  CHECK(c("-2Gi") == "-2Gi");
  CHECK(c("1G") == "1G");
}

}  // namespace FLYTECD_UNITY_ID
