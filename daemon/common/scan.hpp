#pragma once

#include <string>
#include <string_view>

// Hand-written matchers for the small token grammars flytecd checks (Kubernetes names, OCI
// references, numbers, durations). Each is one linear pass with no recursion and no allocation,
// so it is safe on untrusted input of any length — std::regex's recursive matcher overflows the
// stack on long input (a 30,000-character version crashed validate). Pure and thread-safe.
namespace flytecd::scan {

inline bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
inline bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// [a-z0-9]([-a-z0-9]*[a-z0-9])? — the RFC 1123 label pattern, any length.
bool dns1123_label_pattern(std::string_view s);
// The pattern and at most 63 characters (k8s IsDNS1123Label).
bool is_dns1123_label(std::string_view s);
// Labels joined by '.', at most 253 characters (k8s IsDNS1123Subdomain).
bool is_dns1123_subdomain(std::string_view s);
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63 characters (the name part of a k8s
// qualified name, and a non-empty label value).
bool is_k8s_name_part(std::string_view s);
// [dns1123-subdomain '/'] name-part (k8s IsQualifiedName, used for label keys).
bool is_k8s_qualified_name(std::string_view s);
// Empty, or a name part (k8s IsValidLabelValue).
bool is_k8s_label_value(std::string_view s);

// [A-Za-z0-9._~-]+ (URL-safe without escaping).
bool is_url_safe(std::string_view s);
// sha256:<64 lowercase hex>.
bool is_sha256_digest(std::string_view s);
// [A-Za-z0-9_][A-Za-z0-9._-]{0,127} (OCI distribution tag).
bool is_oci_tag(std::string_view s);
// OCI distribution repository name: components [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)* joined by '/'.
bool is_oci_repository_pattern(std::string_view s);
// host[:port] with host [A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?, or [ipv6][:port]; port 1-5 digits.
bool is_host_port(std::string_view s);
// Host characters [A-Za-z0-9.-]+ with an optional :port of 1-5 digits.
bool is_loose_host_port(std::string_view s);

// [-+]?[0-9]+
bool is_integer_text(std::string_view s);
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_float_text(std::string_view s);
// [-+]?[0-9.]+([eE][-+]?[0-9]+)? — text YAML could read as a number.
bool looks_numeric(std::string_view s);
// -?[0-9]+(\.[0-9]{1,9})?s — protobuf's JSON form of google.protobuf.Duration.
bool is_proto_duration(std::string_view s);
// [A-Za-z0-9+/_-]*={0,2} — standard or URL-safe base64 text.
bool is_base64_text(std::string_view s);

// Untrusted text made safe to print in one line of a message or log: control characters
// (newline, carriage return, ESC, ...) and bytes that are not UTF-8 become \n, \r, \x1b, \xe9,
// and text longer than max_bytes is cut with "… (N bytes)" so a 60 KB value cannot flood a log
// or forge a line. The result is valid UTF-8.
std::string printable(std::string_view s, size_t max_bytes = 200);

}  // namespace flytecd::scan
