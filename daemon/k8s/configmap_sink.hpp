#pragma once

#include <memory>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/k8s/client.hpp"
#include "daemon/k8s/settings.hpp"
#include "daemon/model/documents.hpp"

namespace flytecd::k8s {

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
// documents). Deterministic: the same documents always give the same bytes. Pure.
std::string render_overrides_document(const model::Documents& docs);

// Writes the rendered document with server-side apply (PATCH application/apply-patch+yaml,
// fieldManager=flytecd, force=true) and, when restartDeployment is set, restarts FlyteAdmin by
// setting the pod-template annotation flytecd.io/overrides-sha256 to the document's hash — a
// rollout happens only when the content changed, and re-applying is a no-op. A whole-document
// writer rather than a sinks::Sink: FlyteAdmin reads the ConfigMap as one unit, so there are no
// per-(scope, type) steps to execute. Thread-compatible (one reconcile thread).
class ConfigMapSink {
 public:
  ConfigMapSink(std::shared_ptr<Client> client, ConfigMapSettings settings);

  struct Outcome {
    bool changed = false;            // the ConfigMap's document differed and was applied
    bool restart_requested = false;  // the Deployment's annotation was set (rollout if new)
    std::string sha256;              // hash of the document
  };
  // Idempotent. Errors keep the API's category (conflict, permission_denied, unavailable…).
  Result<Outcome> apply(const std::string& document, const std::string& revision);

  // "configmap flyte/flyte-admin-overrides (overrides.yaml)".
  std::string describe() const;

 private:
  std::shared_ptr<Client> m_client;
  ConfigMapSettings m_settings;
};

inline constexpr const char* k_overrides_hash_annotation = "flytecd.io/overrides-sha256";
inline constexpr const char* k_revision_annotation = "flytecd.io/revision";

}  // namespace flytecd::k8s
