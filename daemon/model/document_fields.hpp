#pragma once

// What every document kind's parser shares (model-internal; the kinds are rows of
// daemon/model/kinds.hpp): the reader of one YAML mapping that reports unknown fields, and the
// checks of fields several kinds have (domain, project id, metadata).

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>

#include "daemon/common/scan.hpp"
#include "daemon/model/diagnostic.hpp"
#include "daemon/model/loader.hpp"
#include "daemon/model/proto_yaml.hpp"

namespace flytecd::model {

inline constexpr const char* k_api_version = "flytecd/v1";
inline constexpr const char* k_operator_api_version = "flyte.backend/v1";

// Reads one YAML mapping, remembering which keys were consumed so the rest can be reported
// as unknown fields.
class Fields {
 public:
  Fields(const std::string& file, const YAML::Node& map, std::string path, Diagnostics& diags)
      : m_file(file), m_map(map), m_path(std::move(path)), m_diags(diags) {}

  YAML::Node node(const std::string& key) {
    m_known.insert(key);
    for (const auto& kv : m_map)
      if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
    return YAML::Node(YAML::NodeType::Undefined);
  }

  // A scalar string field. Missing + required => missing_field. Wrong type => wrong_type.
  std::string str(const std::string& key, bool required, const std::string& expected = "a string") {
    YAML::Node n = node(key);
    if (!n.IsDefined() || n.IsNull()) {
      if (required)
        add(DiagKind::missing_field, location_of(m_file, m_map), key,
            "required field '" + scan::printable(key) + "' is missing", expected);
      return {};
    }
    if (!n.IsScalar()) {
      add(DiagKind::wrong_type, location_of(m_file, n), key,
          "found a " + std::string(n.IsMap() ? "mapping" : "list"), expected);
      return {};
    }
    if (required && n.Scalar().empty())
      add(DiagKind::missing_field, location_of(m_file, n), key,
          "field '" + scan::printable(key) + "' is empty", expected);
    return n.Scalar();
  }

  std::map<std::string, std::string> string_map(const std::string& key) {
    std::map<std::string, std::string> out;
    YAML::Node n = node(key);
    if (!n.IsDefined() || n.IsNull()) return out;
    if (!n.IsMap()) {
      add(DiagKind::wrong_type, location_of(m_file, n), key, "found a non-mapping",
          "a mapping of strings");
      return out;
    }
    for (const auto& kv : n) {
      if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
        add(DiagKind::wrong_type, location_of(m_file, kv.second),
            key + "." + (kv.first.IsScalar() ? kv.first.Scalar() : "?"), "found a non-string value",
            "string keys and values");
        continue;
      }
      out[kv.first.Scalar()] = kv.second.Scalar();
    }
    return out;
  }

  // Every key not read through this object is an unknown field.
  void reject_unknown(const std::string& allowed) {
    for (const auto& kv : m_map) {
      std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      if (key == "<<")
        add(DiagKind::unknown_field, location_of(m_file, kv.first), key, k_merge_key_message,
            k_merge_key_expected);
      else if (!m_known.count(key))
        add(DiagKind::unknown_field, location_of(m_file, kv.first), key,
            "unknown field '" + scan::printable(key) + "'", "one of: " + allowed);
    }
  }

  void add(DiagKind kind, Location loc, const std::string& key, std::string msg,
           std::string expected) {
    m_diags.push_back(Diagnostic{Severity::error,
                                 kind,
                                 std::move(loc),
                                 m_path.empty() ? key : m_path + "." + key,
                                 std::move(msg),
                                 std::move(expected),
                                 {}});
  }

 private:
  const std::string& m_file;
  const YAML::Node& m_map;
  std::string m_path;
  Diagnostics& m_diags;
  std::set<std::string> m_known;
};

// A domain that is not one of FlyteAdmin's configured domains is an error at `doc.domain`.
void check_domain(Fields& fields, const std::string& file, const YAML::Node& doc,
                  const std::string& domain, const Policy& policy);
// A project id must be a DNS-1123 label.
void check_project_id(Fields& fields, const std::string& file, const YAML::Node& node,
                      const std::string& key, const std::string& id);
// metadata: {name, labels, annotations, namespace}; returns the name.
std::string parse_metadata(const std::string& file, const YAML::Node& doc, Fields& f,
                           Diagnostics& diags, bool name_required);

}  // namespace flytecd::model
