#pragma once

#include <google/protobuf/descriptor.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/model/diagnostic.hpp"

// YAML read the way flytectl reads an attribute file: sigs.k8s.io/yaml turns it into JSON, and
// encoding/json fills the protoc-gen-go structs. Keys are the snake_case protobuf names matched
// case-insensitively; a oneof member is not a key (it sits behind a Go interface); enums are
// numbers; a wrapper (BoolValue, …) is a struct {value: …}; a plain scalar headed for a string
// field is stringified (YAML 1.1 booleans such as `yes` become "true"). Pure; never throws.
namespace flytecd::model::flytectl {

// ASCII case-insensitive equality, as encoding/json matches a key to a field's tag.
bool fold_equal(std::string_view a, std::string_view b);
std::string fold(std::string_view s);

// The field of `d` that encoding/json fills from `key`, or nullptr.
const google::protobuf::FieldDescriptor* go_field(const google::protobuf::Descriptor* d,
                                                  std::string_view key);
// Those fields' names, comma-separated (for messages).
std::string go_field_names(const google::protobuf::Descriptor* d);

// What a YAML scalar headed for a Go string field becomes.
std::string go_string(const YAML::Node& scalar);
// YAML null: the Go field is left as it is.
bool is_null(const YAML::Node& n);
// "a mapping", "a list" or the quoted scalar (for messages).
std::string node_kind(const YAML::Node& n);

// Where a value of the converted message came from: its protobuf-JSON path (as `validate`
// names it, "defaults.cpu") to the flytectl key path and position.
struct Origin {
  std::string path;
  Location where;
};
using Origins = std::map<std::string, Origin>;

// The protobuf JSON of field `f`'s value `node` (`path`: its key path in the file, `jpath`: its
// protobuf-JSON path, both for diagnostics and `origins`). nullopt: errors were added to `diags`
// with file:line:col. A JSON null: the YAML was null (the field stays unset).
std::optional<nlohmann::json> read_go_field(const YAML::Node& node,
                                            const google::protobuf::FieldDescriptor* f,
                                            const std::string& file, const std::string& path,
                                            const std::string& jpath, Diagnostics& diags,
                                            Origins& origins);

}  // namespace flytecd::model::flytectl
