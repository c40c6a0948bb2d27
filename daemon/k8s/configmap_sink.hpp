#pragma once

#include <memory>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/k8s/client.hpp"
#include "daemon/k8s/settings.hpp"
#include "daemon/model/documents.hpp"
#include "sinks/configmap/configmap_sink.hpp"

namespace flytecd::k8s {

// ConfigMap mode (Flyte RFC 3749): the document format and the sink are in
// sinks/configmap/configmap_sink.hpp. What is here is the whole-document API the daemon used
// before the ConfigMap became a sinks::Sink; it stays until the daemon commits through the sink.

// The document of a revision's overrides and platform defaults (render_document of
// pass::desired_state(docs, the ConfigMap's capabilities)). Deterministic. Pure.
std::string render_overrides_document(const model::Documents& docs);

// The sink's settings from the `kubernetes.configMap` configuration.
sinks::configmap::Settings sink_settings(const ConfigMapSettings& s);

// Writes a rendered document (sinks::configmap::ConfigMapSink::write). Thread-compatible.
class ConfigMapSink {
 public:
  ConfigMapSink(std::shared_ptr<Client> client, ConfigMapSettings settings);

  using Outcome = sinks::configmap::ConfigMapSink::Outcome;
  // Idempotent. Errors keep the API's category (conflict, permission_denied, unavailable…).
  Result<Outcome> apply(const std::string& document, const std::string& revision);

  // "configmap flyte/flyte-admin-overrides (overrides.yaml)".
  std::string describe() const;

  // The same ConfigMap as a sinks::Sink (holds overrides and platform defaults).
  const std::shared_ptr<sinks::configmap::ConfigMapSink>& sink() const { return m_sink; }

 private:
  std::shared_ptr<sinks::configmap::ConfigMapSink> m_sink;
};

inline constexpr const char* k_overrides_hash_annotation =
    sinks::configmap::k_overrides_hash_annotation;
inline constexpr const char* k_revision_annotation = sinks::configmap::k_revision_annotation;

}  // namespace flytecd::k8s
