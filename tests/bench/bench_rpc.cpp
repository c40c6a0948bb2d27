// Raw unary RPC rate of a FlyteAdmin (or the emulator): a minimal client loop with no flytecd
// logic, so flytecd's own apply rate can be compared with what the server can take.
//
//   flytecd_bench_rpc ADDRESS [--calls N] [--threads T] [--in-flight F] [--rpc KIND]
//
// Sends N UpdateWorkflowAttributes calls (distinct workflow scopes under project "bench-raw",
// which it registers first) spread over T threads sharing one channel, then N GetVersion calls.
// Prints calls/second for each. With --in-flight F the calls go through gRPC's callback client
// instead, F at a time from one thread (no blocking thread per call), as flytecd's apply does.
// --rpc (with --in-flight) picks the write, each call a row of its own as in flytecd's cold
// apply: workflow (UpdateWorkflowAttributes, the default), project-domain
// (UpdateProjectDomainAttributes) and project (UpdateProjectAttributes) over 2,000 projects
// "bench-raw-<i>" registered first (not timed), register-project (RegisterProject of new
// projects). bench_apply.sh weighs each kind's rate by the apply's own mix of writes.
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
  std::string rpc = "workflow";
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--calls")
      calls = std::strtol(argv[i + 1], nullptr, 10);
    else if (flag == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (flag == "--in-flight")
      in_flight = std::atoi(argv[i + 1]);
    else if (flag == "--rpc")
      rpc = argv[i + 1];
  }
  if (rpc != "workflow" && rpc != "project-domain" && rpc != "project" &&
      rpc != "register-project") {
    std::fprintf(stderr, "--rpc: workflow, project-domain, project or register-project\n");
    return 2;
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
  // Scopes of the project and project-domain writes: k_projects projects, three domains, three
  // attribute types, one row per call (calls beyond that rewrite rows, as a second pass would).
  constexpr long k_projects = 2000;
  const char* const k_domains[] = {"development", "staging", "production"};
  auto matching = [](long i, long per_type, admin::MatchingAttributes* m) {
    switch ((i / per_type) % 3) {
      case 0:
        m->mutable_execution_cluster_label()->set_value("c" + std::to_string(i % 7));
        break;
      case 1:
        m->mutable_execution_queue_attributes()->add_tags("q" + std::to_string(i % 5));
        break;
      default:
        m->mutable_workflow_execution_config()->set_max_parallelism(static_cast<int>(i % 9) + 1);
    }
  };
  if (rpc == "project-domain" || rpc == "project") {
    for (long p = 0; p < k_projects; ++p) {
      grpc::ClientContext ctx;
      admin::ProjectRegisterRequest req;
      req.mutable_project()->set_id("bench-raw-" + std::to_string(p));
      req.mutable_project()->set_name("bench-raw-" + std::to_string(p));
      admin::ProjectRegisterResponse resp;
      auto st = stub->RegisterProject(&ctx, req, &resp);
      if (!st.ok() && st.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
        std::fprintf(stderr, "RegisterProject: %s\n", st.error_message().c_str());
        return 1;
      }
    }
  }
  // F calls outstanding; each completion (on gRPC's callback thread) starts the next.
  auto in_flight_run = [&](const char* name, auto make, auto send) {
    using Req = decltype(make(0L));
    struct Call {
      grpc::ClientContext ctx;
      Req req;
    };
    std::mutex mu;
    std::condition_variable cv;
    long done = 0;
    std::atomic<long> next{0}, failed{0};
    std::function<void()> start_one = [&] {
      long i = next++;
      if (i >= calls) return;
      auto* c = new Call;
      c->req = make(i);
      send(&c->ctx, &c->req, [&, c](grpc::Status st) {
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
        name, calls, in_flight, secs, static_cast<double>(calls) / secs, failed.load());
  };
  // Each async call's answer lives beside its callback until the call ends.
  auto answer = [](auto* resp, std::function<void(grpc::Status)> done) {
    return [resp, done = std::move(done)](grpc::Status st) {
      delete resp;
      done(std::move(st));
    };
  };
  if (in_flight > 0 && rpc == "workflow") {
    in_flight_run("UpdateWorkflowAttributes", request, [&](auto* ctx, auto* req, auto done) {
      auto* resp = new admin::WorkflowAttributesUpdateResponse;
      stub->async()->UpdateWorkflowAttributes(ctx, req, resp, answer(resp, std::move(done)));
    });
  } else if (in_flight > 0 && rpc == "project-domain") {
    in_flight_run(
        "UpdateProjectDomainAttributes",
        [&](long i) {
          admin::ProjectDomainAttributesUpdateRequest req;
          auto* a = req.mutable_attributes();
          a->set_project("bench-raw-" + std::to_string(i % k_projects));
          a->set_domain(k_domains[(i / k_projects) % 3]);
          matching(i, 3 * k_projects, a->mutable_matching_attributes());
          return req;
        },
        [&](auto* ctx, auto* req, auto done) {
          auto* resp = new admin::ProjectDomainAttributesUpdateResponse;
          stub->async()->UpdateProjectDomainAttributes(ctx, req, resp,
                                                       answer(resp, std::move(done)));
        });
  } else if (in_flight > 0 && rpc == "project") {
    in_flight_run(
        "UpdateProjectAttributes",
        [&](long i) {
          admin::ProjectAttributesUpdateRequest req;
          auto* a = req.mutable_attributes();
          a->set_project("bench-raw-" + std::to_string(i % k_projects));
          matching(i, k_projects, a->mutable_matching_attributes());
          return req;
        },
        [&](auto* ctx, auto* req, auto done) {
          auto* resp = new admin::ProjectAttributesUpdateResponse;
          stub->async()->UpdateProjectAttributes(ctx, req, resp, answer(resp, std::move(done)));
        });
  } else if (in_flight > 0) {
    const std::string run_id =
        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000007);
    in_flight_run(
        "RegisterProject",
        [&](long i) {
          admin::ProjectRegisterRequest req;
          req.mutable_project()->set_id("bench-new-" + run_id + "-" + std::to_string(i));
          req.mutable_project()->set_name("bench new " + std::to_string(i));
          return req;
        },
        [&](auto* ctx, auto* req, auto done) {
          auto* resp = new admin::ProjectRegisterResponse;
          stub->async()->RegisterProject(ctx, req, resp, answer(resp, std::move(done)));
        });
  } else {
    run("UpdateWorkflowAttributes", [&](long i) {
      grpc::ClientContext ctx;
      auto req = request(i);
      admin::WorkflowAttributesUpdateResponse resp;
      return stub->UpdateWorkflowAttributes(&ctx, req, &resp).ok();
    });
  }
  // --threads 0: only the write above (a profile of one client's calls).
  if (threads > 0)
    run("GetVersion", [&](long) {
      grpc::ClientContext ctx;
      admin::GetVersionRequest req;
      admin::GetVersionResponse resp;
      return stub->GetVersion(&ctx, req, &resp).ok();
    });
  return 0;
}
