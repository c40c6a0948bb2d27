// The one list of built-in backends: which source, package source and sink a configuration gets.
#include "daemon/wiring/wiring.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "daemon/wiring/wiring.hpp"
#include "sinks/emulator/emulator.hpp"
#include "tests/unit/sinks/memory_sink.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace admin = flyteidl::admin;
namespace fs = std::filesystem;
using flytecd::ErrorCode;
using flytecd::config::Config;
using flytecd::sinks::Capabilities;
namespace wiring = flytecd::wiring;

namespace {

std::string selected_source(const Config& cfg) {
  for (const auto& b : wiring::source_backends())
    if (b.selects(cfg)) return std::string(b.kind);
  return "";
}

flytecd::model::Documents documents() {
  flytecd::model::Documents d;
  flytecd::model::ProjectDoc p;
  p.id = "flytesnacks";
  p.name = "flytesnacks";
  d.projects.push_back(p);
  flytecd::model::Override o;
  o.scope = {"flytesnacks", "development", ""};
  o.type = admin::EXECUTION_CLUSTER_LABEL;
  o.value.edit([&](auto& v) { v.mutable_execution_cluster_label()->set_value("east"); });
  d.overrides.push_back(o);
  flytecd::model::PlatformDefault g;
  g.type = admin::TASK_RESOURCE;
  g.value.edit(
      [&](auto& v) { v.mutable_task_resource_attributes()->mutable_defaults()->set_cpu("1"); });
  d.platform_defaults.push_back(g);
  flytecd::model::PlatformDefault dom;
  dom.domain = "production";
  dom.type = admin::EXECUTION_CLUSTER_LABEL;
  dom.value.edit([&](auto& v) { v.mutable_execution_cluster_label()->set_value("prod"); });
  d.platform_defaults.push_back(dom);
  return d;
}

}  // namespace

TEST_CASE("wiring: sources are chosen by URL, first matching row wins", "[wiring]") {
  Config cfg;
  CHECK(selected_source(cfg) == "directory");
  for (const char* url : {"https://example.com/r.git", "ssh://git@example.com/r.git",
                          "git@example.com:r.git", "file:///srv/r.git", "/srv/r.git"}) {
    cfg.git.url = url;
    CHECK(selected_source(cfg) == "git");
  }
  cfg.git.url = "oci://registry.example.com/flyte/config:v1";
  CHECK(selected_source(cfg) == "oci");
  auto oci = wiring::make_source(cfg);
  REQUIRE_FALSE(oci);
  CHECK(oci.error().code == ErrorCode::invalid_input);
  CHECK(oci.error().message.find("not built in") != std::string::npos);
}

