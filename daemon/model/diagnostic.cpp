#include "daemon/model/diagnostic.hpp"

#include "daemon/common/scan.hpp"

namespace flytecd::model {

std::string_view to_string(DiagKind kind) {
  switch (kind) {
    case DiagKind::io_error:
      return "io_error";
    case DiagKind::file_too_large:
      return "file_too_large";
    case DiagKind::non_utf8:
      return "non_utf8";
    case DiagKind::yaml_syntax:
      return "yaml_syntax";
    case DiagKind::tab_indentation:
      return "tab_indentation";
    case DiagKind::duplicate_key:
      return "duplicate_key";
    case DiagKind::too_many_documents_in_file:
      return "too_many_documents_in_file";
    case DiagKind::too_many_documents:
      return "too_many_documents";
    case DiagKind::alias_expansion:
      return "alias_expansion";
    case DiagKind::nesting_too_deep:
      return "nesting_too_deep";
    case DiagKind::not_a_mapping:
      return "not_a_mapping";
    case DiagKind::unknown_api_version:
      return "unknown_api_version";
    case DiagKind::unknown_kind:
      return "unknown_kind";
    case DiagKind::unknown_field:
      return "unknown_field";
    case DiagKind::missing_field:
      return "missing_field";
    case DiagKind::wrong_type:
      return "wrong_type";
    case DiagKind::invalid_value:
      return "invalid_value";
    case DiagKind::oneof_conflict:
      return "oneof_conflict";
    case DiagKind::workflow_scope_without_domain:
      return "workflow_scope_without_domain";
    case DiagKind::duplicate_scope:
      return "duplicate_scope";
    case DiagKind::duplicate_object:
      return "duplicate_object";
    case DiagKind::bad_quantity:
      return "bad_quantity";
    case DiagKind::limits_below_defaults:
      return "limits_below_defaults";
    case DiagKind::bad_version:
      return "bad_version";
    case DiagKind::bad_package_uri:
      return "bad_package_uri";
    case DiagKind::unsupported_attribute:
      return "unsupported_attribute";
    case DiagKind::policy_violation:
      return "policy_violation";
    case DiagKind::unknown_project:
      return "unknown_project";
    case DiagKind::too_many_nodes:
      return "too_many_nodes";
  }
  return "invalid_value";
}

std::string to_string(const Location& loc) {
  std::string s = loc.file;
  if (loc.line > 0) {
    s += ":" + std::to_string(loc.line);
    if (loc.column > 0) s += ":" + std::to_string(loc.column);
  }
  return s;
}

std::string format(const Diagnostic& d) {
  std::string s = to_string(d.where) + ": ";
  s += d.severity == Severity::error ? "error" : "warning";
  s += "[" + std::string(to_string(d.kind)) + "]: ";
  if (!d.path.empty()) s += d.path + ": ";
  s += d.message;
  if (!d.expected.empty()) s += " (expected: " + d.expected + ")";
  if (!d.related.file.empty()) s += " (see also " + to_string(d.related) + ")";
  // One diagnostic is one line: a file name or value with a newline must not forge another.
  return scan::printable(s, 4096);
}

}  // namespace flytecd::model
