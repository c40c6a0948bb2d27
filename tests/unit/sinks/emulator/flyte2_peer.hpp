#pragma once

// A Flyte 2 emulator on 127.0.0.1:0 and a gRPC stub of one of its services, for the tests that
// talk to it as a client would.

#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "sinks/emulator/emulator.hpp"

namespace flytecd_test {

template <typename Service>
struct Flyte2Emulator {
  // `db`: the emulator's database (":memory:" or a file); `seed`: projects it starts with.
  explicit Flyte2Emulator(std::string db = ":memory:", std::vector<std::string> seed = {}) {
    flytecd::sinks::emulator::Options o;
    o.flyte2 = true;
    o.db_path = std::move(db);
    o.flyte2_seed_projects = std::move(seed);
    auto started = flytecd::sinks::emulator::Emulator::start(o);
    if (!started) FAIL(started.error().message);
    emu = std::move(*started);
    stub =
        Service::NewStub(grpc::CreateChannel(emu->address(), grpc::InsecureChannelCredentials()));
  }
  // One call with a 10 s deadline: call(&Service::Stub::Method, request, &response).
  template <typename Req, typename Resp, typename Fn>
  grpc::Status call(Fn fn, const Req& req, Resp* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ((*stub).*fn)(&ctx, req, resp);
  }

  std::unique_ptr<flytecd::sinks::emulator::Emulator> emu;
  std::unique_ptr<typename Service::Stub> stub;
};

}  // namespace flytecd_test
