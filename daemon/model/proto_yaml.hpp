#pragma once

#include <google/protobuf/message.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "daemon/model/diagnostic.hpp"
#include "sinks/types.hpp"

namespace flytecd::model {

// Converts a YAML value into protobuf's JSON mapping for `descriptor`, driven by protobuf's own
// descriptors (no hand-written schema): field names are accepted as protobuf's JSON parser
// accepts them (lowerCamel json_name or the snake_case proto name), unknown fields are rejected
// by name, scalar kinds are checked (ints, bools, enums by name or number, wrappers, Struct,
// Duration). Diagnostics carry file:line:col and the field path. Returns nullopt on any error.
std::optional<nlohmann::json> yaml_to_proto_json(const YAML::Node& node,
                                                 const google::protobuf::Descriptor* descriptor,
                                                 const std::string& file, const std::string& path,
                                                 Diagnostics& diags);

// The line of every field under `node` (a YAML value of message `desc`) by protobuf JSON path
// ("run.defaultQueue"; `prefix` empty at the top): YAML keys may be either name, map entries are
// fields, a list is one value. Only for documents that already validated.
void collect_field_lines(const YAML::Node& node, const google::protobuf::Descriptor* desc,
                         const std::string& prefix, sinks::FieldLines& out);

// Parses protobuf JSON into `msg` as protobuf's JSON parser does (unknown fields rejected).
// Returns an empty string on success, else the parser's message. The JSON yaml_to_proto_json
// writes is set directly through reflection (json_to_message_direct); anything else goes through
// protobuf's parser, whose result and error text stand.
std::string json_to_message(const nlohmann::json& json, google::protobuf::Message* msg);

// The direct path of json_to_message, exposed for its test: sets `msg` from objects, arrays,
// strings, integers, finite numbers and booleans, enums by name, string-keyed maps and the scalar
// wrappers, exactly as protobuf's JSON parser would. Returns false (and leaves `msg` partly set)
// on anything it does not take: nulls, other well-known types (Struct, Duration, ...), bytes,
// unknown names, a value out of its field's range, a second member of a oneof.
bool json_to_message_direct(const nlohmann::json& json, google::protobuf::Message* msg);

// Protobuf JSON (lowerCamel names, defaults omitted) of a message.
nlohmann::json message_to_json(const google::protobuf::Message& msg);

// Deterministic serialization, for hashing and equality of messages.
std::string canonical_bytes(const google::protobuf::Message& msg);

// Converts a plain YAML value to JSON (used for google.protobuf.Struct and free-form maps).
nlohmann::json yaml_to_json(const YAML::Node& node);

// Emits JSON as block-style YAML (keys in the JSON's order).
std::string json_to_yaml(const nlohmann::ordered_json& json);

// The `kind: Project` document of a project (what import and convert write).
nlohmann::ordered_json project_document(const sinks::ProjectState& p);

}  // namespace flytecd::model
