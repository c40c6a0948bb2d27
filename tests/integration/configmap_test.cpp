// ConfigMap mode (Flyte RFC 3749) end to end: `flytecd run` renders the example repository's
// overrides into FlyteAdmin's overrides ConfigMap with server-side apply and restarts FlyteAdmin's
// Deployment through a pod-template annotation — against the local HTTPS stand-in of the
// Kubernetes API. Projects still go to FlyteAdmin over gRPC; override rows do not.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "daemon/model/loader.hpp"
#include "daemon/wiring/wiring.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sources/local/directory_reader.hpp"
#include "test_paths.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/integration/kube_standin.hpp"
#include "tests/support/daemon.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
namespace admin = flyteidl::admin;

namespace {

using flytecd_test::slurp;
using git_test::eventually;
using git_test::free_port;

}  // namespace

TEST_CASE("configmap mode: overrides are server-side applied and FlyteAdmin is restarted once",
          "[integration][k8s]") {
  fs::path dir = flytecd_test::fresh_dir("flytecd-configmap");
  flytecd::testing::KubeStandIn kube(dir);
  REQUIRE(kube.ok());
  kube.add_deployment("flyte", "flyteadmin");
  auto emu = flytecd::sinks::emulator::Emulator::start({});
  REQUIRE(emu.ok());
  const fs::path repo = fs::path(FLYTECD_SOURCE_DIR) / "repo-layout-example";
  const int port = free_port();
  {
    std::ofstream cfg(dir / "config.yaml");
    cfg << flytecd_test::daemon_config(dir, repo.string(), (*emu)->address(), port)
        << kube.config_section("cm-writer")
        << "  configMap: {enabled: true, namespace: flyte, name: flyte-admin-overrides,"
        << " key: overrides.yaml, restartDeployment: flyteadmin}\n";
  }
  pid_t pid = flytecd_test::spawn_and_sync(dir, port);
  INFO(slurp(dir / "daemon.log"));
  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(1);
  auto status = [&] { return flytecd_test::get_json(http); };
  INFO(status().dump(2));
  CHECK(status()["lastSync"]["outcome"] == "success");

  // Exactly what flytecd renders for the example repository, applied server-side.
  auto files = flytecd::sources::local::read_yaml_tree(repo, 4u << 20);
  REQUIRE(files);
  auto loaded = flytecd::model::load_documents(*files, {}, {});
  REQUIRE(loaded.ok());
  const std::string expected = flytecd::wiring::configmap_document(loaded.documents);
  auto cm = kube.configmap("flyte", "flyte-admin-overrides");
  REQUIRE(cm.is_object());
  CHECK(cm["data"]["overrides.yaml"] == expected);
  CHECK(cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "flytecd");
  auto applied = kube.applied();
  REQUIRE(applied.size() >= 2);
  CHECK(applied[0].method == "PATCH");
  CHECK(applied[0].path == "/api/v1/namespaces/flyte/configmaps/flyte-admin-overrides");
  CHECK(applied[0].content_type == "application/apply-patch+yaml");
  CHECK(applied[0].field_manager == "flytecd");
  CHECK(applied[0].force == "true");
  // The document holds the platform defaults and the project overrides of the example.
  YAML::Node doc = YAML::Load(expected);
  REQUIRE(doc.IsSequence());
  bool data_eng_prod = false;
  for (const auto& e : doc)
    if (e["project"] && e["project"].as<std::string>() == "data-eng" && e["domain"] &&
        e["domain"].as<std::string>() == "production" && !e["workflow"])
      data_eng_prod =
          e["overrides"]["executionClusterLabel"]["value"].as<std::string>() == "data-prod";
  CHECK(data_eng_prod);
  CHECK_FALSE(doc[0]["project"]);  // platform defaults come first

  // FlyteAdmin's Deployment got the content hash as a pod-template annotation.
  const std::string hash = cm["metadata"]["annotations"]["flytecd.io/overrides-sha256"];
  CHECK(hash.size() == 64);
  CHECK(kube.template_annotations("flyte", "flyteadmin")["flytecd.io/overrides-sha256"] == hash);
  CHECK(applied[1].path == "/apis/apps/v1/namespaces/flyte/deployments/flyteadmin");
  CHECK(applied[1].content_type == "application/strategic-merge-patch+json");

  // Overrides went to the ConfigMap, not FlyteAdmin's database; projects did go over gRPC.
  auto raw = flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel((*emu)->address(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext ctx;
    admin::ProjectDomainAttributesGetRequest req;
    req.set_project("data-eng");
    req.set_domain("production");
    req.set_resource_type(admin::EXECUTION_CLUSTER_LABEL);
    admin::ProjectDomainAttributesGetResponse resp;
    CHECK(raw->GetProjectDomainAttributes(&ctx, req, &resp).error_code() ==
          grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    admin::ProjectListRequest req;
    req.set_limit(100);
    admin::Projects resp;
    REQUIRE(raw->ListProjects(&ctx, req, &resp).ok());
    CHECK(resp.projects_size() > 0);
  }

  // A second reconcile of the same revision writes nothing new (the ConfigMap is unchanged) and
  // the restart annotation keeps its value, so FlyteAdmin is not restarted again.
  auto sync = http.Post("/api/v1/sync", {{"Authorization", "Bearer sync-secret"}}, "", "");
  REQUIRE(sync);
  CHECK(sync->status == 202);
  REQUIRE(eventually([&] { return status()["lastSync"]["reason"] == "api sync"; }, 20));
  size_t cm_applies = 0;
  for (const auto& a : kube.applied())
    cm_applies += a.path.find("/configmaps/") != std::string::npos;
  CHECK(cm_applies == 1);
  CHECK(kube.template_annotations("flyte", "flyteadmin")["flytecd.io/overrides-sha256"] == hash);

  int wstatus = 0;
  REQUIRE(flytecd_test::terminate(pid, wstatus, 15));
  CHECK(WEXITSTATUS(wstatus) == 0);
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
