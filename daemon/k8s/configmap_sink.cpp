#include "daemon/k8s/configmap_sink.hpp"

#include "daemon/k8s/kube_api.hpp"
#include "daemon/pass/pass.hpp"

namespace flytecd::k8s {

std::string render_overrides_document(const model::Documents& docs) {
  return sinks::configmap::render_document(
      pass::desired_state(docs, {.overrides = true, .platform_defaults = true}));
}

sinks::configmap::Settings sink_settings(const ConfigMapSettings& s) {
  return sinks::configmap::Settings{s.cm_namespace, s.name, s.key, s.restart_deployment};
}

ConfigMapSink::ConfigMapSink(std::shared_ptr<Client> client, ConfigMapSettings settings)
    : m_sink(std::make_shared<sinks::configmap::ConfigMapSink>(make_kube_api(std::move(client)),
                                                               sink_settings(settings))) {}

std::string ConfigMapSink::describe() const { return m_sink->describe(); }

Result<ConfigMapSink::Outcome> ConfigMapSink::apply(const std::string& document,
                                                    const std::string& revision) {
  return m_sink->write(document, revision);
}

}  // namespace flytecd::k8s
