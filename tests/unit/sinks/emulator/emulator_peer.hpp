#pragma once

// A started emulator with AdminService stubs, for tests that talk to it over real gRPC on
// 127.0.0.1:0. Every call has a 10 s deadline.

#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"

namespace flytecd::tests::emulator {

namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;
namespace fs = ::flyteidl::service;
using AdminStub = fs::AdminService::Stub;

struct EmulatorPeer {
  explicit EmulatorPeer(const sinks::emulator::Options& options = {}) {
    auto started = sinks::emulator::Emulator::start(options);
    if (!started) FAIL(started.error().message);
    emu = std::move(*started);
    admin = fs::AdminService::NewStub(
        grpc::CreateChannel(emu->address(), grpc::InsecureChannelCredentials()));
  }

  template <typename Req, typename Resp>
  grpc::Status rpc(grpc::Status (AdminStub::*method)(grpc::ClientContext*, const Req&, Resp*),
                   const Req& req, Resp* resp = nullptr) {
    Resp local;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ((*admin).*method)(&ctx, req, resp ? resp : &local);
  }

  grpc::Status register_project(const std::string& id) {
    fa::ProjectRegisterRequest req;
    req.mutable_project()->set_id(id);
    req.mutable_project()->set_name(id + " project");
    return rpc(&AdminStub::RegisterProject, req);
  }

  std::unique_ptr<sinks::emulator::Emulator> emu;
  std::unique_ptr<AdminStub> admin;
};

}  // namespace flytecd::tests::emulator
