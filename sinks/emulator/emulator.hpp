#pragma once

// The flytecd FlyteAdmin EMULATOR: a real gRPC server speaking flyteidl.service.AdminService
// (+ DataProxyService.CreateUploadLocation) with FlyteAdmin's semantics, persisted in SQLite.
// It is the peer flytecd is tested against and the default target when no FlyteAdmin endpoint
// is configured. It is not FlyteAdmin and says so in its logs and in GetVersion.
//
// This header deliberately includes no gRPC/protobuf/SQLite headers.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::sinks::emulator {

// One fault-injection rule. A call matches when `method` is its RPC name
// ("UpdateProjectAttributes"), "*" (every method) or "writes" (every
// Create*/Update*/Delete*/Register* method).
struct FaultRule {
  std::string method;
  double error_rate = 0;             // probability in [0,1] that a matching call fails
  std::string code = "UNAVAILABLE";  // gRPC status code name used for injected failures
  int latency_ms = 0;                // added to every matching call
  int fail_after_calls = -1;         // >=0: every matching call after the first N fails
  bool drop_response = false;        // the call is executed (and committed), then the reply is
                                     // replaced by the injected error: "lost response"
};

// Parses "writes:rate=0.3,code=UNAVAILABLE,latency=200ms" or "CreateTask:after=5,code=INTERNAL".
// Keys: rate (0..1), code (gRPC code name, any case), latency (Nms | Ns | N = ms),
// after (N >= 0), drop (true|false). Errors: invalid_input naming the offending part.
Result<FaultRule> parse_fault(const std::string& spec);

// Parses several rules separated by ';' (empty string = no rules).
Result<std::vector<FaultRule>> parse_faults(const std::string& specs);

struct Options {
  std::string listen = "127.0.0.1:0";  // gRPC listen address; port 0 picks a free port
  std::string db_path = ":memory:";    // SQLite file; ":memory:" for tests
  std::vector<std::string> domains{"development", "staging", "production"};
  std::vector<FaultRule> faults;
  uint64_t seed = 0;  // seeds the fault RNG (deterministic error_rate)
  // HTTP endpoint that receives signed-URL uploads. Empty: same host as `listen`, free port.
  std::string upload_listen;
  // Serve Flyte 2's SettingsService and ProjectService (as flyteorg/flyte `main` does) instead
  // of FlyteAdmin's services; no upload endpoint then.
  bool flyte2 = false;
  // With flyte2: the projects the server creates at startup when they are missing (runs/setup.go
  // seeds its configured default project, `flytesnacks`, ACTIVE, named as its id).
  std::vector<std::string> flyte2_seed_projects{"flytesnacks"};
  // With flyte2: Settings fields (JSON paths, "run.defaultQueue") this server's schema lacks, as
  // on a server older than the IDL: writes drop them. For tests of version skew.
  std::vector<std::string> flyte2_schema_lacks;
};

class Emulator {
 public:
  // Opens (or creates) the database, starts the gRPC and the upload HTTP servers.
  // Errors: invalid_input (bad options), unavailable (cannot listen), internal (database).
  static Result<std::unique_ptr<Emulator>> start(const Options& options);
  ~Emulator();
  Emulator(const Emulator&) = delete;
  Emulator& operator=(const Emulator&) = delete;

  // "127.0.0.1:PORT": where gRPC clients connect (wildcard listen hosts become 127.0.0.1).
  std::string address() const;
  // "http://127.0.0.1:PORT": base of the signed upload URLs ("" for a Flyte 2 emulator).
  std::string upload_base_url() const;
  // Replaces the fault rules (and their call counters). Thread-safe.
  void set_faults(std::vector<FaultRule> faults);
  // Stops both servers and closes the database. Idempotent; also done by the destructor.
  void shutdown();
  // Number of calls received per RPC name (including failed and fault-injected ones). Thread-safe.
  uint64_t calls(const std::string& method) const;
  // Bytes stored by a PUT to a signed URL, looked up by its native_url ("s3://flytecd-emulator/…").
  std::optional<std::string> uploaded(const std::string& native_url) const;

  struct Impl;

 private:
  explicit Emulator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

// Runs the emulator in the foreground: logs clearly that this is the flytecd FlyteAdmin
// EMULATOR (not FlyteAdmin) and its listen address, blocks until SIGINT/SIGTERM, shuts down.
// Returns the process exit code (0 on a clean stop, 1 if it could not start).
int run_standalone(const Options& options);

}  // namespace flytecd::sinks::emulator
