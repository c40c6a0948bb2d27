#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flytecd::model {

// What went wrong with a document, as a stable machine-readable name (used by `-o json`,
// tests and the bad-input corpus).
enum class DiagKind {
  io_error,
  file_too_large,
  non_utf8,
  yaml_syntax,
  tab_indentation,
  duplicate_key,
  too_many_documents_in_file,
  too_many_documents,
  alias_expansion,
  nesting_too_deep,
  not_a_mapping,
  unknown_api_version,
  unknown_kind,
  unknown_field,
  missing_field,
  wrong_type,
  invalid_value,
  oneof_conflict,
  workflow_scope_without_domain,
  duplicate_scope,
  duplicate_object,
  bad_quantity,
  limits_below_defaults,
  bad_version,
  bad_package_uri,
  unsupported_attribute,
  policy_violation,
  unknown_project,
  too_many_nodes,  // a file or a revision over its YAML node bound (Limits)
};

std::string_view to_string(DiagKind kind);

enum class Severity { error, warning };

struct Location {
  std::string file;  // path relative to the repository root
  int line = 0;      // 1-based; 0 = whole file
  int column = 0;    // 1-based; 0 = unknown
};

std::string to_string(const Location& loc);

// One finding. `path` is the field path inside the document
// ("spec.taskResourceAttributes.limits.cpu").
struct Diagnostic {
  Severity severity = Severity::error;
  DiagKind kind = DiagKind::invalid_value;
  Location where;
  std::string path;
  std::string message;   // what was found / what is wrong
  std::string expected;  // what was expected (may be empty)
  Location related;      // e.g. the other definition of a duplicate (file empty when unused)
};

// YAML merge keys (`<<: *base`) are a YAML 1.1 extension yaml-cpp reads as a plain key named
// "<<"; flytecd refuses them with this message rather than "unknown field '<<'".
inline constexpr const char* k_merge_key_message = "YAML merge keys ('<<') are not supported";
inline constexpr const char* k_merge_key_expected =
    "the fields written out in this mapping (an alias of a whole value, *name, does work)";

// "file:line:col: error[kind]: path: message (expected: …) (see also file:line)"
std::string format(const Diagnostic& d);

using Diagnostics = std::vector<Diagnostic>;

inline bool has_errors(const Diagnostics& ds) {
  for (const auto& d : ds)
    if (d.severity == Severity::error) return true;
  return false;
}

}  // namespace flytecd::model
