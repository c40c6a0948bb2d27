#pragma once

// Fields of a protobuf message named by their JSON path ("run.defaultQueue": json_name of each
// singular message field on the way), through reflection only. Pure.

#include <google/protobuf/message.h>

#include <string>
#include <string_view>
#include <vector>

namespace flytecd::proto_paths {

// Clears the field at `path` (nothing when a message on the way is not set or a name is unknown).
void clear(google::protobuf::Message& m, std::string_view path);

// The paths of the fields `sent` sets that `kept` does not (recursing into singular messages
// both set): what a peer that stored `sent` and answered `kept` dropped. Sorted, deepest missing
// field first found per branch (a missing message is one path, not one per field inside it).
std::vector<std::string> lost(const google::protobuf::Message& sent,
                              const google::protobuf::Message& kept);

}  // namespace flytecd::proto_paths
