#include "daemon/model/yaml_build.hpp"

#include <yaml.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace flytecd::model {
struct YamlNodeAccess {};
}  // namespace flytecd::model

namespace YAML {
// yaml-cpp wraps one of its internal nodes in a Node only in its own builder and in its `as_if`
// conversion templates, which Node declares friends. This specialization, for a type of
// flytecd's own, is the one place flytecd does the same: for the root of the tree it built from
// libyaml's events with yaml-cpp's public detail::node and detail::memory_holder.
template <>
struct as_if<flytecd::model::YamlNodeAccess, flytecd::model::YamlNodeAccess> {
  static Node wrap(detail::node& root, const detail::shared_memory_holder& memory) {
    return Node(root, memory);
  }
};
}  // namespace YAML

namespace flytecd::model {
namespace {

using Access = YAML::as_if<YamlNodeAccess, YamlNodeAccess>;

bool is_null_string(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

class Builder {
 public:
  explicit Builder(std::string_view text)
      : m_text(text), m_memory(std::make_shared<YAML::detail::memory_holder>()) {
    // libyaml counts columns in characters, yaml-cpp in bytes: for text that is not ASCII, the
    // byte offset of each character.
    for (unsigned char c : text)
      if (c >= 0x80) {
        const size_t bom = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;  // libyaml does not count it
        for (size_t i = bom; i < text.size(); ++i)
          if ((static_cast<unsigned char>(text[i]) & 0xC0u) != 0x80u)
            m_byte_of_char.push_back(static_cast<uint32_t>(i));
        m_byte_of_char.push_back(static_cast<uint32_t>(text.size()));
        break;
      }
  }

  BuiltDocument run() {
    BuiltDocument out;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
      out.ok = false;
      out.error = "libyaml could not start (out of memory)";
      return out;
    }
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(m_text.data()),
                                 m_text.size());
    for (bool done = false; !done && out.ok;) {
      yaml_event_t ev;
      if (!yaml_parser_parse(&parser, &ev)) {
        out.ok = false;
        out.error = parser.problem ? parser.problem : "syntax error";
        out.error_mark = mark(parser.problem_mark);
        break;
      }
      done = !on_event(ev, out);
      yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    if (out.ok && m_root) out.root = Access::wrap(*m_root, m_memory);
    return out;
  }

 private:
  // False once the first document has ended.
  bool on_event(const yaml_event_t& ev, BuiltDocument& out) {
    switch (ev.type) {
      case YAML_DOCUMENT_END_EVENT:
      case YAML_STREAM_END_EVENT:
        return false;
      case YAML_SCALAR_EVENT:
        scalar(ev);
        break;
      case YAML_SEQUENCE_START_EVENT:
        open(ev, YAML::NodeType::Sequence, ev.data.sequence_start.tag,
             ev.data.sequence_start.anchor,
             ev.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE);
        break;
      case YAML_MAPPING_START_EVENT:
        open(ev, YAML::NodeType::Map, ev.data.mapping_start.tag, ev.data.mapping_start.anchor,
             ev.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        if (!m_stack.empty()) {
          YAML::detail::node& done = *m_stack.back().node;
          m_stack.pop_back();
          attach(done);
        }
        break;
      case YAML_ALIAS_EVENT: {
        auto it = m_anchors.find(text_of(ev.data.alias.anchor));
        if (it == m_anchors.end()) {
          out.ok = false;
          out.error =
              "the referenced anchor '" + text_of(ev.data.alias.anchor) + "' is not defined";
          out.error_mark = mark(ev.start_mark);
          return false;
        }
        attach(*it->second);
        break;
      }
      default:
        break;
    }
    return true;
  }

  static std::string text_of(const yaml_char_t* s) {
    return s ? std::string(reinterpret_cast<const char*>(s)) : std::string();
  }

  YAML::Mark mark(const yaml_mark_t& m) const {
    YAML::Mark out;
    out.line = static_cast<int>(m.line);
    out.column = static_cast<int>(m.column);
    out.pos = static_cast<int>(m.index);
    if (!m_byte_of_char.empty() && m.index < m_byte_of_char.size() && m.column <= m.index) {
      out.pos = static_cast<int>(m_byte_of_char[m.index]);
      out.column = static_cast<int>(m_byte_of_char[m.index] - m_byte_of_char[m.index - m.column]);
    }
    return out;
  }

  YAML::detail::node& create(const yaml_event_t& ev, const yaml_char_t* anchor) {
    YAML::detail::node& n = m_memory->create_node();
    n.set_mark(mark(ev.start_mark));
    if (anchor) m_anchors[text_of(anchor)] = &n;
    return n;
  }

  void scalar(const yaml_event_t& ev) {
    const auto& s = ev.data.scalar;
    YAML::detail::node& n = create(ev, s.anchor);
    const bool plain = s.style == YAML_PLAIN_SCALAR_STYLE;
    std::string tag = text_of(s.tag);
    if (tag.empty()) tag = plain ? "?" : "!";
    std::string value(reinterpret_cast<const char*>(s.value), s.length);
    if (plain && tag == "?" && is_null_string(value)) {
      n.set_null();
    } else {
      n.set_scalar(value);
      n.set_tag(tag);
    }
    attach(n);
  }

  void open(const yaml_event_t& ev, YAML::NodeType::value type, const yaml_char_t* tag,
            const yaml_char_t* anchor, bool flow) {
    YAML::detail::node& n = create(ev, anchor);
    std::string t = text_of(tag);
    n.set_tag(t.empty() ? "?" : t);
    n.set_type(type);
    n.set_style(flow ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block);
    m_stack.push_back(Open{&n, nullptr});
  }

  // A finished node goes into the collection being built: a sequence's next item, a mapping's
  // key, or the value of its pending key; the first finished outside any collection is the root.
  void attach(YAML::detail::node& n) {
    if (m_stack.empty()) {
      if (!m_root) m_root = &n;
      return;
    }
    Open& top = m_stack.back();
    if (top.node->type() == YAML::NodeType::Sequence) {
      top.node->push_back(n, m_memory);
    } else if (!top.key) {
      top.key = &n;
    } else {
      top.node->insert(*top.key, n, m_memory);
      top.key = nullptr;
    }
  }

  struct Open {
    YAML::detail::node* node;
    YAML::detail::node* key;  // a mapping's key waiting for its value
  };
  std::string_view m_text;
  YAML::detail::shared_memory_holder m_memory;
  std::vector<uint32_t> m_byte_of_char;
  std::vector<Open> m_stack;
  std::map<std::string, YAML::detail::node*> m_anchors;
  YAML::detail::node* m_root = nullptr;
};

}  // namespace

BuiltDocument build_yaml_document(std::string_view text) { return Builder(text).run(); }

}  // namespace flytecd::model
