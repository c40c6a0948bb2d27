#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sinks/types.hpp"

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace flytecd::reconcile {

// One changed field between two values of the same message type.
struct FieldChange {
  std::string path;  // protobuf JSON names: "clusterResourceAttributes.attributes.projectQuotaCpu"
  std::string before;       // JSON text of the old / live value; "" when unset
  std::string after;        // JSON text of the new / desired value; "" when unset
  bool elided = false;      // a value was longer than the bound and was cut (see FieldChange docs)
  std::string source = "";  // "file:line" of the desired value in Git; "" when unknown or removed
};

// The fields that differ between `before` and `after` (either may be null: everything set in
// the other is a change), walked on protobuf's JSON mapping (the message's descriptors: field
// names as Flyte documents them, enums by name, 64-bit integers and quantities as strings).
// Objects recurse; a list that differs is one change of the whole list; map entries are fields.
// Values longer than `max_value` bytes are cut with "…" and `elided` set. Deterministic, pure.
std::vector<FieldChange> diff_messages(const google::protobuf::Message* before,
                                       const google::protobuf::Message* after,
                                       size_t max_value = 200);
// The same over two JSON documents (projects, registrations).
std::vector<FieldChange> diff_json(const nlohmann::json& before, const nlohmann::json& after,
                                   size_t max_value = 200);

// Sets each change's `source` from where Git declares the desired value: the line of the field,
// else of its closest declared parent, else the spec key's line. No-op for null. Pure.
void locate(std::vector<FieldChange>& changes, const std::string& file, int line,
            const sinks::FieldLines& field_lines);

// "~ path: before → after (file:line)" ("+ path: after" when added, "- path: before" when
// removed; the location when known); one line, control characters escaped.
std::string change_line(const FieldChange& c);
nlohmann::ordered_json change_json(const FieldChange& c);

}  // namespace flytecd::reconcile
