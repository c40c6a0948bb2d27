#include "daemon/wiring/target.hpp"

#include <filesystem>

#include "daemon/common/log.hpp"
#include "daemon/wiring/target_identity.hpp"
#include "daemon/wiring/wiring.hpp"

namespace flytecd::wiring {

Result<Target> open_target(const config::Config& cfg, Access access) {
  Target t;
  std::error_code ec;
  std::filesystem::create_directories(cfg.state_dir, ec);
  if (ec)
    return make_error(ErrorCode::invalid_input,
                      "state directory " + cfg.state_dir + ": " + ec.message());
  if (access == Access::write || cfg.admin.endpoint.empty()) {
    auto lock = FileLock::acquire(
        cfg.state_dir + "/lock",
        std::chrono::milliseconds(static_cast<int64_t>(cfg.lock_wait_seconds * 1000)),
        "state directory " + cfg.state_dir);
    if (!lock) return lock.error();
    t.lock = std::move(*lock);
  }
  // Ownership belongs to one target: its ledger and record live in a directory of its own.
  auto prep = prepare_target_state(cfg, access == Access::write);
  if (!prep) return prep.error();
  for (const auto& notice : prep->notices) log::get("flytecd")->warn("{}", notice);
  t.identity = target_identity(cfg).id;
  t.state_dir = prep->dir.string();
  auto ledger = ledger::Ledger::open(prep->ledger.string());
  if (!ledger) return ledger.error();
  t.ledger = std::move(*ledger);

  // The sinks come from the table of sink backends (sink_backends(), daemon/wiring/wiring.cpp);
  // the embedded emulator is started here first, since the Target owns it.
  const TargetKind kind = admin_target_kind(cfg);
  SinkContext ctx;
  if (kind == TargetKind::emulator) {
    sinks::emulator::Options opts;
    opts.db_path = cfg.state_dir + "/emulator.db";
    opts.domains = cfg.documents.domains;
    auto emu = sinks::emulator::Emulator::start(opts);
    if (!emu) return emu.error().wrap("embedded emulator");
    t.emulator = std::move(*emu);
    ctx.emulator_address = t.emulator->address();
    t.description = "flyteadmin EMULATOR (embedded, " + t.emulator->address() + ", " +
                    opts.db_path + ") — not a real FlyteAdmin; set admin.endpoint to target one";
    log::get("flytecd")->warn(
        "no FlyteAdmin endpoint configured: using the embedded FlyteAdmin emulator at {} ({})",
        t.emulator->address(), opts.db_path);
  } else {
    t.description = "flyteadmin " + log::redact_url(cfg.admin.endpoint);
  }
  ctx.label = t.description;
  auto sink = make_sink(kind, cfg, ctx);
  if (!sink) return sink.error();
  t.sink = std::move(*sink);
  if (configmap_mode(cfg)) {
    auto kube = open_kube_client(cfg);
    if (!kube) return kube.error();
    SinkContext cm_ctx;
    cm_ctx.kube = std::move(*kube);
    auto configmap = make_sink(TargetKind::configmap, cfg, cm_ctx);
    if (!configmap) return configmap.error();
    t.configmap = std::move(*configmap);
    auto routed = route_overrides(*t.sink, *t.configmap);
    if (!routed) return routed.error();
    t.routed = std::move(*routed);
  }
  return t;
}

}  // namespace flytecd::wiring
