#pragma once

// The gate every RPC of the emulator passes (internal to sinks/emulator): counts calls, applies
// fault injection, and turns a Status into the gRPC status the emulated server returns.

#include <grpcpp/grpcpp.h>
#include <spdlog/logger.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/common/result.hpp"
#include "sinks/emulator/admin.hpp"
#include "sinks/emulator/faults.hpp"
#include "sinks/emulator/store.hpp"

namespace flytecd::sinks::emulator {

// FlyteAdmin's transformer cuts longer messages (and then drops the details).
inline constexpr size_t k_max_message_bytes = 32000;

// FlyteAdmin's gRPC code for an error (conflict: ABORTED).
grpc::StatusCode flyteadmin_code(ErrorCode code);

// Serialized google.rpc.Status{code, message, details: [detail]} (grpc-status-details-bin).
std::string rpc_status_details(int code, const std::string& message,
                               const google::protobuf::Any& detail);

// Counts calls, applies faults and converts results. Shared by every service of the emulator;
// `code_of` maps an error of the service's logic to the gRPC code its server returns (FlyteAdmin
// and Flyte 2 name a version conflict differently).
class CallGate {
 public:
  using CodeOf = grpc::StatusCode (*)(ErrorCode);
  CallGate(FaultInjector& faults, std::shared_ptr<spdlog::logger> log,
           CodeOf code_of = flyteadmin_code)
      : m_faults(faults), m_log(std::move(log)), m_code_of(code_of) {}

  template <typename Body>
  grpc::Status run(grpc::ServerContextBase* ctx, const char* method, Body&& body,
                   const google::protobuf::Any* detail = nullptr) {
    return run_decided(ctx, method, decide(method), std::forward<Body>(body), detail);
  }

  // run() in two steps, for a handler that must know first whether the call sleeps (an
  // injected latency): counts the call and draws its fault.
  FaultDecision decide(const char* method) {
    {
      std::lock_guard<std::mutex> lock(m_mu);
      ++m_calls[method];
    }
    return m_faults.decide(method);
  }

  template <typename Body>
  grpc::Status run_decided(grpc::ServerContextBase* ctx, const char* method,
                           const FaultDecision& fault, Body&& body,
                           const google::protobuf::Any* detail = nullptr) {
    if (fault.latency_ms > 0) delay(ctx, fault.latency_ms);
    if (fault.fail_code && !fault.drop_response) return injected(method, fault);
    take_error_detail();  // nothing left over from an earlier call on this thread
    const Status st = body();
    const auto recorded = take_error_detail();
    if ((detail == nullptr || detail->type_url().empty()) && recorded) detail = &*recorded;
    if (fault.fail_code) return injected(method, fault);  // executed, but the reply is "lost"
    if (st) {
      log()->debug("{} -> OK", method);
      return grpc::Status::OK;
    }
    return failed(method, st, detail);
  }

  // The gRPC status the server returns for a failure of its logic (or of its store).
  grpc::Status failed(const char* method, const Status& st,
                      const google::protobuf::Any* detail = nullptr) {
    std::string message = st.error().message;
    const bool cut = message.size() > k_max_message_bytes;
    if (cut) message.resize(k_max_message_bytes);
    const auto code = m_code_of(st.error().code);
    log()->debug("{} -> {}: {}", method, static_cast<int>(code), message);
    if (detail != nullptr && !detail->type_url().empty() && !cut) {
      return grpc::Status(code, message,
                          rpc_status_details(static_cast<int>(code), message, *detail));
    }
    return grpc::Status(code, message);
  }

  // A unary callback call: runs `call` (returning the gRPC status) and finishes its reactor
  // with it, on this gRPC callback thread; a call drawn for an injected latency runs on a
  // thread of its own instead (offload), so that its sleep holds up no other call.
  template <typename Call>
  grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* ctx, const char* method,
                                   Call call) {
    auto* reactor = ctx->DefaultReactor();
    const FaultDecision fault = decide(method);
    auto respond = [this, ctx, method, fault, call] {
      return run_decided(ctx, method, fault, call);
    };
    if (fault.latency_ms > 0)
      offload([reactor, respond] { reactor->Finish(respond()); });
    else
      reactor->Finish(respond());
    return reactor;
  }

  // A write on gRPC's callback thread: `respond` (given the call's fault, returning its gRPC
  // status) runs without waiting for the store's sync (DeferredAck), and the reply goes when the
  // store says the write is durable. A call drawn to sleep (an injected latency) runs on a
  // thread of its own instead, waiting for its sync as a synchronous handler does.
  template <typename Respond>
  grpc::ServerUnaryReactor* finish_write(grpc::CallbackServerContext* ctx, const char* method,
                                         Respond respond) {
    auto* reactor = ctx->DefaultReactor();
    const FaultDecision fault = decide(method);
    if (fault.latency_ms > 0) {
      offload([reactor, respond, fault] { reactor->Finish(respond(fault)); });
      return reactor;
    }
    std::optional<DeferredAck::Pending> pending;
    grpc::Status st;
    {
      DeferredAck deferred;
      st = respond(fault);
      pending = deferred.pending();
    }
    if (!pending) {
      reactor->Finish(std::move(st));
      return reactor;
    }
    pending->store->when_durable(pending->group, [this, method, reactor, st](Status durable) {
      reactor->Finish(durable ? st : failed(method, durable));
    });
    return reactor;
  }

  // Runs `work` on a thread of its own, joined when the gate goes (after the server stopped, so
  // after every call finished).
  void offload(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_slow.emplace_back(std::move(work));
  }

  ~CallGate() {
    std::vector<std::thread> slow;
    {
      std::lock_guard<std::mutex> lock(m_mu);  // a slowed call logs under it: join without it
      slow.swap(m_slow);
    }
    for (auto& t : slow) t.join();
  }
  CallGate(const CallGate&) = delete;
  CallGate& operator=(const CallGate&) = delete;

  void set_log(std::shared_ptr<spdlog::logger> log) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_log = std::move(log);
  }

  uint64_t calls(const std::string& method) const {
    std::lock_guard<std::mutex> lock(m_mu);
    auto it = m_calls.find(method);
    return it == m_calls.end() ? 0 : it->second;
  }

 private:
  // Sleeps, but stops early when the call is cancelled (client gone or server shutting down),
  // so that a long injected latency never holds up shutdown. The call then still executes,
  // like a slow server that finishes work its client gave up on.
  static void delay(grpc::ServerContextBase* ctx, int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until && !ctx->IsCancelled()) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(10), until - std::chrono::steady_clock::now()));
    }
  }

  std::shared_ptr<spdlog::logger> log() const {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_log;
  }

  grpc::Status injected(const char* method, const FaultDecision& fault) {
    const auto code = static_cast<grpc::StatusCode>(*fault.fail_code);
    log()->info("{}: injected fault (rule \"{}\", code {}{})", method, fault.rule, *fault.fail_code,
                fault.drop_response ? ", after executing the call" : "");
    return grpc::Status(code, std::string("emulator: injected fault for ") + method);
  }

  FaultInjector& m_faults;
  std::shared_ptr<spdlog::logger> m_log;
  CodeOf m_code_of;
  mutable std::mutex m_mu;
  std::map<std::string, uint64_t, std::less<>> m_calls;
  std::vector<std::thread> m_slow;  // calls slowed by an injected latency (offload)
};

}  // namespace flytecd::sinks::emulator
