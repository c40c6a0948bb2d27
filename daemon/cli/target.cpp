#include "daemon/cli/target.hpp"

#include <filesystem>
#include <set>

#include "daemon/common/log.hpp"
#include "daemon/registration/registrar.hpp"
#include "daemon/wiring.hpp"

namespace flytecd::cli {

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
  auto ledger = ledger::Ledger::open(cfg.state_dir + "/ledger.db");
  if (!ledger) return ledger.error();
  t.ledger = std::move(*ledger);

  // The table of sink backends is in daemon/wiring.cpp; here the emulator is started first
  // when it is the target, since the Target owns it.
  sinks::flyteadmin::AdminConfig admin = cfg.admin;
  if (wiring::admin_target_kind(cfg) == wiring::TargetKind::emulator) {
    sinks::emulator::Options opts;
    opts.db_path = cfg.state_dir + "/emulator.db";
    opts.domains = cfg.documents.domains;
    auto emu = sinks::emulator::Emulator::start(opts);
    if (!emu) return emu.error().wrap("embedded emulator");
    t.emulator = std::move(*emu);
    admin = sinks::flyteadmin::AdminConfig{};
    admin.endpoint = t.emulator->address();
    admin.insecure = true;
    t.description = "flyteadmin EMULATOR (embedded, " + t.emulator->address() + ", " +
                    opts.db_path + ") — not a real FlyteAdmin; set admin.endpoint to target one";
    log::get("flytecd")->warn(
        "no FlyteAdmin endpoint configured: using the embedded FlyteAdmin emulator at {} ({})",
        t.emulator->address(), opts.db_path);
  } else {
    t.description = "flyteadmin " + log::redact_url(admin.endpoint);
  }
  auto sink = wiring::make_admin_sink(admin, t.description);
  if (!sink) return sink.error();
  t.sink = std::move(*sink);
  if (wiring::configmap_mode(cfg)) {
    auto kube = wiring::open_kube_client(cfg);
    if (!kube) return kube.error();
    t.configmap = wiring::make_configmap_sink(std::move(*kube));
    auto routed = wiring::route_overrides(*t.sink, *t.configmap);
    if (!routed) return routed.error();
    t.routed = std::move(*routed);
  }
  return t;
}

Result<reconcile::GuardVerdict> guard_revision(
    const config::Config& cfg, Target& target, size_t document_count,
    const std::vector<model::Registration>& registrations, const reconcile::State& desired) {
  auto managed = target.ledger->managed();
  if (!managed) return managed.error();
  auto records = target.ledger->registrations();
  if (!records) return records.error();
  std::set<std::string> declared, owned;
  for (const auto& r : registrations) declared.insert(registration::registration_key(r));
  for (const auto& [key, rec] : *records) owned.insert(key);
  return reconcile::guard_pass(
      reconcile::guard_input(desired, declared, document_count, *managed, owned, cfg.policy.prune),
      cfg.policy);
}

void record_refusal(Target& target, const std::string& revision, const std::string& reason) {
  auto id = target.ledger->begin_reconcile(revision);
  if (id) (void)target.ledger->finish_reconcile(*id, 0, "refused", reason);
}

}  // namespace flytecd::cli
