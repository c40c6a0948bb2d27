// The routing sink composes sinks by capability (FlyteAdmin for projects and registrations, the
// ConfigMap for overrides): tested with in-memory sinks.
#include "sinks/routing_sink.hpp"

#include <catch2/catch.hpp>

#include "tests/unit/sinks/memory_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace admin = flyteidl::admin;
using flytecd::ErrorCode;
using flytecd::sinks::Action;
using flytecd::sinks::Capabilities;
using flytecd::sinks::ObjectKind;
using flytecd::sinks::OverrideState;
using flytecd::sinks::ProjectState;
using flytecd::sinks::RoutingSink;
using flytecd::sinks::State;
using flytecd::sinks::Step;
using flytecd::testing::MemorySink;

namespace {

OverrideState row(const std::string& project, const std::string& domain, const std::string& v) {
  OverrideState o;
  o.scope = {project, domain, ""};
  o.type = admin::EXECUTION_CLUSTER_LABEL;
  o.value.mutable_execution_cluster_label()->set_value(v);
  return o;
}
std::string key_of(const OverrideState& o) { return flytecd::sinks::override_key(o.scope, o.type); }
Step write(const OverrideState& o) {
  Step s;
  s.kind = ObjectKind::override_attr;
  s.key = key_of(o);
  s.desired = flytecd::sinks::share(o);
  return s;
}
Step project_step(const std::string& id) {
  Step s;
  s.kind = ObjectKind::project;
  s.key = flytecd::sinks::project_key(id);
  s.project = flytecd::sinks::share(ProjectState{id, id, "", {}, false});
  return s;
}

const Capabilities k_admin_parts{.projects = true, .registrations = true};
const Capabilities k_cm_parts{.overrides = true, .platform_defaults = true};

}  // namespace

TEST_CASE("routing sink: observe merges each route's parts only", "[sinks][routing]") {
  State admin_state;
  admin_state.projects["p"] = ProjectState{"p", "p", "", {}, false};
  const auto admin_row = row("p", "development", "in-flyteadmin-db");
  admin_state.overrides[key_of(admin_row)] = admin_row;  // not seen: the ConfigMap holds overrides
  State cm_state;
  const auto cm_row = row("p", "development", "in-configmap");
  const auto global = row("", "", "global");
  cm_state.overrides[key_of(cm_row)] = cm_row;
  cm_state.overrides[key_of(global)] = global;
  MemorySink flyteadmin({.projects = true, .overrides = true, .registrations = true}, admin_state,
                        "flyteadmin");
  MemorySink cm(k_cm_parts, cm_state, "configmap");
  auto routed = RoutingSink::create({{&flyteadmin, k_admin_parts}, {&cm, k_cm_parts}});
  REQUIRE(routed);
  CHECK((*routed)->capabilities() == (k_admin_parts | k_cm_parts));
  CHECK((*routed)->describe() ==
        "flyteadmin (projects, registrations) + configmap (overrides, platform defaults)");

  auto live = (*routed)->observe();
  REQUIRE(live);
  CHECK(live->projects.count("p") == 1);
  REQUIRE(live->overrides.size() == 2);
  CHECK(live->overrides.at(key_of(cm_row)).value.execution_cluster_label().value() ==
        "in-configmap");
  CHECK(live->overrides.count(key_of(global)) == 1);
}

TEST_CASE("routing sink: execute routes by step kind and scope, commit commits every sink",
          "[sinks][routing]") {
  MemorySink flyteadmin({.projects = true, .overrides = true, .registrations = true}, {},
                        "flyteadmin");
  MemorySink cm(k_cm_parts, {}, "configmap");
  auto routed = RoutingSink::create({{&flyteadmin, k_admin_parts}, {&cm, k_cm_parts}});
  REQUIRE(routed);
  REQUIRE((*routed)->execute(project_step("p")));
  REQUIRE((*routed)->execute(write(row("p", "development", "x"))));
  REQUIRE((*routed)->execute(write(row("", "production", "prod"))));
  CHECK(flyteadmin.executed().size() == 1);
  CHECK(flyteadmin.state().projects.count("p") == 1);
  CHECK(flyteadmin.state().overrides.empty());
  CHECK(cm.executed().size() == 2);
  CHECK(cm.state().overrides.size() == 2);

  REQUIRE((*routed)->commit("rev-7"));
  CHECK(flyteadmin.commits() == std::vector<std::string>{"rev-7"});
  CHECK(cm.commits() == std::vector<std::string>{"rev-7"});
}

