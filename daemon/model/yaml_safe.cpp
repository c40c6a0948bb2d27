#include "daemon/model/yaml_safe.hpp"

#include <yaml.h>

#include <unordered_map>

#include "daemon/model/yaml_build.hpp"

namespace flytecd::model {

namespace {
// Lines before the document being converted (for_each_yaml_document parses each document from
// its own part of the file, so yaml-cpp's marks count from the line that part starts on).
thread_local int t_line_offset = 0;

struct LineOffsetScope {
  explicit LineOffsetScope(int lines) : m_saved(t_line_offset) { t_line_offset = lines; }
  ~LineOffsetScope() { t_line_offset = m_saved; }
  LineOffsetScope(const LineOffsetScope&) = delete;
  LineOffsetScope& operator=(const LineOffsetScope&) = delete;

 private:
  int m_saved;
};
}  // namespace

Location location_of(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return Location{file, 0, 0};
  return Location{file, mark.line + 1 + t_line_offset, mark.column + 1};
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

// Where one document lies in the file: yaml-cpp converts each from its own part of the bytes.
struct DocumentSpan {
  size_t begin = 0;  // byte offset: the start of the line the document starts on (0 for the first)
  size_t end = 0;    // byte offset just past the document
  int line_offset = 0;  // lines before `begin`
};

// libyaml counts its marks in characters; the file is valid UTF-8 by now. Converts increasing
// character indexes to byte offsets and counts the line feeds passed on the way.
class CharToByte {
 public:
  explicit CharToByte(std::string_view bytes) : m_bytes(bytes) {
    if (bytes.starts_with("\xEF\xBB\xBF")) m_byte = 3;  // libyaml does not count the BOM
  }
  size_t byte_at(size_t char_index) {
    while (m_char < char_index && m_byte < m_bytes.size()) {
      const auto c = static_cast<unsigned char>(m_bytes[m_byte]);
      if (c == '\n') ++m_lines;
      m_byte += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      ++m_char;
    }
    return std::min(m_byte, m_bytes.size());
  }
  int lines_before() const { return m_lines; }  // line feeds before the last byte_at()

 private:
  std::string_view m_bytes;
  size_t m_char = 0, m_byte = 0;
  int m_lines = 0;
};

// What the strict pass learnt about a file it accepted.
struct Scanned {
  std::vector<DocumentSpan> documents;
  size_t nodes = 0;  // YAML nodes of the whole file, each alias counted as what it expands to
  bool revision_spent = false;  // refused because the revision's node budget ran out here
};

// libyaml's strict event parser runs first: yaml-cpp is lenient in places (it accepts a quoted
// scalar left open at the end of the stream, for one). The same pass bounds nesting depth, the
// size each document would have once aliases are expanded, the documents and nodes of the file and
// the nodes of the revision (`revision_nodes`: those of the files before this one), reporting the
// exact event where a bound is crossed — all before yaml-cpp builds any tree, so that yaml-cpp
// only ever sees input within bounds. It also records where each document lies.
class StrictPass {
 public:
  StrictPass(const std::string& file, std::string_view bytes, const Limits& limits,
             size_t revision_nodes, Diagnostics& diags, Scanned& scanned)
      : m_file(file),
        m_bytes(bytes),
        m_limits(limits),
        m_revision_nodes(revision_nodes),
        m_diags(diags),
        m_scanned(scanned),
        m_to_byte(bytes) {}

  bool run() {
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return true;
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(m_bytes.data()),
                                 m_bytes.size());
    bool ok = true;
    for (;;) {
      yaml_event_t ev;
      if (!yaml_parser_parse(&parser, &ev)) {
        syntax_error(parser);
        ok = false;
        break;
      }
      const yaml_event_type_t type = ev.type;
      const bool stop = m_over_documents ? (too_many_documents(ev), true) : !on_event(ev);
      yaml_event_delete(&ev);
      if (stop) {
        ok = false;
        break;
      }
      if (type == YAML_STREAM_END_EVENT) break;
    }
    yaml_parser_delete(&parser);
    return ok;
  }

 private:
  struct Open {
    size_t nodes = 0;    // expanded nodes inside this collection so far
    std::string anchor;  // anchor of the collection, if any
  };

  Location at(const yaml_mark_t& m) const {
    return Location{m_file, static_cast<int>(m.line) + 1, static_cast<int>(m.column) + 1};
  }
  static std::string anchor_of(const unsigned char* a) {
    return a ? std::string(reinterpret_cast<const char*>(a)) : std::string();
  }
  void add(size_t n) {
    m_total += n;
    m_scanned.nodes += n;
    for (auto& o : m_stack) o.nodes += n;
  }
  void error(DiagKind kind, const yaml_mark_t& mark, std::string msg, std::string expected) {
    m_diags.push_back(
        Diagnostic{Severity::error, kind, at(mark), "", std::move(msg), std::move(expected), {}});
  }

  void syntax_error(const yaml_parser_t& parser) {
    std::string msg = parser.problem ? parser.problem : "syntax error";
    Location loc = at(parser.problem_mark);
    const size_t off = m_to_byte.byte_at(parser.problem_mark.index);
    if (off < m_bytes.size() && m_bytes[off] == '\t') {
      m_diags.push_back(Diagnostic{Severity::error,
                                   DiagKind::tab_indentation,
                                   loc,
                                   "",
                                   "tab character where YAML expects indentation or a token",
                                   "indentation with spaces only",
                                   {}});
      return;
    }
    if (parser.context) {
      Location opened = at(parser.context_mark);
      msg = std::string(parser.context) + " that starts at line " + std::to_string(opened.line) +
            ": " + msg;
      // A construct left open until the end of the file is reported where it opened: the
      // end-of-stream position would point past the last line.
      if (off >= m_bytes.size()) loc = opened;
    }
    m_diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::yaml_syntax,
                                 loc,
                                 "",
                                 "YAML syntax error: " + msg,
                                 "well-formed YAML",
                                 {}});
  }

  // The document over the per-file bound is reported at its first node (or its end, if empty).
  void too_many_documents(const yaml_event_t& ev) {
    error(DiagKind::too_many_documents_in_file, ev.start_mark,
          "file holds more than " + std::to_string(m_limits.max_documents_per_file) +
              " documents (document " + std::to_string(m_documents) + " starts here)",
          "at most " + std::to_string(m_limits.max_documents_per_file) +
              " documents per file (split the file)");
  }

  void document_start(const yaml_event_t& ev) {
    m_total = 0;
    m_stack.clear();
    m_anchor_size.clear();
    if (++m_documents > m_limits.max_documents_per_file) {
      m_over_documents = true;
      return;
    }
    DocumentSpan span;
    if (m_documents > 1) {
      size_t b = m_to_byte.byte_at(ev.start_mark.index);
      span.line_offset = m_to_byte.lines_before();
      while (b > 0 && m_bytes[b - 1] != '\n') --b;
      span.begin = b;
    }
    m_scanned.documents.push_back(span);
  }

  // Records one event; false when it crosses a bound (reported).
  bool on_event(const yaml_event_t& ev) {
    switch (ev.type) {
      case YAML_DOCUMENT_START_EVENT:
        document_start(ev);
        break;
      case YAML_DOCUMENT_END_EVENT:
        if (!m_scanned.documents.empty())
          m_scanned.documents.back().end = m_to_byte.byte_at(ev.end_mark.index);
        break;
      case YAML_SCALAR_EVENT:
        add(1);
        if (ev.data.scalar.anchor) m_anchor_size[anchor_of(ev.data.scalar.anchor)] = 1;
        break;
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        add(1);
        Open o;
        o.anchor = anchor_of(ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                                                  : ev.data.mapping_start.anchor);
        m_stack.push_back(std::move(o));
        if (static_cast<int>(m_stack.size()) > m_limits.max_depth) {
          error(DiagKind::nesting_too_deep, ev.start_mark,
                "nesting depth exceeds " + std::to_string(m_limits.max_depth),
                "at most " + std::to_string(m_limits.max_depth) + " levels");
          return false;
        }
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        if (!m_stack.empty()) {
          if (!m_stack.back().anchor.empty())
            m_anchor_size[m_stack.back().anchor] = m_stack.back().nodes + 1;
          m_stack.pop_back();
        }
        break;
      case YAML_ALIAS_EVENT: {
        auto it = m_anchor_size.find(anchor_of(ev.data.alias.anchor));
        add(it == m_anchor_size.end() ? 1 : it->second);
        if (m_total > m_limits.max_nodes_per_document) {
          error(
              DiagKind::alias_expansion, ev.start_mark,
              "YAML alias expansion exceeds " + std::to_string(m_limits.max_nodes_per_document) +
                  " nodes (alias bomb?)",
              "at most " + std::to_string(m_limits.max_nodes_per_document) + " nodes per document");
          return false;
        }
        break;
      }
      default:
        break;
    }
    return within_node_bounds(ev);
  }

  // The document, file and revision node bounds after an event; false (reported) when crossed.
  bool within_node_bounds(const yaml_event_t& ev) {
    const Limits& l = m_limits;
    if (m_total > l.max_nodes_per_document) {
      error(DiagKind::invalid_value, ev.start_mark,
            "document has more than " + std::to_string(l.max_nodes_per_document) + " nodes",
            "at most " + std::to_string(l.max_nodes_per_document) + " nodes per document");
      return false;
    }
    if (m_scanned.nodes > l.max_nodes_per_file) {
      error(DiagKind::too_many_nodes, ev.start_mark,
            "file holds more than " + std::to_string(l.max_nodes_per_file) +
                " YAML nodes (aliases counted as what they expand to) by here",
            "at most " + std::to_string(l.max_nodes_per_file) + " nodes per file (split the file)");
      return false;
    }
    if (m_revision_nodes + m_scanned.nodes > l.max_nodes_per_revision) {
      error(DiagKind::too_many_nodes, ev.start_mark,
            "the revision holds more than " + std::to_string(l.max_nodes_per_revision) +
                " YAML nodes by here (" + std::to_string(m_revision_nodes) +
                " in the files read before this one); the files after it are not read",
            "at most " + std::to_string(l.max_nodes_per_revision) +
                " nodes in all documents of a revision");
      m_scanned.revision_spent = true;
      return false;
    }
    return true;
  }

  const std::string& m_file;
  std::string_view m_bytes;
  const Limits& m_limits;
  size_t m_revision_nodes;
  Diagnostics& m_diags;
  Scanned& m_scanned;
  CharToByte m_to_byte;
  std::vector<Open> m_stack;
  std::unordered_map<std::string, size_t> m_anchor_size;  // expanded size of each anchored node
  size_t m_total = 0;                                     // expanded nodes of the current document
  size_t m_documents = 0;                                 // documents started so far
  bool m_over_documents = false;
};

