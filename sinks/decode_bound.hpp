#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/message.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/common/result.hpp"

// Bounding what decoding an untrusted protobuf message costs, before any of it is spent.
//
// Protobuf's wire format is dense: an empty sub-message in a repeated field is 2 bytes on the
// wire and a C++ object of 100+ bytes once decoded (4 million empty WorkflowTemplate.nodes: an
// 8 MB member, 8 KB gzip-compressed, decode to 570 MB). estimate_decode() walks the wire format
// once, without allocating, guided by the message's descriptor, and estimates from above what the
// C++ runtime would allocate for it: every sub-message (the size of its class), every repeated
// element's slot, every string and every unknown field. check_decode() refuses a message whose
// estimate is more than k_max_decode_amplification times its wire size (no message pyflyte writes
// comes near it), or more than the caller's bound (the package memory budget), with an error that
// names the figures; callers decode only after it passed (and after reserving the estimate from
// their memory budget, if they have one).

namespace flytecd::sinks {

struct DecodeEstimate {
  uint64_t bytes = 0;      // heap bytes the decoded message would hold, its own object included
  uint64_t elements = 0;   // sub-messages, repeated elements, strings and unknown fields
  bool malformed = false;  // not well-formed wire format for `type` (decoding would fail)
};

// Walks `wire` as a serialized `type`. Never allocates in proportion to the input; linear time.
DecodeEstimate estimate_decode(const google::protobuf::Descriptor& type, std::string_view wire);

// Decoded bytes per wire byte (as estimated) above which a message is refused whatever the
// budget: pyflyte's entities stay under ~11 (flytesnacks: 53 KB of .pb decode to 310 KB), a run
// of empty sub-messages reaches ~76 (an empty WorkflowTemplate.nodes entry: 2 bytes, ~150
// decoded). Denser-than-real inputs below it are still bounded by the budget.
inline constexpr uint64_t k_max_decode_amplification = 48;
// Small messages may exceed the ratio (a message's own object is counted whole).
inline constexpr uint64_t k_decode_amplification_floor = 64 * 1024;

// ok if a message of `wire_bytes` with this estimate may be decoded: within the amplification
// bound and within `max_bytes` (`max_key` names the setting behind it); else invalid_input
// "<what>: <why>; expected <what>". A malformed estimate is the caller's to refuse (decoding
// would fail, possibly only after allocating for everything before the fault).
Status check_decode(const DecodeEstimate& estimate, size_t wire_bytes, uint64_t max_bytes,
                    const std::string& max_key, const std::string& what);

}  // namespace flytecd::sinks