TEST_CASE("routing sink: commit tries every sink and returns the first failure",
          "[sinks][routing]") {
  MemorySink a({.projects = true}, {}, "a");
  MemorySink b({.overrides = true}, {}, "b");
  a.fail_commit(flytecd::Error{ErrorCode::unavailable, "a: down"});
  auto routed = RoutingSink::create({{&a, {.projects = true}}, {&b, {.overrides = true}}});
  REQUIRE(routed);
  auto st = (*routed)->commit("r");
  REQUIRE_FALSE(st);
  CHECK(st.error().message == "a: down");
  CHECK(b.commits().size() == 1);
}

TEST_CASE("routing sink: a failing observation or step keeps its error", "[sinks][routing]") {
  MemorySink a({.projects = true}, {}, "a");
  MemorySink b({.overrides = true}, {}, "b");
  auto routed = RoutingSink::create({{&a, {.projects = true}}, {&b, {.overrides = true}}});
  REQUIRE(routed);
  b.fail_observe(flytecd::Error{ErrorCode::permission_denied, "b: forbidden"});
  auto live = (*routed)->observe();
  REQUIRE_FALSE(live);
  CHECK(live.error().code == ErrorCode::permission_denied);

  const auto o = row("p", "d", "v");
  b.fail_key(key_of(o), flytecd::Error{ErrorCode::conflict, "b: conflict"}, 1);
  auto st = (*routed)->execute(write(o));
  REQUIRE_FALSE(st);
  CHECK(st.error().code == ErrorCode::conflict);
  CHECK((*routed)->execute(write(o)));  // the injected failure was for one call
  CHECK(b.rpcs() == 2);
}

TEST_CASE("routing sink: a step no route holds is an internal error", "[sinks][routing]") {
  MemorySink a({.projects = true, .overrides = true}, {}, "a");
  auto routed = RoutingSink::create({{&a, {.projects = true}}});
  REQUIRE(routed);
  auto st = (*routed)->execute(write(row("p", "d", "v")));
  REQUIRE_FALSE(st);
  CHECK(st.error().code == ErrorCode::internal);
  CHECK(a.executed().empty());
  CHECK((*routed)->entities() == nullptr);  // no route for registrations
}

TEST_CASE("routing sink: routes must be disjoint and held by their sink", "[sinks][routing]") {
  MemorySink a({.projects = true, .overrides = true}, {}, "a");
  MemorySink b({.overrides = true}, {}, "b");
  auto twice = RoutingSink::create({{&a, {.overrides = true}}, {&b, {.overrides = true}}});
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message.find("overrides routed twice") != std::string::npos);
  auto not_held = RoutingSink::create({{&b, {.projects = true}}});
  REQUIRE_FALSE(not_held);
  CHECK(not_held.error().message.find("b holds overrides, not projects") != std::string::npos);
  CHECK_FALSE(RoutingSink::create({}));
  CHECK_FALSE(RoutingSink::create({{&a, {}}}));
  CHECK_FALSE(RoutingSink::create({{nullptr, {.projects = true}}}));
}

TEST_CASE("routing sink: owns the sinks it is given", "[sinks][routing]") {
  auto owned = std::make_unique<MemorySink>(Capabilities{.overrides = true}, State{}, "owned");
  MemorySink* raw = owned.get();
  std::vector<std::unique_ptr<flytecd::sinks::Sink>> keep;
  keep.push_back(std::move(owned));
  auto routed = RoutingSink::create({{raw, {.overrides = true}}}, std::move(keep));
  REQUIRE(routed);
  REQUIRE((*routed)->execute(write(row("p", "d", "v"))));
  CHECK(raw->state().overrides.size() == 1);
}

TEST_CASE("memory sink: archives projects, counts RPCs, models FlyteAdmin's cascading delete",
          "[sinks][memory]") {
  MemorySink sink;
  sink.cascading_deletes = true;
  REQUIRE(sink.execute(project_step("p")));
  Step archive = project_step("p");
  archive.action = Action::remove;
  REQUIRE(sink.execute(archive));
  CHECK(sink.state().projects.at("p").archived);
  const auto broad = row("p", "", "broad");
  const auto narrow = row("p", "d", "narrow");
  REQUIRE(sink.execute(write(broad)));
  REQUIRE(sink.execute(write(narrow)));
  Step remove;
  remove.action = Action::remove;
  remove.kind = ObjectKind::override_attr;
  remove.key = key_of(broad);
  remove.live = flytecd::sinks::share(broad);
  REQUIRE(sink.execute(remove));
  CHECK(sink.state().overrides.empty());  // the narrower row went with it
  Step adopt = write(narrow);
  adopt.action = Action::adopt;
  REQUIRE(sink.execute(adopt));
  CHECK(sink.rpcs() == 5);  // adopt issues none
}

}  // namespace FLYTECD_UNITY_ID
