#pragma once

// The decode bound lives beside the emulator that uses it too (sinks/decode_bound.hpp); the
// registration code names it as its own.
#include "sinks/decode_bound.hpp"

namespace flytecd::registration {
using sinks::check_decode;
using sinks::DecodeEstimate;
using sinks::estimate_decode;
using sinks::k_decode_amplification_floor;
using sinks::k_max_decode_amplification;
}  // namespace flytecd::registration