TEST_CASE("wiring: a directory source reads the repo directory", "[wiring]") {
  fs::path dir = fs::temp_directory_path() / ("flytecd-wiring-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "p.yaml") << "apiVersion: flytecd/v1\nkind: Project\nid: p\nname: p\n";
  Config cfg;
  cfg.repo = dir.string();
  auto source = wiring::make_source(cfg);
  REQUIRE(source);
  auto snap = (*source)->sync();
  REQUIRE(snap);
  CHECK(snap->files.size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("wiring: package references by scheme, one built-in package source", "[wiring]") {
  std::vector<std::string> schemes;
  for (const auto& b : wiring::package_backends()) schemes.emplace_back(b.scheme);
  CHECK(schemes == std::vector<std::string>{"oci://", "https://", ""});
  Config cfg;
  cfg.state_dir = (fs::temp_directory_path() / "flytecd-wiring-packages").string();
  auto packages = wiring::make_package_source(
      cfg,
      [](const std::string& path) -> flytecd::Result<std::string> { return "bytes of " + path; });
  REQUIRE(packages != nullptr);
  // A repository path goes to the path row's source (the revision's reader).
  flytecd::model::Registration r;
  r.name = "core";
  r.package = "packages/core.tgz";
  auto loaded = packages->load(r);
  REQUIRE(loaded);
  CHECK(loaded->bytes == "bytes of packages/core.tgz");
  CHECK(loaded->digest.rfind("sha256:", 0) == 0);
  // A registry-relative FlyteRegistration with no registry configured names the setting.
  r.registry_relative = true;
  auto no_registry = packages->load(r);
  REQUIRE_FALSE(no_registry);
  CHECK(no_registry.error().message.find("packages.registry") != std::string::npos);
}

TEST_CASE("package source: a kind without a source is an error naming it", "[wiring]") {
  flytecd::registration::DefaultPackageResolver only_oci({}, "");
  flytecd::model::Registration r;
  r.package = "packages/core.tgz";
  auto loaded = only_oci.load(r);
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().code == ErrorCode::invalid_input);
  CHECK(loaded.error().message.find("repository path") != std::string::npos);
}

TEST_CASE("wiring: sinks by target kind", "[wiring]") {
  Config cfg;
  CHECK(wiring::admin_target_kind(cfg) == wiring::TargetKind::emulator);
  cfg.admin.endpoint = "127.0.0.1:1";
  cfg.admin.insecure = true;
  CHECK(wiring::admin_target_kind(cfg) == wiring::TargetKind::flyteadmin);
  CHECK_FALSE(wiring::configmap_mode(cfg));
  cfg.kubernetes.config_map.enabled = true;
  CHECK(wiring::configmap_mode(cfg));

  std::vector<wiring::TargetKind> kinds;
  for (const auto& b : wiring::sink_backends()) kinds.push_back(b.kind);
  CHECK(kinds == std::vector<wiring::TargetKind>{
                     wiring::TargetKind::flyteadmin, wiring::TargetKind::emulator,
                     wiring::TargetKind::flyte2, wiring::TargetKind::flyte2_emulator,
                     wiring::TargetKind::configmap});
  // The rows that select a configuration: FlyteAdmin and, in ConfigMap mode, the ConfigMap.
  std::vector<wiring::TargetKind> selected;
  for (const auto* b : wiring::selected_sinks(cfg)) selected.push_back(b->kind);
  CHECK(selected == std::vector<wiring::TargetKind>{wiring::TargetKind::flyteadmin,
                                                    wiring::TargetKind::configmap});
  cfg.kubernetes.config_map.enabled = false;
  CHECK(wiring::selected_sinks(cfg).size() == 1);

  // Connecting sends no RPC, so an endpoint nobody listens on still gives a sink.
  auto flyteadmin = wiring::make_sink(wiring::TargetKind::flyteadmin, cfg);
  REQUIRE(flyteadmin);
  CHECK(flyteadmin->kind == wiring::TargetKind::flyteadmin);
  CHECK(flyteadmin->sink->capabilities() ==
        Capabilities{.projects = true, .overrides = true, .registrations = true});
  CHECK(flyteadmin->sink->entities() != nullptr);
  CHECK(flyteadmin->description == "flyteadmin 127.0.0.1:1");
  CHECK(flyteadmin->sink->describe() == flyteadmin->description);
  CHECK(flyteadmin->keep == nullptr);
}

TEST_CASE("wiring: the emulator row starts the emulator its sink observes", "[wiring]") {
  const auto dir = std::filesystem::temp_directory_path() / "flytecd-wiring-emulator-row";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Config cfg;
  cfg.state_dir = dir.string();
  {
    auto opened = wiring::make_sink(wiring::TargetKind::emulator, cfg);
    REQUIRE(opened);
    CHECK(opened->keep != nullptr);  // the emulator, kept running as long as the sink
    CHECK(opened->description.find("EMULATOR") != std::string::npos);
    auto live = opened->sink->observe();
    REQUIRE(live);
    CHECK(live->overrides.empty());
  }
  CHECK(std::filesystem::exists(dir / "emulator.db"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("wiring: each part goes to the last sink that holds it", "[wiring]") {
  flytecd::testing::MemorySink flyteadmin(
      {.projects = true, .overrides = true, .registrations = true}, {}, "flyteadmin");
  flytecd::testing::MemorySink cm({.overrides = true, .platform_defaults = true}, {}, "configmap");
  auto routed = wiring::route_by_capabilities({&flyteadmin, &cm});
  REQUIRE(routed);
  CHECK((*routed)->capabilities() ==
        Capabilities{
            .projects = true, .overrides = true, .platform_defaults = true, .registrations = true});
  CHECK((*routed)->describe() ==
        "flyteadmin (projects, registrations) + configmap (overrides, platform defaults)");
  // A sink every part of which a later one takes is refused, naming it.
  flytecd::testing::MemorySink projects_only({.projects = true}, {}, "p");
  auto shadowed = wiring::route_by_capabilities({&projects_only, &flyteadmin});
  REQUIRE_FALSE(shadowed);
  CHECK(shadowed.error().message.find("p gets nothing to hold") != std::string::npos);
}

TEST_CASE("wiring: desired state follows what the sink holds", "[wiring]") {
  const auto docs = documents();
  auto for_admin =
      wiring::desired_state(docs, {.projects = true, .overrides = true, .registrations = true});
  CHECK(for_admin.projects.size() == 1);
  CHECK(for_admin.overrides.size() == 1);  // platform defaults live in FlyteAdmin's config
  auto for_cm = wiring::desired_state(docs, {.overrides = true, .platform_defaults = true});
  CHECK(for_cm.projects.empty());
  CHECK(for_cm.overrides.size() == 3);
  CHECK(for_cm.overrides.count("override//production//EXECUTION_CLUSTER_LABEL") == 1);
  CHECK(for_cm.overrides.count("override////TASK_RESOURCE") == 1);
  // The ConfigMap document of a revision is the document of those rows.
  CHECK(flytecd::wiring::configmap_document(docs) ==
        flytecd::sinks::configmap::render_document(for_cm));
}

TEST_CASE("wiring: the ConfigMap sink comes from the resolved kubernetes settings", "[wiring]") {
  fs::path dir = fs::temp_directory_path() / ("flytecd-wiring-kube-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "ca.crt") << "not checked until a request\n";
  Config cfg;
  cfg.kubernetes.config_map.enabled = true;
  cfg.kubernetes.api_namespace = "flyte";  // configMap.namespace defaults to it
  cfg.kubernetes.ca_file = (dir / "ca.crt").string();
  cfg.kubernetes.api_server = "http://127.0.0.1:1";
  auto plain = wiring::open_kube_client(cfg);
  REQUIRE_FALSE(plain);
  CHECK(plain.error().message.find("https://") != std::string::npos);
  cfg.kubernetes.api_server = "https://127.0.0.1:1";
  auto kube = wiring::open_kube_client(cfg);
  REQUIRE(kube);
  auto cm = wiring::make_configmap_sink(*kube);
  CHECK(cm->describe() == "configmap flyte/flyte-admin-overrides (overrides.yaml)");
  auto from_table = wiring::make_sink(wiring::TargetKind::configmap, cfg);
  REQUIRE(from_table);
  CHECK(from_table->sink->capabilities() ==
        Capabilities{.overrides = true, .platform_defaults = true});
  CHECK(from_table->sink->entities() == nullptr);
  CHECK(from_table->description == cm->describe());
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
