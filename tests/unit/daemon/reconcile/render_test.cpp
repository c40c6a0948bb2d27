#include "daemon/reconcile/render.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::reconcile;

// Issue 10.8: names with newlines and escape characters were printed raw (log-line forgery).
TEST_CASE("render: a step line escapes control characters in names and reasons", "[render]") {
  Step s;
  s.action = Action::create;
  s.kind = ObjectKind::override_attr;
  OverrideState o;
  o.scope.project = "p";
  o.scope.domain = "development";
  o.scope.workflow = "wf\nINFO applied 0 steps\x1b[2K";
  o.type = flyteidl::admin::TASK_RESOURCE;
  s.desired = flytecd::sinks::share(o);
  s.key = override_key(o.scope, o.type);
  s.reason = "new in Git\r";
  const std::string line = step_line(s);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find('\r') == std::string::npos);
  CHECK(line.find('\x1b') == std::string::npos);
  CHECK_THAT(line, Catch::Contains("wf\\nINFO applied 0 steps\\x1b[2K"));
}

}  // namespace FLYTECD_UNITY_ID
