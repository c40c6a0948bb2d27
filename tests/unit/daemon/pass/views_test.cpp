// Pure views of a pass report (daemon/pass/views): the summary line counts registrations.
#include "daemon/pass/views.hpp"

#include <catch2/catch.hpp>

using namespace flytecd;

TEST_CASE("views: a version bump is a registration change in the summary line", "[views]") {
  pass::Report r;
  registration::RegistrationOutcome bump;
  bump.key = "registration/p/d/core";
  bump.state = "registered";
  bump.version = "v2";
  bump.previous_version = "v1";
  registration::RegistrationOutcome added = bump;
  added.key = "registration/p/d/new";
  added.previous_version.clear();
  r.registrations.items = {bump, added};
  const auto s = pass::summary(r);
  CHECK(s.find("overrides: +0 ~0 -0") != std::string::npos);
  CHECK(s.find("registrations: +1 ~1 -0") != std::string::npos);
  r.registrations.items = {bump};
  r.registrations.items[0].state = "register";  // plan: would register
  CHECK(pass::summary(r).find("registrations: +0 ~1 -0") != std::string::npos);
}
