// The FlyteAdmin emulator over real gRPC and HTTP: fault injection, DataProxy uploads, standalone
// mode, and task resource validation.

#include <catch2/catch.hpp>

#include "tests/unit/sinks/emulator/emulator_test_support.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace emulator_test;
using flytecd::sinks::emulator::FaultRule;
using flytecd::sinks::emulator::parse_fault;
using flytecd::sinks::emulator::run_standalone;

// ---------------------------------------------------------------------------------------------
// Fault injection

TEST_CASE("emulator: a fault with rate 1 fails every matching call with its code", "[emulator]") {
  Options o;
  auto rule = parse_fault("UpdateProjectAttributes:rate=1,code=UNAVAILABLE");
  REQUIRE(rule);
  o.faults = {*rule};
  Seeded peer(o);
  auto st = set_project_attrs(peer, "flytesnacks", queue("q"));
  CHECK(st.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(list_attrs(peer, fa::EXECUTION_QUEUE).configurations_size() == 0);  // not applied
  CHECK(peer.emu->calls("UpdateProjectAttributes") == 1);

  // "writes" matches Create*/Update*/Delete*/Register*, not reads; rules change at runtime.
  peer.emu->set_faults({FaultRule{"writes", 1.0, "INTERNAL", 0, -1, false}});
  CHECK(peer.rpc(&S::CreateTask, task("t", "v1")).error_code() == grpc::StatusCode::INTERNAL);
  CHECK(register_project(peer, "x").error_code() == grpc::StatusCode::INTERNAL);
  CHECK(peer.rpc(&S::GetVersion, fa::GetVersionRequest{}).ok());
  peer.emu->set_faults({});
  CHECK(peer.rpc(&S::CreateTask, task("t", "v1")).ok());
}

TEST_CASE("emulator: fault latency is observed by the client", "[emulator]") {
  Options o;
  o.faults = {*parse_fault("GetVersion:latency=300ms")};
  Peer peer(o);
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(peer.rpc(&S::GetVersion, fa::GetVersionRequest{}).ok());
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(300));
}

