// Raw unary RPC rate of a FlyteAdmin (or the emulator): a minimal client loop with no flytecd
// logic, so flytecd's own apply rate can be compared with what the server can take.
//
//   flytecd_bench_rpc ADDRESS [--calls N] [--threads T]
//
// Sends N UpdateWorkflowAttributes calls (distinct workflow scopes under project "bench-raw",
// which it registers first) spread over T threads sharing one channel, then N GetVersion calls.
// Prints calls/second for each.
#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "flytecd_service.grpc.pb.h"

namespace admin = flyteidl::admin;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ADDRESS [--calls N] [--threads T]\n", argv[0]);
    return 2;
  }
  // As flytecd's main() does: no Abseil deadlock detection (Debian's Abseil has it on).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  std::string address = argv[1];
  long calls = 20000;
  int threads = 8;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--calls")
      calls = std::strtol(argv[i + 1], nullptr, 10);
    else if (flag == "--threads")
      threads = std::atoi(argv[i + 1]);
  }
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = flyteidl::service::AdminService::NewStub(channel);
  {
    grpc::ClientContext ctx;
    admin::ProjectRegisterRequest req;
    req.mutable_project()->set_id("bench-raw");
    req.mutable_project()->set_name("bench-raw");
    admin::ProjectRegisterResponse resp;
    auto st = stub->RegisterProject(&ctx, req, &resp);
    if (!st.ok() && st.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
      std::fprintf(stderr, "RegisterProject: %s\n", st.error_message().c_str());
      return 1;
    }
  }
  auto run = [&](const char* name, auto&& one) {
    std::atomic<long> next{0}, failed{0};
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (long i = next++; i < calls; i = next++)
          if (!one(i)) ++failed;
      });
    for (auto& th : pool) th.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("raw %-26s %ld calls, %d threads: %.2f s, %.0f calls/s, %ld failed\n", name, calls,
                threads, secs, static_cast<double>(calls) / secs, failed.load());
  };
  run("UpdateWorkflowAttributes", [&](long i) {
    grpc::ClientContext ctx;
    admin::WorkflowAttributesUpdateRequest req;
    auto* a = req.mutable_attributes();
    a->set_project("bench-raw");
    a->set_domain("development");
    a->set_workflow("wf." + std::to_string(i));
    a->mutable_matching_attributes()->mutable_execution_cluster_label()->set_value(
        "c" + std::to_string(i % 7));
    admin::WorkflowAttributesUpdateResponse resp;
    return stub->UpdateWorkflowAttributes(&ctx, req, &resp).ok();
  });
  run("GetVersion", [&](long) {
    grpc::ClientContext ctx;
    admin::GetVersionRequest req;
    admin::GetVersionResponse resp;
    return stub->GetVersion(&ctx, req, &resp).ok();
  });
  return 0;
}
