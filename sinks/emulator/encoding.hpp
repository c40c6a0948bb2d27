#pragma once

// Byte encodings and hashes used by the emulator (internal to sinks/emulator). Pure functions.

#include <optional>
#include <string>
#include <string_view>

namespace flytecd::sinks::emulator {

std::string md5_raw(std::string_view data);  // 16 raw bytes
std::string hex(std::string_view bytes);
std::string base64_encode(std::string_view bytes);                // standard alphabet, padded
std::optional<std::string> base64_decode(std::string_view text);  // nullopt if malformed
std::string base32_encode(
    std::string_view bytes);  // RFC 4648 standard alphabet, padded (Go's base32.StdEncoding)
// Percent-encodes everything but RFC 3986 unreserved characters.
std::string percent_encode(std::string_view segment);
std::optional<std::string> percent_decode(std::string_view text);  // nullopt if malformed

}  // namespace flytecd::sinks::emulator
