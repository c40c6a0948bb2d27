#pragma once

// A JSON document that is edited in place and rendered at most once per change, for
// endpoints many clients poll (/api/v1/status): readers share one rendered string.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace flytecd::http {

// Not thread-safe: the owner guards it (and its other status fields) with one mutex.
class JsonSnapshot {
 public:
  // The member `key`, created if absent. Counts as a change (the next rendered() renders).
  nlohmann::json& operator[](const std::string& key);
  // Removes `key`. Counts as a change when the member existed.
  void erase(const std::string& key);
  const nlohmann::json& document() const { return m_doc; }

  // The document with `extra`'s members added (e.g. live leader-election state), as compact
  // JSON; invalid UTF-8 is replaced, never thrown. The same pointer is returned until the
  // document or `extra` changes.
  std::shared_ptr<const std::string> rendered(const nlohmann::json& extra = nullptr);
  // How many times rendered() actually rendered (for tests and benchmarks).
  uint64_t renders() const { return m_renders; }

 private:
  nlohmann::json m_doc = nlohmann::json::object();
  uint64_t m_version = 0;
  uint64_t m_rendered_version = 0;
  nlohmann::json m_rendered_extra;
  std::shared_ptr<const std::string> m_rendered;
  uint64_t m_renders = 0;
};

}  // namespace flytecd::http