bool strict_pass(const std::string& file, std::string_view bytes, const Limits& limits,
                 size_t revision_nodes, Diagnostics& diags, Scanned& scanned) {
  return StrictPass(file, bytes, limits, revision_nodes, diags, scanned).run();
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

size_t for_each_yaml_document(const std::string& file, std::string_view bytes, const Limits& limits,
                              Diagnostics& diags, const DocumentFn& fn, NodeBudget* budget) {
  NodeBudget none;
  NodeBudget& b = budget ? *budget : none;
  b.last_file = 0;
  if (b.exhausted) return 0;
  if (bytes.size() > limits.max_file_bytes) {
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::file_too_large,
                               Location{file, 0, 0},
                               "",
                               "file is " + std::to_string(bytes.size()) + " bytes",
                               "at most " + std::to_string(limits.max_file_bytes) + " bytes",
                               {}});
    return 0;
  }
  if (size_t bad = find_invalid_utf8(bytes); bad != std::string_view::npos) {
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::non_utf8,
                               offset_location(file, bytes, bad),
                               "",
                               "invalid UTF-8 byte sequence",
                               "UTF-8 encoded text",
                               {}});
    return 0;
  }
  if (size_t nul = bytes.find('\0'); nul != std::string_view::npos) {
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::non_utf8,
                               offset_location(file, bytes, nul),
                               "",
                               "NUL byte in a text file",
                               "UTF-8 encoded text without NUL bytes",
                               {}});
    return 0;
  }
  Scanned scanned;
  const bool accepted = strict_pass(file, bytes, limits, b.spent, diags, scanned);
  b.last_file = scanned.nodes;
  if (scanned.revision_spent) b.exhausted = true;
  if (!accepted) return 0;
  b.spent += scanned.nodes;
  // One document at a time: its tree is built, checked, handed to `fn` and dropped before the
  // next one is built.
  size_t passed = 0;
  for (const DocumentSpan& span : scanned.documents) {
    LineOffsetScope lines(span.line_offset);
    YAML::Node node;
    try {
      BuiltDocument built = build_yaml_document(bytes.substr(span.begin, span.end - span.begin));
      if (!built.ok) {
        diags.push_back(Diagnostic{Severity::error,
                                   DiagKind::yaml_syntax,
                                   location_of(file, built.error_mark),
                                   "",
                                   "YAML syntax error: " + built.error,
                                   "well-formed YAML",
                                   {}});
        continue;
      }
      node = std::move(built.root);
    } catch (const std::exception& e) {
      diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::yaml_syntax,
                                 Location{file, span.line_offset + 1, 0},
                                 "",
                                 std::string("YAML parse failed: ") + e.what(),
                                 "well-formed YAML",
                                 {}});
      continue;
    }
    // A document that breaks a bound or repeats a key is dropped (its file already has an error);
    // the others are still checked so one pass reports every problem.
    if (node.IsNull()) continue;  // empty document between separators
    Walker walker(file, bytes.size(), limits, diags);
    if (!walker.walk(node, 0) || walker.had_duplicates()) continue;
    ++passed;
    fn(YamlDocument{node, location_of(file, node).line > 0 ? location_of(file, node).line
                                                           : span.line_offset + 1});
  }
  return passed;
}

std::vector<YamlDocument> parse_yaml_file(const std::string& file, std::string_view bytes,
                                          const Limits& limits, Diagnostics& diags) {
  std::vector<YamlDocument> out;
  for_each_yaml_document(file, bytes, limits, diags,
                         [&](const YamlDocument& doc) { out.push_back(doc); });
  return out;
}

}  // namespace flytecd::model
