#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "daemon/common/result.hpp"
#include "sinks/configmap/kube_api.hpp"
#include "sinks/sink.hpp"

namespace flytecd::sinks::configmap {

// ConfigMap mode (Flyte RFC 3749, "sane overridable defaults"): FlyteAdmin reads every override
// from one document in a ConfigMap it mounts, instead of its database. The document is a YAML
// list, one entry per scope, most general first:
//   - overrides: {…}                                  # global platform defaults
//   - domain: production
//     overrides: {…}                                  # domain-wide defaults
//   - project: flytesnacks
//     domain: development                             # optional
//     workflow: core.hello                            # optional (needs domain)
//     overrides:                                      # keys = flyteidl.admin.MatchingAttributes
//       taskResourceAttributes: {defaults: {cpu: "1"}, limits: {cpu: "3"}}
// Values are protobuf's JSON mapping of MatchingAttributes (Flyte's own schema, as in flytecd's
// documents). Global and domain-wide entries are override rows with an empty project.

// The document for the override rows of `rows` (projects are ignored). Deterministic: the same
// rows always give the same bytes, keys in MatchingAttributes field order. Pure.
std::string render_document(const sinks::State& rows);

// The override rows of a document (the inverse of render_document). Errors: invalid_input naming
// the entry and field (not YAML, not a list, unknown keys, a workflow without a domain, an
// unknown or invalid attribute, a (scope, type) given twice). Pure.
Result<sinks::State> parse_document(const std::string& document);

struct Settings {
  std::string cm_namespace;
  std::string name = "flyte-admin-overrides";
  std::string key = "overrides.yaml";
  std::string restart_deployment;  // FlyteAdmin's Deployment (same namespace); empty = no restart
};

inline constexpr const char* k_overrides_hash_annotation = "flytecd.io/overrides-sha256";
inline constexpr const char* k_revision_annotation = "flytecd.io/revision";

// The ConfigMap document as a Sink holding overrides and platform defaults. observe() reads and
// parses the document (an absent ConfigMap holds no overrides); execute() stages a step in memory;
// commit() renders what is staged and writes it with server-side apply when it differs from the
// live document, then (restartDeployment set) sets the pod-template annotation
// flytecd.io/overrides-sha256 of FlyteAdmin's Deployment to the document's hash, so FlyteAdmin
// restarts once per new document. Re-committing the same state writes nothing. Thread-safe.
class ConfigMapSink final : public Sink {
 public:
  ConfigMapSink(std::shared_ptr<KubeApi> api, Settings settings);

  Capabilities capabilities() const override {
    return Capabilities{.overrides = true, .platform_defaults = true};
  }
  // Errors: the API's (unavailable, permission_denied, …); invalid_input for a document it
  // cannot parse, naming the ConfigMap.
  Result<sinks::State> observe() override;
  // Stages the step (loading the live document first if this sink has not observed yet). Project
  // steps are invalid_input. No API call.
  Status execute(const sinks::Step& step) override;
  // Writes the staged document (nothing was observed or staged: no call). Idempotent.
  Status commit(const std::string& revision) override;
  // "configmap flyte/flyte-admin-overrides (overrides.yaml)".
  std::string describe() const override;

  struct Outcome {
    bool changed = false;            // the ConfigMap's document differed and was applied
    bool restart_requested = false;  // the Deployment's annotation was set (rollout if new)
    std::string sha256;              // hash of the document
  };
  // Writes `document` as it is (GET, apply when different, restart annotation). What commit()
  // uses; also the whole-document API of the daemon's ConfigMap mode until it commits through
  // the sink. Idempotent.
  Result<Outcome> write(const std::string& document, const std::string& revision);
  // The outcome of the last successful commit() (nullopt before one).
  std::optional<Outcome> last_commit() const;

 private:
  Result<std::map<std::string, sinks::OverrideState>> read_live();

  std::shared_ptr<KubeApi> m_api;
  Settings m_settings;
  mutable std::mutex m_mu;
  bool m_loaded = false;  // m_staged holds the live rows (observed or loaded) plus staged steps
  std::map<std::string, sinks::OverrideState> m_staged;
  std::optional<Outcome> m_last_commit;
};

}  // namespace flytecd::sinks::configmap
