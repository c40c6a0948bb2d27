#include <catch2/catch.hpp>

#include "daemon/common/breaker.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {
Error down(const std::string& m = "flyteadmin: UpdateProjectAttributes: UNAVAILABLE: refused") {
  return Error{ErrorCode::unavailable, m};
}
}  // namespace

TEST_CASE("breaker: opens after the threshold of consecutive unreachable failures", "[breaker]") {
  CircuitBreaker b(3);
  b.record(down());
  b.record(Error{ErrorCode::timeout, "deadline"});
  CHECK_FALSE(b.open());
  CHECK_FALSE(b.error().has_value());
  b.record(down("last one"));
  REQUIRE(b.open());
  auto e = b.error();
  REQUIRE(e.has_value());
  CHECK(e->code == ErrorCode::unavailable);
  CHECK(e->message.find("3 consecutive") != std::string::npos);
  CHECK(e->message.find("last one") != std::string::npos);
  // Open for the rest of the pass: a later success does not close it.
  b.record_success();
  CHECK(b.open());
}

TEST_CASE("breaker: any answer from the target resets the count", "[breaker]") {
  CircuitBreaker b(3);
  for (int i = 0; i < 10; ++i) {
    b.record(down());
    b.record(down());
    if (i % 2)
      b.record_success();
    else
      b.record(Error{ErrorCode::invalid_input, "the target answered"});
  }
  CHECK_FALSE(b.open());
  b.record(Status(ok_status()));
  b.record(Status(down()));
  b.record(Status(down()));
  b.record(Status(down()));
  CHECK(b.open());
}

TEST_CASE("breaker: trip opens at once, but only for an unreachable target, 0 disables",
          "[breaker]") {
  CircuitBreaker b;
  b.trip(Error{ErrorCode::unauthenticated, "oauth: token endpoint returned HTTP 401"});
  CHECK_FALSE(b.open());
  b.trip(down("ListProjects: UNAVAILABLE"));
  REQUIRE(b.open());
  CHECK(b.error()->message == "target unreachable: ListProjects: UNAVAILABLE");

  CircuitBreaker off(0);
  for (int i = 0; i < 100; ++i) off.record(down());
  CHECK_FALSE(off.open());
}

}  // namespace FLYTECD_UNITY_ID
