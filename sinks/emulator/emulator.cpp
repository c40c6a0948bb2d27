#include "sinks/emulator/emulator.hpp"

#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <signal.h>

#include <charconv>
#include <cstdio>
#include <mutex>

#include "daemon/common/log.hpp"
#include "sinks/emulator/admin.hpp"
#include "sinks/emulator/faults.hpp"
#include "sinks/emulator/flyte2_service.hpp"
#include "sinks/emulator/service.hpp"
#include "sinks/emulator/store.hpp"
#include "sinks/emulator/upload_server.hpp"

namespace flytecd::sinks::emulator {
namespace {

constexpr int k_max_grpc_message_bytes = 64 * 1024 * 1024;

struct HostPort {
  std::string host;  // without IPv6 brackets
  int port = 0;
};

Result<HostPort> split_host_port(const std::string& address, const std::string& what) {
  const auto colon = address.rfind(':');
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_input, "emulator: " + what + " \"" + address +
                                                    "\": " + why + " (expected host:port)");
  };
  if (colon == std::string::npos) return bad("no port");
  HostPort hp;
  hp.host = address.substr(0, colon);
  if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']') {
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  }
  const std::string port = address.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), hp.port);
  if (ec != std::errc() || ptr != port.data() + port.size() || hp.port < 0 || hp.port > 65535) {
    return bad("invalid port");
  }
  return hp;
}

bool is_wildcard(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::";
}

}  // namespace

struct Emulator::Impl {
  explicit Impl(const Options& o) : options(o), faults(o.seed) {}

  Options options;
  FaultInjector faults;
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<Store> store;
  std::unique_ptr<Admin> admin;
  std::unique_ptr<UploadServer> uploads;
  std::unique_ptr<RpcFrontend> frontend;
  std::unique_ptr<Flyte2Settings> settings;  // Flyte 2 (options.flyte2), instead of the above
  std::unique_ptr<Flyte2Projects> projects;
  std::unique_ptr<Flyte2Frontend> flyte2_frontend;
  std::unique_ptr<grpc::Server> server;  // declared last: destroyed first
  std::string address;
  std::string upload_base;
  mutable std::mutex mu;  // guards the teardown against concurrent readers
  bool stopped = false;
};

namespace {

// FlyteAdmin's parts: the Admin logic, its signed-upload server and the gRPC services.
Status start_flyteadmin(Emulator::Impl& impl, const HostPort& upload_at) {
  AdminConfig config;
  config.domains = impl.options.domains;
  config.seed = impl.options.seed;
  impl.admin = std::make_unique<Admin>(*impl.store, config);
  Admin* admin = impl.admin.get();
  auto uploads =
      UploadServer::start(upload_at.host, upload_at.port,
                          [admin](const UploadRequest& r) { return admin->handle_upload(r); });
  if (!uploads) return uploads.error();
  impl.uploads = std::move(*uploads);
  impl.upload_base =
      "http://" + impl.uploads->public_host() + ":" + std::to_string(impl.uploads->port());
  impl.admin->set_upload_base_url(impl.upload_base);
  impl.frontend = std::make_unique<RpcFrontend>(*impl.admin, impl.faults, impl.log);
  return ok_status();
}

}  // namespace

