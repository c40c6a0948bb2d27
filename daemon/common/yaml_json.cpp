#include "daemon/common/yaml_json.hpp"

#include <cerrno>
#include <cstdlib>
#include <set>
#include <string_view>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"

namespace flytecd::yaml_json {

nlohmann::json to_json(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& kv : node) out[kv.first.Scalar()] = to_json(kv.second);
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : node) out.push_back(to_json(item));
    return out;
  }
  if (node.IsNull()) return nullptr;
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted scalar: always a string
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (scan::is_integer_text(s)) {
    errno = 0;
    long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno != ERANGE) return v;
  }
  if (scan::is_float_text(s)) return std::strtod(s.c_str(), nullptr);
  return s;
}

namespace {
void emit(YAML::Emitter& out, const nlohmann::ordered_json& j) {
  if (j.is_object()) {
    if (j.empty()) {
      out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
      return;
    }
    out << YAML::BeginMap;
    for (auto it = j.begin(); it != j.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      emit(out, it.value());
    }
    out << YAML::EndMap;
  } else if (j.is_array()) {
    if (j.empty()) {
      out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
      return;
    }
    out << YAML::BeginSeq;
    for (const auto& v : j) emit(out, v);
    out << YAML::EndSeq;
  } else if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    // Quote strings that YAML would otherwise read as another type (e.g. cpu: "1").
    static const std::set<std::string_view> k_words = {
        "true", "false", "True", "False", "TRUE", "FALSE", "null", "Null", "NULL",
        "~",    "yes",   "no",   "on",    "off",  "y",     "n",    ""};
    if (scan::looks_numeric(s) || k_words.count(s) != 0)
      out << YAML::DoubleQuoted << s;
    else
      out << s;
  } else if (j.is_boolean()) {
    out << (j.get<bool>() ? "true" : "false");
  } else if (j.is_null()) {
    out << YAML::Null;
  } else {
    out << dump_json(j);
  }
}
}  // namespace

std::string to_yaml(const nlohmann::ordered_json& json) {
  YAML::Emitter out;
  out.SetIndent(2);
  emit(out, json);
  std::string s = out.c_str();
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
}

}  // namespace flytecd::yaml_json
