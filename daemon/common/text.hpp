#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Text that comes from outside (registry answers, file names, commit messages, API requests)
// is bytes; JSON, status and the ledger need UTF-8. Every external string goes through one of
// these on its way in, so nothing downstream meets a byte sequence it cannot encode. Pure,
// linear and thread-safe.
namespace flytecd::text {

// True when s is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, <= U+10FFFF).
bool valid_utf8(std::string_view s);

// The length (1-4) of the well-formed UTF-8 character starting at s[i], or 0 when the bytes
// there are not one. i < s.size().
std::size_t utf8_char_length(std::string_view s, std::size_t i);

// s with each ill-formed sequence replaced by U+FFFD (one per maximal ill-formed subpart, as
// the Unicode standard and WHATWG decoders do); valid input is returned unchanged.
std::string to_utf8_lossy(std::string_view s);

// ISO-8859-1 (Latin-1) bytes decoded to UTF-8: every byte is the code point of the same value.
std::string latin1_to_utf8(std::string_view s);

// The longest prefix of to_utf8_lossy(s) of at most max_bytes that ends on a character
// boundary: valid UTF-8, never half a character.
std::string cut_utf8(std::string_view s, std::size_t max_bytes);

// s with ASCII letters lower-cased (other bytes as they are).
std::string ascii_lower(std::string_view s);
// s in double quotes, with quotes and backslashes escaped (a string as Go's prototext prints it).
std::string quote_escaped(std::string_view s);
// Unix seconds as RFC 3339 in UTC, whole seconds ("2026-12-05T13:04:05Z").
std::string rfc3339_utc(int64_t unix_seconds);
// The same, or "" for 0 or less (a time that is not known).
std::string rfc3339_utc_if_known(int64_t unix_seconds);
// The value of a hexadecimal digit (either case), or -1 when c is not one.
int hex_value(char c);
// s without leading and trailing ASCII whitespace.
std::string_view trim(std::string_view s);
// The parts of s between occurrences of `sep` (an empty s is one empty part).
std::vector<std::string> split(std::string_view s, char sep);
// A whole decimal integer with an optional sign; nullopt when s is not one or overflows.
std::optional<int64_t> parse_int64(std::string_view s);

}  // namespace flytecd::text
