#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>

// Plain YAML <-> JSON conversions shared by the model (documents) and sinks that write YAML
// documents (the ConfigMap). No schema: scalars are typed as YAML 1.2 core reads them. Pure.
namespace flytecd::yaml_json {

// Converts a plain YAML value to JSON: quoted scalars stay strings; unquoted true/false, integers
// and floats become JSON booleans and numbers; null stays null.
nlohmann::json to_json(const YAML::Node& node);

// Emits JSON as block-style YAML (keys in the JSON's order, indent 2, ends with a newline).
// Strings that YAML would read as another type (cpu: "1", "true", "") are double-quoted.
std::string to_yaml(const nlohmann::ordered_json& json);

}  // namespace flytecd::yaml_json
