#pragma once

// Edits of protobuf wire bytes the emulator stores (internal to sinks/emulator). Pure functions.
//
// A list of launch plans is the one answer whose size grows with what is registered (a
// no-change registration check lists thousands). Its rows are stored serialized; decoding each
// only to set two closure fields and encode it again was most of the emulator's work for that
// answer. These functions write the same message directly from the stored bytes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flytecd::sinks::emulator {

// The serialized admin.LaunchPlan that `blob` (a serialized admin.LaunchPlan, as the store keeps
// it) becomes with closure.state = `state` and closure.updated_at = `updated_at_ms`: what parsing
// the blob, setting those fields and serializing again gives, in the same field order, with
// every other byte of the blob kept as it is. nullopt when the blob is not in the shape protobuf
// writes (a field group, a truncated field, closure given twice, fields out of order at the top
// or in the closure): the caller then decodes it instead.
std::optional<std::string> launch_plan_with_state(std::string_view blob, int state,
                                                  int64_t updated_at_ms);

// Appends field `number` with length-delimited `payload` (a message, bytes or a string).
void append_length_delimited(std::string* out, uint32_t number, std::string_view payload);

}  // namespace flytecd::sinks::emulator
