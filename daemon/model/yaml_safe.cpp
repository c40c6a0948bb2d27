#include "daemon/model/yaml_safe.hpp"

#include <yaml.h>

#include <unordered_map>

namespace flytecd::model {

Location location_of(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return Location{file, 0, 0};
  return Location{file, mark.line + 1, mark.column + 1};
}

Location location_of(const std::string& file, const YAML::Node& node) {
  return location_of(file, node.Mark());
}

size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0u) != 0x80u) return i;
      cp = (cp << 6) | (p[i + k] & 0x3Fu);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are invalid.
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

namespace {

Location offset_location(const std::string& file, std::string_view bytes, size_t offset) {
  int line = 1;
  int col = 1;
  for (size_t i = 0; i < offset && i < bytes.size(); ++i) {
    if (bytes[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return Location{file, line, col};
}

// First line (1-based, <= up_to_line) whose indentation contains a tab, or 0.
int tab_indented_line(std::string_view bytes, int up_to_line) {
  int line = 1;
  size_t i = 0;
  while (i < bytes.size() && line <= up_to_line) {
    size_t j = i;
    bool tab = false;
    while (j < bytes.size() && (bytes[j] == ' ' || bytes[j] == '\t')) {
      if (bytes[j] == '\t') tab = true;
      ++j;
    }
    bool content = j < bytes.size() && bytes[j] != '\n' && bytes[j] != '#';
    if (tab && content) return line;
    size_t nl = bytes.find('\n', i);
    if (nl == std::string_view::npos) break;
    i = nl + 1;
    ++line;
  }
  return 0;
}

// yaml-cpp is lenient in places (it accepts a quoted scalar left open at the end of the
// stream, for one); libyaml's strict scanner checks the syntax first.
bool strict_syntax_check(const std::string& file, std::string_view bytes, Diagnostics& diags) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return true;
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(bytes.data()),
                               bytes.size());
  bool ok = true;
  for (;;) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      ok = false;
      std::string msg = parser.problem ? parser.problem : "syntax error";
      if (parser.context) msg = std::string(parser.context) + ": " + msg;
      Location loc{file, static_cast<int>(parser.problem_mark.line) + 1,
                   static_cast<int>(parser.problem_mark.column) + 1};
      if (int tab_line = tab_indented_line(bytes, loc.line)) {
        diags.push_back(Diagnostic{Severity::error,
                                   DiagKind::tab_indentation,
                                   Location{file, tab_line, 1},
                                   "",
                                   "tab character in indentation",
                                   "indentation with spaces only",
                                   {}});
      } else {
        diags.push_back(Diagnostic{Severity::error,
                                   DiagKind::yaml_syntax,
                                   loc,
                                   "",
                                   "YAML syntax error: " + msg,
                                   "well-formed YAML",
                                   {}});
      }
      break;
    }
    bool done = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
    if (done) break;
  }
  yaml_parser_delete(&parser);
  return ok;
}

class Walker {
 public:
  Walker(const std::string& file, size_t file_bytes, const Limits& limits, Diagnostics& diags)
      : m_file(file), m_file_bytes(file_bytes), m_limits(limits), m_diags(diags) {}

  // Returns false once a bound is exceeded (the document must then be dropped).
  bool walk(const YAML::Node& node, int depth) {
    if (++m_count > m_limits.max_nodes_per_document) {
      // Without aliases every node costs at least one byte of source; more nodes than bytes
      // means the document is expanding aliases.
      bool aliases = m_count > m_file_bytes;
      m_diags.push_back(Diagnostic{
          Severity::error,
          aliases ? DiagKind::alias_expansion : DiagKind::invalid_value,
          location_of(m_file, node),
          "",
          aliases ? "YAML alias expansion exceeds " +
                        std::to_string(m_limits.max_nodes_per_document) + " nodes (alias bomb?)"
                  : "document has more than " + std::to_string(m_limits.max_nodes_per_document) +
                        " nodes",
          "at most " + std::to_string(m_limits.max_nodes_per_document) + " nodes per document",
          {}});
      return false;
    }
    if (depth > m_limits.max_depth) {
      m_diags.push_back(Diagnostic{Severity::error,
                                   DiagKind::nesting_too_deep,
                                   location_of(m_file, node),
                                   "",
                                   "nesting depth exceeds " + std::to_string(m_limits.max_depth),
                                   "at most " + std::to_string(m_limits.max_depth) + " levels",
                                   {}});
      return false;
    }
    if (node.IsSequence()) {
      for (const auto& child : node)
        if (!walk(child, depth + 1)) return false;
    } else if (node.IsMap()) {
      std::unordered_map<std::string, YAML::Mark> seen;
      for (const auto& kv : node) {
        if (kv.first.IsScalar()) {
          auto [it, inserted] = seen.emplace(kv.first.Scalar(), kv.first.Mark());
          if (!inserted) {
            m_diags.push_back(
                Diagnostic{Severity::error, DiagKind::duplicate_key, location_of(m_file, kv.first),
                           kv.first.Scalar(), "duplicate mapping key '" + kv.first.Scalar() + "'",
                           "each key at most once per mapping", location_of(m_file, it->second)});
            m_dup = true;
          }
        }
        if (!walk(kv.first, depth + 1) || !walk(kv.second, depth + 1)) return false;
      }
    }
    return true;
  }
  bool had_duplicates() const { return m_dup; }

