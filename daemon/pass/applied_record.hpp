#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/common/result.hpp"

namespace flytecd::pass {

// The applied-revision record: the small fact, kept where every replica can read it, from which
// a replica that lost its ledger (a wiped state directory, a new leader) rebuilds what flytecd
// owns from Git. Written only by the leader: when a pass that changes something starts (in
// flight) and when a pass converges.
struct AppliedRecord {
  std::string converged;  // the revision the last converged pass applied ("" before the first)
  std::string in_flight;  // the revision of a pass that started executing and has not converged
  // Hash of the configuration that decides ownership (target, repository URL and path, domains):
  // a record written for another target or repository is not used to rebuild ownership.
  std::string config_fingerprint;
  std::string version;     // flytecd's version that wrote it
  std::string writer;      // who wrote it (the replica's identity: pod name or host name)
  int64_t updated_at = 0;  // unix seconds
};

// The record as a JSON object ({"converged":…,"inFlight":…,"configFingerprint":…,"version":…,
// "writer":…,"updatedAt":…}); well under 1 KiB for any revision id. Pure.
std::string to_json(const AppliedRecord& r);
// Errors: invalid_input naming `where` and what is wrong (not JSON, a field of the wrong type).
// Unknown fields are ignored (a newer flytecd may add some).
Result<AppliedRecord> parse_applied_record(std::string_view json, const std::string& where);

// A record as stored, with the token that a compare-and-swap write must present.
struct StoredRecord {
  AppliedRecord record;
  std::string token;  // Kubernetes: the ConfigMap's resourceVersion; a file: its content hash
};

// Where the record is kept. write() is a compare-and-swap: it succeeds only when the stored
// record still has `expected_token` ("" = must not exist yet); otherwise ErrorCode::conflict
// (another writer won: Kubernetes answers 409), and the stored record is unchanged. Returns the
// new token. Implementations: a file in the state directory (VM), a ConfigMap (Kubernetes,
// daemon/k8s/record_store.hpp). Thread-safe.
class RecordStore {
 public:
  virtual ~RecordStore() = default;
  // nullopt: no record yet. Errors: unavailable/timeout (retryable), invalid_input (a record that
  // cannot be read: its place is named), permission_denied.
  virtual Result<std::optional<StoredRecord>> read() = 0;
  virtual Result<std::string> write(const AppliedRecord& record,
                                    const std::string& expected_token) = 0;
  // For logs and status: "file /var/lib/flytecd/applied-revision.json", "ConfigMap ns/name".
  virtual std::string describe() const = 0;
};

// The record as a file, replaced atomically: written to a temporary file beside it, fsynced,
// renamed over it, and the directory fsynced. The token is the sha256 of the file's bytes. Not
// safe across processes by itself: the state directory's lock (daemon/common/file_lock.hpp)
// keeps one writer.
class FileRecordStore final : public RecordStore {
 public:
  explicit FileRecordStore(std::filesystem::path path);
  Result<std::optional<StoredRecord>> read() override;
  Result<std::string> write(const AppliedRecord& record,
                            const std::string& expected_token) override;
  std::string describe() const override;

 private:
  std::filesystem::path m_path;
};

// "<stateDir>/applied-revision.json".
std::filesystem::path record_file(const std::string& state_dir);

}  // namespace flytecd::pass
