// The FlyteAdmin sink's plan steps: execute() on the calling thread with blocking calls, and
// execute_async() through gRPC's callback client.
#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "sinks/flyteadmin/admin_sink.hpp"
#include "sinks/flyteadmin/admin_sink_impl.hpp"
#include "sinks/flyteadmin/channel.hpp"
#include "sinks/flyteadmin/requests.hpp"

namespace flytecd::sinks::flyteadmin {
namespace admin = flyteidl::admin;
using sinks::Action;
using sinks::ObjectKind;

namespace {
using AdminStub = flyteidl::service::AdminService::Stub;

// The stub method, asynchronous send and response type of each OverrideRequest alternative.
template <typename Req>
struct OverrideRpc;
#define FLYTECD_OVERRIDE_RPC(Method, Request, Reply)                                             \
  template <>                                                                                    \
  struct OverrideRpc<admin::Request> {                                                           \
    using Response = admin::Reply;                                                               \
    static constexpr auto method = &AdminStub::Method;                                           \
    static void send(AdminStub& s, grpc::ClientContext* c, const admin::Request* q, Response* r, \
                     std::function<void(grpc::Status)> f) {                                      \
      s.async()->Method(c, q, r, std::move(f));                                                  \
    }                                                                                            \
  };
FLYTECD_OVERRIDE_RPC(UpdateProjectAttributes, ProjectAttributesUpdateRequest,
                     ProjectAttributesUpdateResponse)
FLYTECD_OVERRIDE_RPC(UpdateProjectDomainAttributes, ProjectDomainAttributesUpdateRequest,
                     ProjectDomainAttributesUpdateResponse)
FLYTECD_OVERRIDE_RPC(UpdateWorkflowAttributes, WorkflowAttributesUpdateRequest,
                     WorkflowAttributesUpdateResponse)
FLYTECD_OVERRIDE_RPC(DeleteProjectAttributes, ProjectAttributesDeleteRequest,
                     ProjectAttributesDeleteResponse)
FLYTECD_OVERRIDE_RPC(DeleteProjectDomainAttributes, ProjectDomainAttributesDeleteRequest,
                     ProjectDomainAttributesDeleteResponse)
FLYTECD_OVERRIDE_RPC(DeleteWorkflowAttributes, WorkflowAttributesDeleteRequest,
                     WorkflowAttributesDeleteResponse)
#undef FLYTECD_OVERRIDE_RPC
}  // namespace

Status AdminSink::execute(const sinks::Step& step) {
  Impl& i = *m_impl;
  if (step.action == Action::adopt) return ok_status();
  if (step.kind == ObjectKind::project) {
    const auto& p = *step.project;
    if (step.action == Action::create) {
      admin::ProjectRegisterRequest req;
      *req.mutable_project() = render_project(p);
      admin::ProjectRegisterResponse resp;
      auto s = i.call("RegisterProject", req, &resp, &AdminStub::RegisterProject);
      if (s || s.error().code != ErrorCode::already_exists) return s;
      // Registered earlier (e.g. before a crash): make it match instead.
    }
    admin::Project req = render_project(p);
    if (step.action == Action::remove) req.set_state(admin::Project::ARCHIVED);
    admin::ProjectUpdateResponse resp;
    return i.call("UpdateProject", req, &resp, &AdminStub::UpdateProject);
  }

  // Overrides: send what render_override_step rendered, in order, stopping at the first failure.
  for (const OverrideRequest& req : render_override_step(step)) {
    const std::string method(rpc_name(req));
    Status s = std::visit(
        [&](const auto& r) {
          using Rpc = OverrideRpc<std::decay_t<decltype(r)>>;
          typename Rpc::Response resp;
          return i.call(method.c_str(), r, &resp, Rpc::method);
        },
        req);
    if (!s) return s;
  }
  return ok_status();
}

namespace {

// One RPC of an asynchronous step: its request and response, and how to send it.
struct AsyncRpc {
  std::string method;
  // Sends one attempt on `ctx`; `answered` gets its status on a gRPC thread.
  std::function<void(grpc::ClientContext* ctx, std::function<void(grpc::Status)> answered)> send;
  bool ok_ends_step = false;         // RegisterProject: registered, nothing more to do
  bool continues_if_exists = false;  // RegisterProject: there already; UpdateProject makes it match
};

template <typename Req, typename Resp, typename Send>
AsyncRpc async_rpc(std::string method, Req req, Send send_fn) {
  auto held = std::make_shared<std::pair<Req, Resp>>(std::move(req), Resp{});
  return AsyncRpc{std::move(method),
                  [held, send_fn](grpc::ClientContext* ctx, std::function<void(grpc::Status)> f) {
                    send_fn(ctx, &held->first, &held->second, std::move(f));
                  }};
}

}  // namespace

// A step's RPCs through gRPC's callback client, one after another, with call_on's deadline,
// token, accounting and retries (Attempts), a retry's backoff on a grpc::Alarm. Owns itself from
// start() until it reports: then it releases its gate slot, deletes itself and calls `done`.
class AdminSink::AsyncStep {
 public:
  AsyncStep(Impl& impl, std::vector<AsyncRpc> rpcs, std::function<void(Status)> done)
      : m_impl(impl), m_rpcs(std::move(rpcs)), m_done(std::move(done)) {}
  void start() { next_rpc(); }

