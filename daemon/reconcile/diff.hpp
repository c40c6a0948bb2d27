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

// The names of a change's two sides, as every text line prints them: what FlyteAdmin holds and
// what Git declares (a plan, drift, history), or two Git revisions (plan --git).
struct Sides {
  const char* from;
  const char* to;
};
inline constexpr Sides k_live_git{"live", "Git"};
inline constexpr Sides k_base_head{"base", "head"};

// `~ path: live "24", Git "16" (file:line)`: `+` when the first side is unset, `-` when the
// second is (an unset side reads `(unset)`); the location when known; one line, control
// characters escaped. Drift, plans, apply, history and status all print a change this way.
std::string change_line(const FieldChange& c, Sides sides = k_live_git);

// A side's JSON text as a JSON value: null when unset; a value cut by the bound (not JSON any
// more) stays its text, and the change says `elided`.
nlohmann::ordered_json change_value(const std::string& text);
// {"path", "live", "git", "elided"?, "source"?} with typed values ("777", 4, {...}, null): what
// `-o json`, /status and the ledger's history hold of a change.
nlohmann::ordered_json change_json(const FieldChange& c);
// The change that change_json wrote, and the older history shape ("desired", values that are
// JSON text in strings); missing fields are unset.
FieldChange change_from_json(const nlohmann::json& j);

}  // namespace flytecd::reconcile
