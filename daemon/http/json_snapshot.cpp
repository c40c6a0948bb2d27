#include "daemon/http/json_snapshot.hpp"

#include "daemon/common/json_dump.hpp"

namespace flytecd::http {

nlohmann::json& JsonSnapshot::operator[](const std::string& key) {
  ++m_version;
  return m_doc[key];
}

void JsonSnapshot::erase(const std::string& key) {
  if (m_doc.erase(key) != 0) ++m_version;
}

std::shared_ptr<const std::string> JsonSnapshot::rendered(const nlohmann::json& extra) {
  if (m_rendered && m_rendered_version == m_version && m_rendered_extra == extra) {
    return m_rendered;
  }
  nlohmann::json doc = m_doc;
  if (extra.is_object()) {
    for (const auto& [k, v] : extra.items()) doc[k] = v;
  }
  m_rendered = std::make_shared<const std::string>(dump_json(doc));
  m_rendered_version = m_version;
  m_rendered_extra = extra;
  ++m_renders;
  return m_rendered;
}

}  // namespace flytecd::http
