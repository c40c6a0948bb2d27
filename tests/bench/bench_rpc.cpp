// Raw unary RPC rate of a FlyteAdmin (or the emulator): a minimal client loop with no flytecd
// logic, so flytecd's own apply rate can be compared with what the server can take.
//
//   flytecd_bench_rpc ADDRESS [--calls N] [--threads T] [--in-flight F]
//
// Sends N UpdateWorkflowAttributes calls (distinct workflow scopes under project "bench-raw",
// which it registers first) spread over T threads sharing one channel, then N GetVersion calls.
// Prints calls/second for each. With --in-flight F the calls go through gRPC's callback client
// instead, F at a time from one thread (no blocking thread per call), as flytecd's apply does.
#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
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
  int in_flight = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--calls")
      calls = std::strtol(argv[i + 1], nullptr, 10);
    else if (flag == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (flag == "--in-flight")
      in_flight = std::atoi(argv[i + 1]);
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
  auto request = [](long i) {
    admin::WorkflowAttributesUpdateRequest req;
    auto* a = req.mutable_attributes();
    a->set_project("bench-raw");
    a->set_domain("development");
    a->set_workflow("wf." + std::to_string(i));
    a->mutable_matching_attributes()->mutable_execution_cluster_label()->set_value(
        "c" + std::to_string(i % 7));
    return req;
  };
  if (in_flight > 0) {
    // F calls outstanding; each completion (on gRPC's callback thread) starts the next.
    struct Call {
      grpc::ClientContext ctx;
      admin::WorkflowAttributesUpdateRequest req;
      admin::WorkflowAttributesUpdateResponse resp;
    };
    std::mutex mu;
    std::condition_variable cv;
    long done = 0;
    std::atomic<long> next{0}, failed{0};
    std::function<void()> start_one = [&] {
      long i = next++;
      if (i >= calls) return;
      auto* c = new Call;
      c->req = request(i);
      stub->async()->UpdateWorkflowAttributes(&c->ctx, &c->req, &c->resp, [&, c](grpc::Status st) {
        if (!st.ok()) ++failed;
        delete c;
        start_one();
        std::lock_guard<std::mutex> lock(mu);
        if (++done == calls) cv.notify_one();
      });
    };
    auto t0 = std::chrono::steady_clock::now();
    for (int f = 0; f < in_flight; ++f) start_one();
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return done == calls; });
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "raw %-26s %ld calls, %d in flight (callback client): %.2f s, %.0f calls/s, "
        "%ld failed\n",
        "UpdateWorkflowAttributes", calls, in_flight, secs, static_cast<double>(calls) / secs,
        failed.load());
  } else {
    run("UpdateWorkflowAttributes", [&](long i) {
      grpc::ClientContext ctx;
      auto req = request(i);
      admin::WorkflowAttributesUpdateResponse resp;
      return stub->UpdateWorkflowAttributes(&ctx, req, &resp).ok();
    });
  }
  run("GetVersion", [&](long) {
    grpc::ClientContext ctx;
    admin::GetVersionRequest req;
    admin::GetVersionResponse resp;
    return stub->GetVersion(&ctx, req, &resp).ok();
  });
  return 0;
}
