#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace flytecd {

// The one way flytecd turns JSON into text. nlohmann's plain dump() throws type_error 316 on a
// string that is not valid UTF-8 (a registry's answer, a Latin-1 file name, a commit message);
// this never throws: an ill-formed sequence becomes U+FFFD. tests/deps/boundaries.sh (`dump`)
// checks that no other call of dump() exists in daemon/, sources/ or sinks/.
template <class Json>
std::string dump_json(const Json& j, int indent = -1, bool ensure_ascii = false) {
  return j.dump(indent, ' ', ensure_ascii, nlohmann::json::error_handler_t::replace);
}

// object[key] when it is a string, else "" (absent, null, or another type). nlohmann's value()
// throws type_error 302 on a wrong type, and answers from servers can have any type.
template <class Json>
std::string json_string(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->template get<std::string>() : std::string();
}

}  // namespace flytecd