 private:
  void next_rpc() {
    if (m_index == m_rpcs.size()) return finish(ok_status());
    m_attempts.emplace(m_impl.cfg, m_impl.tokens.get());
    attempt();
  }
  void attempt() {
    m_ctx = std::make_unique<grpc::ClientContext>();
    if (auto no_call = m_attempts->prepare(*m_ctx)) return finish(no_call->wrap(where()));
    m_rpcs[m_index].send(m_ctx.get(), [this](grpc::Status st) { answered(std::move(st)); });
  }
  void answered(grpc::Status st) {
    const AsyncRpc& rpc = m_rpcs[m_index];
    m_impl.count(rpc.method.c_str(), st.error_code());
    if (auto delay = m_attempts->retry_after(st, rpc.method, *m_impl.log)) {
      if (delay->count() == 0) return attempt();
      m_alarm = std::make_unique<grpc::Alarm>();
      m_alarm->Set(std::chrono::system_clock::now() + *delay, [this](bool) { attempt(); });
      return;
    }
    if (st.ok()) {
      if (rpc.ok_ends_step) return finish(ok_status());
      ++m_index;
      return next_rpc();
    }
    Error e = call_error(m_impl.cfg, where(), st);
    if (rpc.continues_if_exists && e.code == ErrorCode::already_exists) {
      ++m_index;
      return next_rpc();
    }
    finish(std::move(e));
  }
  std::string where() const { return "flyteadmin: " + m_rpcs[m_index].method; }
  void finish(Status s) {
    auto done = std::move(m_done);
    Impl& impl = m_impl;
    delete this;
    impl.gate.release();
    done(std::move(s));
  }

  Impl& m_impl;
  std::vector<AsyncRpc> m_rpcs;
  std::function<void(Status)> m_done;
  size_t m_index = 0;
  std::optional<Attempts> m_attempts;
  std::unique_ptr<grpc::ClientContext> m_ctx;
  std::unique_ptr<grpc::Alarm> m_alarm;
};

int AdminSink::async_window() const { return m_impl->cfg.max_in_flight; }

void AdminSink::execute_async(const sinks::Step& step, std::function<void(Status)> done) {
  if (step.action == Action::adopt) return done(ok_status());
  AdminStub& stub = *m_impl->stub;
  std::vector<AsyncRpc> rpcs;
  // Never an empty project or domain (as call_on): then nothing of the step is sent.
  std::optional<Error> refused;
  auto check = [&](const std::string& method, const google::protobuf::Message& req) {
    if (auto why = empty_scope(req); why && !refused)
      refused = Error{ErrorCode::invalid_input, "flyteadmin: " + method + ": not sent: " + *why};
  };
  if (step.kind == ObjectKind::project) {
    const auto& p = *step.project;
    if (step.action == Action::create) {
      admin::ProjectRegisterRequest req;
      *req.mutable_project() = render_project(p);
      check("RegisterProject", req);
      rpcs.push_back(async_rpc<admin::ProjectRegisterRequest, admin::ProjectRegisterResponse>(
          "RegisterProject", std::move(req), [&stub](auto* c, auto* q, auto* r, auto f) {
            stub.async()->RegisterProject(c, q, r, std::move(f));
          }));
      rpcs.back().ok_ends_step = true;
      rpcs.back().continues_if_exists = true;
    }
    admin::Project req = render_project(p);
    if (step.action == Action::remove) req.set_state(admin::Project::ARCHIVED);
    check("UpdateProject", req);
    rpcs.push_back(async_rpc<admin::Project, admin::ProjectUpdateResponse>(
        "UpdateProject", std::move(req), [&stub](auto* c, auto* q, auto* r, auto f) {
          stub.async()->UpdateProject(c, q, r, std::move(f));
        }));
  } else {
    for (OverrideRequest& req : render_override_step(step)) {
      std::string method(rpc_name(req));
      if (auto why = empty_override_scope(req); why && !refused)
        refused = Error{ErrorCode::invalid_input, "flyteadmin: " + method + ": not sent: " + *why};
      rpcs.push_back(std::visit(
          [&](auto& r) {
            using R = std::decay_t<decltype(r)>;
            using Rpc = OverrideRpc<R>;
            return async_rpc<R, typename Rpc::Response>(
                method, std::move(r), [&stub](auto* c, auto* q, auto* resp, auto f) {
                  Rpc::send(stub, c, q, resp, std::move(f));
                });
          },
          req));
    }
  }
  if (refused) return done(std::move(*refused));
  m_impl->gate.acquire();
  (new AsyncStep(*m_impl, std::move(rpcs), std::move(done)))->start();
}

}  // namespace flytecd::sinks::flyteadmin
