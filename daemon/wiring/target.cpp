#include "daemon/wiring/target.hpp"

#include <filesystem>

#include "daemon/common/atomic_file.hpp"
#include "daemon/common/log.hpp"
#include "daemon/wiring/target_identity.hpp"
#include "daemon/wiring/wiring.hpp"

namespace flytecd::wiring {

Result<Target> open_target(const config::Config& cfg, Access access) {
  Target t;
  if (auto s = create_private_directory(cfg.state_dir, "state directory"); !s)
    return make_error(ErrorCode::invalid_input, s.error().message);
  if (access == Access::write || embedded_target(cfg)) {
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

  // The sinks come from the table of sink backends (sink_backends(), daemon/wiring/wiring.cpp).
  std::vector<sinks::Sink*> routes;
  for (const SinkBackend* row : selected_sinks(cfg)) {
    auto opened = row->open(cfg);
    if (!opened) return opened.error();
    t.description += (t.description.empty() ? "" : " + ") + opened->description;
    routes.push_back(opened->sink.get());
    t.sinks.push_back(std::move(*opened));
  }
  if (t.sinks.empty()) return make_error(ErrorCode::invalid_input, "no sink configured");
  if (t.sinks.size() > 1) {
    auto routed = route_by_capabilities(routes);
    if (!routed) return routed.error();
    t.routed = std::move(*routed);
  }
  return t;
}

bool Target::embedded() const {
  for (const auto& s : sinks)
    if (s.kind == TargetKind::emulator || s.kind == TargetKind::flyte2_emulator) return true;
  return false;
}

std::map<std::string, uint64_t> Target::rpc_counts() const {
  std::map<std::string, uint64_t> out;
  for (const auto& s : sinks)
    for (const auto& [key, n] : s.sink->rpc_counts()) out[key] += n;
  return out;
}

}  // namespace flytecd::wiring
