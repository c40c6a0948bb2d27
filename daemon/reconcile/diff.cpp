#include "daemon/reconcile/diff.hpp"

#include <google/protobuf/message.h>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/model/proto_yaml.hpp"

namespace flytecd::reconcile {
namespace {

std::string bounded(const nlohmann::json& v, size_t max_value, bool& elided) {
  if (v.is_null()) return "";
  std::string s = dump_json(v);
  if (s.size() > max_value) {
    // Cut on a UTF-8 boundary.
    size_t cut = max_value;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "…";
    elided = true;
  }
  return s;
}

void walk(const std::string& path, const nlohmann::json& a, const nlohmann::json& b,
          size_t max_value, std::vector<FieldChange>& out) {
  if (a == b) return;
  if (a.is_object() && b.is_object()) {
    // Union of keys, in order: those of a, then the ones only b has (nlohmann::json sorts).
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      walk(path.empty() ? it.key() : path + "." + it.key(), it.value(),
           other == b.end() ? nlohmann::json() : *other, max_value, out);
    }
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key()))
        walk(path.empty() ? it.key() : path + "." + it.key(), nlohmann::json(), it.value(),
             max_value, out);
    return;
  }
  if (a.is_object() && b.is_null()) {
    for (auto it = a.begin(); it != a.end(); ++it)
      walk(path.empty() ? it.key() : path + "." + it.key(), it.value(), nlohmann::json(), max_value,
           out);
    return;
  }
  if (a.is_null() && b.is_object()) {
    for (auto it = b.begin(); it != b.end(); ++it)
      walk(path.empty() ? it.key() : path + "." + it.key(), nlohmann::json(), it.value(), max_value,
           out);
    return;
  }
  FieldChange c;
  c.path = path.empty() ? "(value)" : path;
  c.before = bounded(a, max_value, c.elided);
  c.after = bounded(b, max_value, c.elided);
  out.push_back(std::move(c));
}

}  // namespace

std::vector<FieldChange> diff_json(const nlohmann::json& before, const nlohmann::json& after,
                                   size_t max_value) {
  std::vector<FieldChange> out;
  walk("", before, after, max_value, out);
  return out;
}

std::vector<FieldChange> diff_messages(const google::protobuf::Message* before,
                                       const google::protobuf::Message* after, size_t max_value) {
  const nlohmann::json a = before ? model::message_to_json(*before) : nlohmann::json();
  const nlohmann::json b = after ? model::message_to_json(*after) : nlohmann::json();
  return diff_json(a, b, max_value);
}

void locate(std::vector<FieldChange>& changes, const std::string& file, int line,
            const sinks::FieldLines& field_lines) {
  if (file.empty()) return;
  for (auto& c : changes) {
    int at = line;
    for (std::string path = c.path; !path.empty();) {
      if (const int l = field_lines.find(path); l > 0) {
        at = l;
        break;
      }
      const auto dot = path.rfind('.');
      path = dot == std::string::npos ? "" : path.substr(0, dot);
    }
    c.source = at > 0 ? file + ":" + std::to_string(at) : file;
  }
}

std::string change_line(const FieldChange& c, Sides sides) {
  const auto side = [](const std::string& v) { return v.empty() ? std::string("(unset)") : v; };
  const char* mark = c.before.empty() ? "+ " : c.after.empty() ? "- " : "~ ";
  std::string s = mark + c.path + ": " + sides.from + " " + side(c.before) + ", " + sides.to + " " +
                  side(c.after);
  if (c.elided) s += " (long values elided)";
  if (!c.source.empty()) s += " (" + c.source + ")";
  return scan::printable(s, 4096);
}

nlohmann::ordered_json change_value(const std::string& text) {
  if (text.empty()) return nullptr;
  auto v = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  return v.is_discarded() ? nlohmann::ordered_json(text) : v;
}

nlohmann::ordered_json change_json(const FieldChange& c) {
  nlohmann::ordered_json j;
  j["path"] = c.path;
  j["live"] = change_value(c.before);
  j["git"] = change_value(c.after);
  if (c.elided) j["elided"] = true;
  if (!c.source.empty()) j["source"] = c.source;
  return j;
}

FieldChange change_from_json(const nlohmann::json& j) {
  FieldChange c;
  if (!j.is_object()) return c;
  c.path = json_string(j, "path");
  c.source = json_string(j, "source");
  if (auto e = j.find("elided"); e != j.end() && e->is_boolean()) c.elided = e->get<bool>();
  const bool typed = j.contains("git");
  const auto text = [&](const char* key) -> std::string {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    if (!it->is_string()) return dump_json(*it);
    const std::string& v = it->get_ref<const std::string&>();
    // The older shape kept JSON text in a string; a value cut by the bound is its text either way.
    const bool cut = c.elided && v.size() >= 3 && v.compare(v.size() - 3, 3, "…") == 0;
    return !typed || cut ? v : dump_json(*it);
  };
  c.before = text("live");
  c.after = text(typed ? "git" : "desired");
  return c;
}

}  // namespace flytecd::reconcile
