#pragma once

#include <functional>
#include <memory>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/config/config.hpp"

namespace flytecd::run {

// `flytecd run`: one reconcile thread (poll interval with jitter, webhook/API nudges), the HTTP
// server on its own threads, notifications in the background. SIGTERM/SIGINT stop cleanly (no
// new step starts; steps in flight finish and are recorded); SIGHUP reloads the configuration.
// A revision that fails validation is rejected whole and the previous one stays in force.
class Daemon {
 public:
  using ConfigLoader = std::function<Result<config::Config>()>;
  explicit Daemon(ConfigLoader load_config);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Blocks until a stop signal (or request_stop()); returns the process exit code.
  int run();
  // Thread-safe nudges (tests, signal thread, HTTP handlers).
  void request_stop();
  void trigger(const std::string& reason);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace flytecd::run