 private:
  const std::string& m_file;
  size_t m_file_bytes;
  const Limits& m_limits;
  Diagnostics& m_diags;
  size_t m_count = 0;
  bool m_dup = false;
};

}  // namespace

std::vector<YamlDocument> parse_yaml_file(const std::string& file, std::string_view bytes,
                                          const Limits& limits, Diagnostics& diags) {
  std::vector<YamlDocument> out;
  if (bytes.size() > limits.max_file_bytes) {
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::file_too_large,
                               Location{file, 0, 0},
                               "",
                               "file is " + std::to_string(bytes.size()) + " bytes",
                               "at most " + std::to_string(limits.max_file_bytes) + " bytes",
                               {}});
    return out;
  }
  if (size_t bad = find_invalid_utf8(bytes); bad != std::string_view::npos) {
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::non_utf8,
                               offset_location(file, bytes, bad),
                               "",
                               "invalid UTF-8 byte sequence",
                               "UTF-8 encoded text",
                               {}});
    return out;
  }
  if (size_t nul = bytes.find('\0'); nul != std::string_view::npos) {
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::non_utf8,
                               offset_location(file, bytes, nul),
                               "",
                               "NUL byte in a text file",
                               "UTF-8 encoded text without NUL bytes",
                               {}});
    return out;
  }
  if (!strict_syntax_check(file, bytes, diags)) return out;
  std::vector<YAML::Node> nodes;
  try {
    nodes = YAML::LoadAll(std::string(bytes));
  } catch (const YAML::Exception& e) {
    Location loc = location_of(file, e.mark);
    if (int tab_line = tab_indented_line(bytes, loc.line > 0 ? loc.line : 1 << 30)) {
      diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::tab_indentation,
                                 Location{file, tab_line, 1},
                                 "",
                                 "tab character in indentation",
                                 "indentation with spaces only",
                                 {}});
    } else {
      diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::yaml_syntax,
                                 loc,
                                 "",
                                 "YAML syntax error: " + e.msg,
                                 "well-formed YAML",
                                 {}});
    }
    return out;
  } catch (const std::exception& e) {
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::yaml_syntax,
                               Location{file, 0, 0},
                               "",
                               std::string("YAML parse failed: ") + e.what(),
                               "well-formed YAML",
                               {}});
    return out;
  }
  if (nodes.size() > limits.max_documents_per_file) {
    diags.push_back(Diagnostic{
        Severity::error,
        DiagKind::too_many_documents_in_file,
        location_of(file, nodes[limits.max_documents_per_file]),
        "",
        "file holds " + std::to_string(nodes.size()) + " documents",
        "at most " + std::to_string(limits.max_documents_per_file) + " documents per file",
        {}});
    return out;
  }
  // A document that breaks a bound or repeats a key is dropped (its file already has an error);
  // the others are still checked so one pass reports every problem.
  for (const auto& node : nodes) {
    if (node.IsNull()) continue;  // empty document between separators
    Walker walker(file, bytes.size(), limits, diags);
    if (!walker.walk(node, 0) || walker.had_duplicates()) continue;
    out.push_back(YamlDocument{node, node.Mark().is_null() ? 1 : node.Mark().line + 1});
  }
  return out;
}

}  // namespace flytecd::model
