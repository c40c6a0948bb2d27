#pragma once

// A raw AdminService client of a loopback FlyteAdmin (the emulator), for setting up what a test
// needs behind flytecd's back: projects registered directly, as an operator would.

#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "flytecd_service.grpc.pb.h"

namespace flytecd_test {

inline std::unique_ptr<flyteidl::service::AdminService::Stub> admin_stub(
    const std::string& address) {
  return flyteidl::service::AdminService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

// RegisterProject id (named as its id); the test fails unless it succeeds.
inline void register_project(flyteidl::service::AdminService::Stub& admin, const std::string& id) {
  grpc::ClientContext ctx;
  flyteidl::admin::ProjectRegisterRequest req;
  req.mutable_project()->set_id(id);
  req.mutable_project()->set_name(id);
  flyteidl::admin::ProjectRegisterResponse resp;
  const auto st = admin.RegisterProject(&ctx, req, &resp);
  INFO(st.error_message());
  REQUIRE(st.ok());
}

}  // namespace flytecd_test