TEST_CASE("emulator: after=N lets N calls through and fails the rest", "[emulator]") {
  Options o;
  o.faults = {*parse_fault("CreateTask:after=2,code=RESOURCE_EXHAUSTED")};
  Seeded peer(o);
  CHECK(peer.rpc(&S::CreateTask, task("a", "v1")).ok());
  CHECK(peer.rpc(&S::CreateTask, task("b", "v1")).ok());
  CHECK(peer.rpc(&S::CreateTask, task("c", "v1")).error_code() ==
        grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(peer.rpc(&S::CreateTask, task("d", "v1")).error_code() ==
        grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(peer.emu->calls("CreateTask") == 4);
}

TEST_CASE("emulator: a fractional rate is deterministic for a seed", "[emulator]") {
  auto outcomes = [](uint64_t seed) {
    Options o;
    o.seed = seed;
    o.faults = {*parse_fault("GetVersion:rate=0.5")};
    Peer peer(o);
    std::string seen;
    for (int i = 0; i < 40; ++i)
      seen += peer.rpc(&S::GetVersion, fa::GetVersionRequest{}).ok() ? '.' : 'x';
    return seen;
  };
  const auto a = outcomes(7);
  CHECK(a == outcomes(7));
  CHECK(a.find('x') != std::string::npos);
  CHECK(a.find('.') != std::string::npos);
}

TEST_CASE("emulator: drop=true applies the write but loses the response", "[emulator]") {
  Options o;
  o.faults = {*parse_fault("UpdateProjectDomainAttributes:rate=1,drop=true")};
  Seeded peer(o);
  CHECK(set_domain_attrs(peer, "flytesnacks", "development", queue("q")).error_code() ==
        grpc::StatusCode::UNAVAILABLE);
  CHECK(list_attrs(peer, fa::EXECUTION_QUEUE).configurations_size() == 1);
}

// ---------------------------------------------------------------------------------------------
// DataProxy uploads

namespace {

size_t ignore_body(char*, size_t size, size_t n, void*) { return size * n; }

struct Body {
  const std::string* data;
  size_t pos = 0;
};

size_t read_body(char* out, size_t size, size_t n, void* user) {
  auto* b = static_cast<Body*>(user);
  const size_t len = std::min(size * n, b->data->size() - b->pos);
  b->data->copy(out, len, b->pos);
  b->pos += len;
  return len;
}

int on_curl_debug(CURL*, curl_infotype type, char* data, size_t size, void* user) {
  if (type == CURLINFO_HEADER_IN &&
      std::string_view(data, size).starts_with("HTTP/1.1 100 Continue")) {
    *static_cast<bool*>(user) = true;
  }
  return 0;
}

// PUT with curl, as a real client does. Returns the status; `continued` tells whether the
// server answered curl's `Expect: 100-continue` (curl sends it for large bodies).
long http_put(const std::string& url, const std::string& body, const std::string& content_md5,
              bool* continued = nullptr) {
  CURL* curl = curl_easy_init();
  REQUIRE(curl != nullptr);
  Body b{&body};
  curl_slist* headers = nullptr;
  if (!content_md5.empty())
    headers = curl_slist_append(headers, ("Content-MD5: " + content_md5).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_body);
  curl_easy_setopt(curl, CURLOPT_READDATA, &b);
  curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, ignore_body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  bool saw_continue = false;
  curl_easy_setopt(curl, CURLOPT_DEBUGFUNCTION, on_curl_debug);
  curl_easy_setopt(curl, CURLOPT_DEBUGDATA, &saw_continue);
  curl_easy_setopt(curl, CURLOPT_VERBOSE, 1L);  // needed for the debug callback; prints nothing
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  REQUIRE(rc == CURLE_OK);
  if (continued) *continued = saw_continue;
  return status;
}

// 16 raw bytes from 32 hex chars.
std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace

TEST_CASE("emulator: CreateUploadLocation names content-addressed locations like FlyteAdmin",
          "[emulator]") {
  Peer peer;
  fs::CreateUploadLocationRequest req;
  fs::CreateUploadLocationResponse out;
  auto st = Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "project and domain are required parameters");
  req.set_project("flytesnacks");
  req.set_domain("development");
  req.set_filename("fastf5f1.tar.gz");
  st = Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &out);
  CHECK(st.error_message() == "content_md5 or filename_root is a required parameter");

  // The reference's example: md5 aa0c31cc… => prefix VIGDDTFJJNH2HSQJLHG4GFF7U4======.
  req.set_content_md5(unhex("aa0c31cca94b4fa3ca0959cdc314bfa7"));
  REQUIRE(
      Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &out).ok());
  CHECK(out.native_url() ==
        "s3://flytecd-emulator/flytesnacks/development/VIGDDTFJJNH2HSQJLHG4GFF7U4======/"
        "fastf5f1.tar.gz");
  CHECK_THAT(out.signed_url(),
             Catch::StartsWith(peer.emu->upload_base_url() + "/upload/flytesnacks/"));
  CHECK(out.headers().at("Content-MD5") == "qgwxzKlLT6PKCVnNwxS/pw==");
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  CHECK(out.expires_at().seconds() > now + 3500);
  CHECK(out.expires_at().seconds() <= now + 3601);

  req.mutable_expires_in()->set_seconds(7200);
  st = Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_CASE("emulator: the signed URL accepts a PUT only with a matching Content-MD5", "[emulator]") {
  Peer peer;
  // Large enough for curl to send `Expect: 100-continue`.
  std::string body(size_t{2} * 1024 * 1024, 'x');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
  fs::CreateUploadLocationRequest req;
  req.set_project("flytesnacks");
  req.set_domain("development");
  req.set_filename("source.tar");
  req.set_filename_root("root1");
  fs::CreateUploadLocationResponse loc;
  REQUIRE(
      Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &loc).ok());
  CHECK(loc.native_url() == "s3://flytecd-emulator/flytesnacks/development/root1/source.tar");

  CHECK(http_put(loc.signed_url(), body, "") == 400);  // header required
  bool continued = false;
  CHECK(http_put(loc.signed_url(), body, "qgwxzKlLT6PKCVnNwxS/pw==", &continued) ==
        400);  // BadDigest
  CHECK(continued);
  CHECK_FALSE(peer.emu->uploaded(loc.native_url()));
  CHECK(http_put(peer.emu->upload_base_url() + "/upload/flytesnacks/development/x/y", body,
                 "qgwxzKlLT6PKCVnNwxS/pw==") == 403);  // never issued

  // With the right MD5 (from a tiny body whose digest we know) the bytes are stored.
  const std::string hello = "hello\n";  // md5 b1946ac92492d2347c6235b4d2611184
  const std::string md5_b64 = "sZRqySSS0jR8YjW00mERhA==";
  CHECK(http_put(loc.signed_url(), hello, md5_b64) == 200);
  CHECK(peer.emu->uploaded(loc.native_url()) == hello);

  // A content-addressed location pins the MD5 it was signed for.
  fs::CreateUploadLocationRequest pinned;
  pinned.set_project("flytesnacks");
  pinned.set_domain("development");
  pinned.set_filename("hello.txt");
  pinned.set_content_md5(unhex("b1946ac92492d2347c6235b4d2611184"));
  REQUIRE(Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, pinned, &loc)
              .ok());
  CHECK(http_put(loc.signed_url(), hello, "qgwxzKlLT6PKCVnNwxS/pw==") ==
        403);                                               // not the signed MD5
  CHECK(http_put(loc.signed_url(), body, md5_b64) == 400);  // signed MD5, other bytes: BadDigest
  CHECK(http_put(loc.signed_url(), hello, md5_b64) == 200);

  // A caller-chosen location that already holds different content cannot be re-issued.
  req.set_content_md5(unhex("00000000000000000000000000000000"));
  auto st = Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &loc);
  CHECK(st.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  req.set_content_md5(unhex("b1946ac92492d2347c6235b4d2611184"));
  CHECK(Peer::call(*peer.proxy, &fs::DataProxyService::Stub::CreateUploadLocation, req, &loc).ok());
}