Emulator::Emulator(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

Emulator::~Emulator() { shutdown(); }

Result<std::unique_ptr<Emulator>> Emulator::start(const Options& options) {
  if (options.domains.empty()) {
    return make_error(ErrorCode::invalid_input, "emulator: at least one domain is required");
  }
  auto listen = split_host_port(options.listen, "listen address");
  if (!listen) return listen.error();
  HostPort upload_at{listen->host, 0};
  if (!options.upload_listen.empty()) {
    auto parsed = split_host_port(options.upload_listen, "upload listen address");
    if (!parsed) return parsed.error();
    upload_at = *parsed;
  }

  auto impl = std::make_unique<Impl>(options);
  impl->faults.set(options.faults);
  auto store = Store::open(options.db_path);
  if (!store) return store.error();
  impl->store = std::move(*store);
  impl->log = log::get("emulator:" + options.listen);
  if (options.flyte2) {
    impl->settings = std::make_unique<Flyte2Settings>(*impl->store, options.flyte2_schema_lacks);
    impl->projects = std::make_unique<Flyte2Projects>(*impl->store, options.domains);
    for (const auto& id : options.flyte2_seed_projects)
      if (auto s = impl->projects->seed(id); !s) return s.error().wrap("seeding project " + id);
    impl->flyte2_frontend =
        std::make_unique<Flyte2Frontend>(*impl->settings, *impl->projects, impl->faults, impl->log);
  } else if (auto s = start_flyteadmin(*impl, upload_at); !s) {
    return s.error();
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(k_max_grpc_message_bytes);
  // Without this, gRPC sets SO_REUSEPORT and a second server on a busy port would "succeed".
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // FlyteAdmin's services are callback services (service.cpp); Flyte 2's are synchronous.
  // gRPC's synchronous server keeps at most MAX_POLLERS idle threads and starts a thread when
  // fewer than MIN_POLLERS wait: with the defaults (1, 2) every burst of concurrent writes made
  // and destroyed threads (clone3, page faults) per call. Keep enough for a client's concurrency.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 2);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 64);
  if (impl->frontend) impl->frontend->register_with(builder);
  if (impl->flyte2_frontend) impl->flyte2_frontend->register_with(builder);
  impl->server = builder.BuildAndStart();
  if (!impl->server || port == 0) {
    if (impl->uploads) impl->uploads->stop();
    return make_error(ErrorCode::unavailable, "emulator: cannot listen on " + options.listen +
                                                  " (address in use or invalid)");
  }
  const std::string host = is_wildcard(listen->host) ? "127.0.0.1" : listen->host;
  impl->address =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  // Named after the bound address so every line says which emulator instance wrote it.
  impl->log = log::get("emulator:" + impl->address);
  if (impl->frontend) {
    impl->frontend->set_log(impl->log);
    impl->log->info(
        "flytecd FlyteAdmin EMULATOR (not FlyteAdmin) serving AdminService + DataProxyService on "
        "{}, signed uploads on {}, database {}",
        impl->address, impl->upload_base, options.db_path);
  } else {
    impl->flyte2_frontend->set_log(impl->log);
    impl->log->info(
        "flytecd Flyte 2 EMULATOR (not Flyte 2) serving flyteidl2.settings.SettingsService + "
        "flyteidl2.project.ProjectService on {}, "
        "database {}",
        impl->address, options.db_path);
  }
  if (!options.faults.empty()) {
    impl->log->warn("fault injection active: {} rule(s)", options.faults.size());
  }
  return std::unique_ptr<Emulator>(new Emulator(std::move(impl)));
}

std::string Emulator::address() const { return m_impl->address; }

std::string Emulator::upload_base_url() const { return m_impl->upload_base; }

void Emulator::set_faults(std::vector<FaultRule> faults) {
  m_impl->log->info("fault rules replaced: {} rule(s)", faults.size());
  m_impl->faults.set(std::move(faults));
}

void Emulator::shutdown() {
  std::lock_guard<std::mutex> lock(m_impl->mu);
  if (m_impl->stopped) return;
  m_impl->stopped = true;
  if (m_impl->server) {
    // In-flight RPCs get a moment to finish; then they are cancelled.
    m_impl->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    m_impl->server->Wait();
    m_impl->server.reset();
  }
  if (m_impl->uploads) m_impl->uploads->stop();
  m_impl->uploads.reset();
  m_impl->admin.reset();
  m_impl->settings.reset();
  const GroupCommitStats groups =
      m_impl->store ? m_impl->store->group_commit_stats() : GroupCommitStats{};
  m_impl->store.reset();  // closes the database (the WAL is checkpointed on close)
  if (m_impl->log)
    m_impl->log->info("emulator on {} stopped ({} writes acknowledged in {} commits)",
                      m_impl->address, groups.writes, groups.commits);
}

uint64_t Emulator::calls(const std::string& method) const {
  if (m_impl->flyte2_frontend) return m_impl->flyte2_frontend->calls(method);
  return m_impl->frontend ? m_impl->frontend->calls(method) : 0;
}

std::optional<std::string> Emulator::uploaded(const std::string& native_url) const {
  std::lock_guard<std::mutex> lock(m_impl->mu);
  if (!m_impl->admin) return std::nullopt;
  auto data = m_impl->admin->uploaded(native_url);
  if (!data) return std::nullopt;
  return *data;
}

int run_standalone(const Options& options) {
  // Block the signals before any server thread exists, so that only sigwait() sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &signals, &previous);

  auto log = log::get("emulator");
  auto emulator = Emulator::start(options);
  if (!emulator) {
    log->error("cannot start the flytecd FlyteAdmin emulator: {}", emulator.error().message);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return 1;
  }
  if (options.flyte2) {
    log->warn(
        "this is the flytecd Flyte 2 EMULATOR, not Flyte 2: it follows the SettingsService and "
        "ProjectService of "
        "flyteorg/flyte main (versioned, conflict-safe settings) for testing and local use");
    std::printf("flytecd Flyte 2 emulator listening on %s\n", (*emulator)->address().c_str());
  } else {
    log->warn(
        "this is the flytecd FlyteAdmin EMULATOR, not FlyteAdmin: it follows FlyteAdmin's "
        "registration and matchable-attribute semantics for testing and local use; it runs no "
        "executions");
    std::printf("flytecd FlyteAdmin emulator listening on %s (uploads %s)\n",
                (*emulator)->address().c_str(), (*emulator)->upload_base_url().c_str());
  }
  std::fflush(stdout);

  int sig = 0;
  while (sigwait(&signals, &sig) != 0) {
  }
  log->info("received signal {}, shutting down", sig);
  (*emulator)->shutdown();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return 0;
}

}  // namespace flytecd::sinks::emulator
