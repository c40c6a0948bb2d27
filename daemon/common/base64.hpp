#pragma once

// Base64 (RFC 4648 standard alphabet), the one implementation of the tree: HTTP Basic
// credentials, Docker config auths, known_hosts keys, sigstore bundles and the emulator's
// upload checksums.

#include <optional>
#include <string>
#include <string_view>

namespace flytecd::base64 {

// Standard alphabet, padded with '='.
std::string encode(std::string_view bytes);

// How a decoder treats '=' padding.
enum class Padding {
  // The length is a multiple of 4 and '=' stands only as the last one or two characters (Go's
  // base64.StdEncoding, which FlyteAdmin decodes with).
  required,
  // Trailing '=' may be missing (OpenSSH known_hosts, Docker config auths); where it is written
  // it must complete the last group of 4. A lone trailing character, which cannot encode a
  // byte, is still malformed.
  optional,
};

// The bytes `text` encodes; nullopt when it is malformed (a character outside the alphabet, or
// padding `padding` does not allow).
std::optional<std::string> decode(std::string_view text, Padding padding);

}  // namespace flytecd::base64
