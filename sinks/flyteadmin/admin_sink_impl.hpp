#pragma once

// The FlyteAdmin sink's private state, shared by its files: admin_sink.cpp (connection, reads,
// registration calls) and admin_steps.cpp (plan steps, blocking and asynchronous). Not for use
// outside sinks/flyteadmin.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/common/log.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "sinks/flyteadmin/channel.hpp"
#include "sinks/flyteadmin/requests.hpp"

namespace flytecd::sinks::flyteadmin {

// Counting semaphore bounding RPCs in flight.
class Gate {
 public:
  explicit Gate(int n) : m_free(n) {}
  void acquire() {
    std::unique_lock<std::mutex> lock(m_mu);
    m_cv.wait(lock, [&] { return m_free > 0; });
    --m_free;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(m_mu);
      ++m_free;
    }
    m_cv.notify_one();
  }

 private:
  std::mutex m_mu;
  std::condition_variable m_cv;
  int m_free;
};

// An override row's identity, parsed back from its key (sinks::override_key).
struct RowKey {
  std::string key;
  sinks::Scope scope;
  sinks::AttributeType type{};
};

struct AdminSink::Impl {
  AdminConfig cfg;
  std::string label;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<flyteidl::service::AdminService::Stub> stub;
  std::unique_ptr<flyteidl::service::DataProxyService::Stub> data_proxy;
  std::unique_ptr<TokenSource> tokens;
  Gate gate{16};
  mutable std::mutex stats_mu;
  std::map<std::string, uint64_t> stats;
  std::shared_ptr<spdlog::logger> log;

  explicit Impl(int in_flight) : gate(in_flight) {}

  // One RPC with deadline, auth, retries and accounting.
  template <typename Req, typename Resp, typename Fn>
  Status call(const char* method, const Req& req, Resp* resp, Fn fn) {
    return call_on(stub.get(), method, req, resp, fn);
  }
  // `answered`, when given, receives the gRPC code of the last answer.
  template <typename StubT, typename Req, typename Resp, typename Fn>
  Status call_on(StubT* target, const char* method, const Req& req, Resp* resp, Fn fn,
                 grpc::StatusCode* answered = nullptr) {
    // Never an empty project or domain: FlyteAdmin would read it as "any" (see empty_scope).
    if (auto why = empty_scope(req))
      return make_error(ErrorCode::invalid_input,
                        std::string("flyteadmin: ") + method + ": not sent: " + *why);
    const std::string where = std::string("flyteadmin: ") + method;
    CallOutcome out = call_with_retries(
        cfg, tokens.get(), method,
        [&](grpc::ClientContext& ctx) {
          gate.acquire();
          grpc::Status st = (target->*fn)(&ctx, req, resp);
          gate.release();
          return st;
        },
        [&](grpc::StatusCode code) { count(method, code); }, *log);
    if (answered) *answered = out.status.error_code();
    if (out.auth_error) return out.auth_error->wrap(where);
    if (out.status.ok()) return ok_status();
    return call_error(cfg, where, out.status);
  }

  // Counts one answer of `method` (rpc_counts).
  void count(const char* method, grpc::StatusCode code) {
    std::lock_guard<std::mutex> lock(stats_mu);
    ++stats[std::string(method) + " " + grpc_code_name(code)];
  }

  // The reads of observe() and observe_scoped() (defined below them).
  Result<std::map<std::string, sinks::ProjectState>> list_projects();
  // Every row of `type` FlyteAdmin lists (below launch-plan level), or only those whose keys are
  // in `wanted`: the others' attributes are never parsed.
  Result<std::vector<sinks::OverrideState>> list_rows(
      sinks::AttributeType type, const std::set<std::string>* wanted = nullptr);
  // One project; nullopt when FlyteAdmin has none, or has no GetProject (then no_get_project).
  Result<std::optional<sinks::ProjectState>> get_project(const std::string& id);
  Result<std::map<std::string, sinks::ProjectState>> get_projects(const std::set<std::string>& ids);
  Result<std::optional<sinks::OverrideState>> get_row(const RowKey& k);
  Result<std::vector<std::optional<sinks::OverrideState>>> get_rows(const std::vector<RowKey>& ks,
                                                                    std::vector<RowKey>& refused);
  // Set once the server answered GetProject with UNIMPLEMENTED (FlyteAdmin before 1.11.1).
  std::atomic<bool> no_get_project{false};
};

}  // namespace flytecd::sinks::flyteadmin