// ---------------------------------------------------------------------------------------------
// Standalone mode

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

TEST_CASE("emulator: run_standalone serves until SIGTERM and exits 0", "[emulator]") {
  Options o;
  o.listen = "127.0.0.1:" + std::to_string(free_port());
  std::atomic<int> rc{-1};
  std::thread server([&] { rc = run_standalone(o); });

  auto stub =
      fs::AdminService::NewStub(grpc::CreateChannel(o.listen, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_wait_for_ready(true);  // bounded wait for the server to come up, no sleeps
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  fa::GetVersionResponse version;
  const bool up = stub->GetVersion(&ctx, fa::GetVersionRequest{}, &version).ok();
  CHECK(up);
  CHECK(version.control_plane_version().build() == "flytecd-emulator");
  // SIGTERM is blocked in that thread (and the servers it started) and taken by sigwait().
  if (up)
    pthread_kill(server.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
  server.join();
  CHECK(rc == (up ? 0 : 1));
}

// ---------------------------------------------------------------------------------------------
// Task resources: flyteadmin/pkg/manager/impl/validation/task_validator.go

namespace {

using ResourceList = std::vector<std::pair<fc::Resources::ResourceName, std::string>>;

fa::TaskCreateRequest task_with_resources(const std::string& name, const ResourceList& requests,
                                          const ResourceList& limits) {
  auto req = task(name, "v1");
  auto* res = req.mutable_spec()->mutable_template_()->mutable_container()->mutable_resources();
  for (const auto& [n, v] : requests) {
    auto* e = res->add_requests();
    e->set_name(n);
    e->set_value(v);
  }
  for (const auto& [n, v] : limits) {
    auto* e = res->add_limits();
    e->set_name(n);
    e->set_value(v);
  }
  return req;
}

grpc::Status create(Peer& peer, const fa::TaskCreateRequest& req) {
  return peer.rpc(&S::CreateTask, req);
}

constexpr auto CPU = fc::Resources::CPU;
constexpr auto GPU = fc::Resources::GPU;
constexpr auto MEMORY = fc::Resources::MEMORY;

const char* const k_contact =
    ". Please contact Flyte Admins to change these limits or consult the configuration";

}  // namespace

// task_validator.go validateResource: the platform limits (default config: cpu 2, memory 1Gi,
// gpu 1) bound requests; a limit is only checked when its resource is also requested.
TEST_CASE("emulator: task requests are checked against the platform limits, a lone limit is not",
          "[emulator][task_resources]") {
  Seeded peer;
  CHECK(create(peer, task_with_resources("lone_limit", {}, {{MEMORY, "8Gi"}, {CPU, "16"}})).ok());
  auto st = create(peer, task_with_resources("big_request", {{MEMORY, "2Gi"}}, {}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        std::string("Requested MEMORY default [2Gi] is greater than current limit set in the "
                    "platform configuration [1Gi]") +
            k_contact);
  st = create(peer, task_with_resources("limit_over", {{MEMORY, "512Mi"}}, {{MEMORY, "2048Mi"}}));
  CHECK(st.error_message() ==
        std::string("Requested MEMORY limit [2Gi] is greater than current limit set in the "
                    "platform configuration [1Gi]") +
            k_contact);
}

// validateResource compares Quantity.Value() (rounded up to an integer) and prints
// Quantity.String() (the canonical form).
TEST_CASE("emulator: task resources compare rounded-up integer values and print canonical forms",
          "[emulator][task_resources]") {
  Seeded peer;
  // 500m and 200m both round up to 1: FlyteAdmin accepts a request above its limit here.
  CHECK(create(peer, task_with_resources("milli", {{CPU, "500m"}}, {{CPU, "200m"}})).ok());
  // 2.5 rounds up to 3 > 2: refused although 2.1 would too; 1.5 (-> 2) is not above 2.
  CHECK(create(peer, task_with_resources("ok_cpu", {{CPU, "1.5"}}, {})).ok());
  auto st = create(peer, task_with_resources("over_cpu", {{CPU, "2.1"}}, {}));
  CHECK(st.error_message() ==
        std::string("Requested CPU default [2100m] is greater than current limit set in the "
                    "platform configuration [2]") +
            k_contact);
  st = create(peer, task_with_resources("req_gt_lim", {{CPU, "1.5"}}, {{CPU, "0.5"}}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "Requested CPU default [1500m] is greater than the limit [500m]. Please fix your "
        "configuration");
}

// requestedResourcesToQuantity / addResourceEntryToMap / isWholeNumber, and validateResource's
// GPU case.
TEST_CASE(
    "emulator: GPU must be whole and its request equal its limit, duplicates and bad "
    "quantities are refused",
    "[emulator][task_resources]") {
  Seeded peer;
  const std::string id_text =
      "resource_type:TASK project:\"flytesnacks\" domain:\"development\" name:\"%\" "
      "version:\"v1\"";
  auto with_name = [&](const std::string& n) {
    std::string s = id_text;
    return s.replace(s.find('%'), 1, n);
  };
  auto st = create(peer, task_with_resources("half_gpu", {{GPU, "0.5"}}, {}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "gpu for [" + with_name("half_gpu") + "] must be a whole number, got: 0.5 instead");
  st = create(peer, task_with_resources("gpu_neq", {{GPU, "1"}}, {{GPU, "2"}}));
  CHECK(st.error_message() ==
        "For extended resource 'gpu' the default value must equal the limit value for task [" +
            with_name("gpu_neq") + "]");
  st = create(peer, task_with_resources("gpu_big", {{GPU, "2"}}, {{GPU, "2"}}));
  CHECK(st.error_message() ==
        std::string("Requested GPU default [2] is greater than current limit set in the platform "
                    "configuration [1]") +
            k_contact);
  CHECK(create(peer, task_with_resources("gpu_ok", {{GPU, "1"}}, {{GPU, "1"}})).ok());

  st = create(peer, task_with_resources("dup", {{CPU, "1"}, {CPU, "1"}}, {}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "can't specify CPU limit for task [" + with_name("dup") + "] multiple times");
  st = create(peer, task_with_resources("bad_q", {}, {{MEMORY, "4x"}}));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "Parsing of MEMORY request failed for value 4x - reason  quantities must match the "
        "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'. Please follow K8s "
        "conventions for resources "
        "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/");
}

// validateK8sPod: every container of the pod spec, with Kubernetes resource names.
TEST_CASE("emulator: every container of a pod task is checked against the platform limits",
          "[emulator][task_resources]") {
  Seeded peer;
  auto pod_task = [](const std::string& name, const std::string& second_cpu) {
    auto req = task(name, "v1");
    auto* t = req.mutable_spec()->mutable_template_();
    t->clear_container();
    t->set_type("sidecar");
    auto* spec = t->mutable_k8s_pod()->mutable_pod_spec();
    auto* containers = (*spec->mutable_fields())["containers"].mutable_list_value();
    for (const std::string& cpu : {std::string("1"), second_cpu}) {
      auto* c = containers->add_values()->mutable_struct_value();
      (*c->mutable_fields())["name"].set_string_value("c");
      auto* res = (*c->mutable_fields())["resources"].mutable_struct_value();
      auto* requests = (*res->mutable_fields())["requests"].mutable_struct_value();
      (*requests->mutable_fields())["cpu"].set_string_value(cpu);
      (*requests->mutable_fields())["ephemeral-storage"].set_string_value("1Gi");
    }
    return req;
  };
  CHECK(create(peer, pod_task("pod_ok", "2")).ok());
  auto st = create(peer, pod_task("pod_big", "3"));
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        std::string("Requested CPU default [3] is greater than current limit set in the platform "
                    "configuration [2]") +
            k_contact);
}

// flyteadmin/pkg/manager/impl/workflow_manager.go GetWorkflow and launch_plan_manager.go
// GetLaunchPlan return validation.go ValidateIdentifier's error; task_manager.go GetTask only
// logs it and lets the lookup decide.
TEST_CASE(
    "emulator: GetWorkflow and GetLaunchPlan refuse an invalid identifier, GetTask looks "
    "it up anyway",
    "[emulator]") {
  Seeded peer;
  REQUIRE(peer.rpc(&S::CreateTask, task("t1", "v1")).ok());
  auto wf = workflow("wf", "v1", {ident(fc::TASK, "t1", "v1")});
  REQUIRE(peer.rpc(&S::CreateWorkflow, wf).ok());
  REQUIRE(peer.rpc(&S::CreateLaunchPlan, launch_plan("wf", "v1", wf.id())).ok());

  fa::ObjectGetRequest get;
  *get.mutable_id() = ident(fc::TASK, "wf", "v1");  // wrong resource type
  fa::Workflow w;
  auto st = peer.rpc(&S::GetWorkflow, get, &w);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() ==
        "unexpected resource type task for identifier [resource_type:TASK "
        "project:\"flytesnacks\" domain:\"development\" name:\"wf\" version:\"v1\"], expected "
        "workflow instead");
  get.mutable_id()->set_resource_type(fc::WORKFLOW);
  get.mutable_id()->clear_version();
  st = peer.rpc(&S::GetWorkflow, get, &w);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == "missing version");

  fa::ObjectGetRequest get_lp;
  *get_lp.mutable_id() = ident(fc::WORKFLOW, "wf", "v1");
  fa::LaunchPlan lp;
  st = peer.rpc(&S::GetLaunchPlan, get_lp, &lp);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::StartsWith("unexpected resource type workflow"));
  CHECK(peer.rpc(&S::GetLaunchPlan, fa::ObjectGetRequest{}, &lp).error_message() == "missing id");

  // GetTask: an unset resource type is only logged; the row is found by the other fields.
  fa::ObjectGetRequest get_task;
  *get_task.mutable_id() = ident(fc::TASK, "t1", "v1");
  get_task.mutable_id()->set_resource_type(fc::UNSPECIFIED);
  fa::Task t;
  CHECK(peer.rpc(&S::GetTask, get_task, &t).ok());
}

}  // namespace FLYTECD_UNITY_ID
