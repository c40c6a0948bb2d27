#include "daemon/model/settings_view.hpp"

#include <google/protobuf/util/json_util.h>

#include <algorithm>

#include "daemon/common/json_dump.hpp"
#include "daemon/model/documents.hpp"
#include "flyteidl2/settings/settings_definition.pb.h"

namespace flytecd::model {
namespace {

namespace pb = google::protobuf;
using Json = nlohmann::ordered_json;

constexpr int k_unset = 1;  // SETTING_STATE_UNSET
constexpr int k_value = 2;  // SETTING_STATE_VALUE

// A leaf: its JSON path and the fields that lead to it.
struct Leaf {
  std::string path;
  std::vector<const pb::FieldDescriptor*> fields;
};

void collect_leaves(const pb::Descriptor* d, const std::string& prefix,
                    std::vector<const pb::FieldDescriptor*>& trail, std::vector<Leaf>& out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (!f->message_type() || f->is_repeated()) continue;
    trail.push_back(f);
    const std::string path = prefix.empty() ? f->json_name() : prefix + "." + f->json_name();
    if (setting_state_field(f->message_type()))
      out.push_back(Leaf{path, trail});
    else if (trail.size() < 8)  // Settings nests two or three deep; a cycle cannot recurse forever
      collect_leaves(f->message_type(), path, trail, out);
    trail.pop_back();
  }
}

const std::vector<Leaf>& leaves() {
  static const std::vector<Leaf> k_leaves = [] {
    std::vector<Leaf> out;
    std::vector<const pb::FieldDescriptor*> trail;
    collect_leaves(flyteidl2::settings::Settings::descriptor(), "", trail, out);
    return out;
  }();
  return k_leaves;
}

// The leaf message inside `record`, or null when a message on the way is not set.
const pb::Message* leaf_in(const pb::Message* record, const Leaf& leaf) {
  const pb::Message* m = record;
  for (const auto* f : leaf.fields) {
    if (!m || !m->GetReflection()->HasField(*m, f)) return nullptr;
    m = &m->GetReflection()->GetMessage(*m, f);
  }
  return m;
}

// The leaf's value as JSON: its one field besides state and scope_level (printed even when it is
// the type's zero, a VALUE of false or ""), a map leaf's entries as an object.
Json leaf_value(const pb::Message& leaf) {
  std::string text;
  pb::util::JsonPrintOptions o;
  o.always_print_primitive_fields = true;
  o.preserve_proto_field_names = false;
  if (!pb::util::MessageToJsonString(leaf, &text, o).ok()) return Json();
  Json j = Json::parse(text, nullptr, false);
  if (!j.is_object()) return Json();
  j.erase("state");
  j.erase("scopeLevel");
  if (j.size() != 1) return j;
  Json v = j.begin().value();
  if (v.is_object() && v.size() == 1 && v.contains("entries") && v["entries"].is_object())
    return v["entries"];
  if (v.is_object() && v.empty() && j.begin().key() == "mapValue") return Json::object();
  return v;
}

bool map_leaf(const pb::Message& leaf) {
  const auto* f = leaf.GetDescriptor()->FindFieldByName("map_value");
  return f != nullptr && f->message_type() != nullptr;
}

Json null_or(const std::string& s) { return s.empty() ? Json() : Json(s); }

Json resolve_leaf(const Leaf& leaf, const std::vector<SettingsLevel>& levels) {
  Json out;
  out["path"] = leaf.path;
  out["state"] = "inherit";
  out["value"] = Json();
  out["level"] = Json();
  out["source"] = Json();
  bool is_map = false;
  Json entries = Json::object();
  for (const auto& lv : levels) {  // broadest first: a narrower decision replaces a broader one
    const pb::Message* m = leaf_in(lv.record, leaf);
    if (!m) continue;
    const int state = m->GetReflection()->GetEnumValue(*m, setting_state_field(m->GetDescriptor()));
    if (state != k_value && state != k_unset) continue;
    is_map = is_map || map_leaf(*m);
    out["level"] = lv.level;
    out["source"] = null_or(lv.source);
    if (lv.lines)
      if (const int line = lv.lines->fields.find(leaf.path); line > 0)
        out["source"] = lv.lines->file + ":" + std::to_string(line);
    if (state == k_unset) {
      out["state"] = "unset";
      out["value"] = Json();
      entries = Json::object();
      continue;
    }
    out["state"] = "value";
    Json v = leaf_value(*m);
    if (map_leaf(*m) && v.is_object()) {
      for (const auto& [k, e] : v.items())
        entries[k] = Json{{"value", e}, {"level", lv.level}, {"source", out["source"]}};
      Json merged = Json::object();
      for (const auto& [k, e] : entries.items()) merged[k] = e["value"];
      out["value"] = std::move(merged);
    } else {
      out["value"] = std::move(v);
    }
  }
  if (is_map) out["entries"] = std::move(entries);
  return out;
}

std::string shown(const Json& leaf) {
  const std::string state = leaf.value("state", "inherit");
  if (state == "inherit") return "inherit";
  if (state == "unset") return "unset";
  return dump_json(leaf["value"]);
}

}  // namespace

std::vector<SettingsLevel> settings_levels(const std::string& org, const std::string& domain,
                                           const std::string& project) {
  std::vector<SettingsLevel> out;
  out.push_back({"org", settings_object_key(org, "", ""), nullptr, ""});
  if (!domain.empty()) out.push_back({"domain", settings_object_key(org, domain, ""), nullptr, ""});
  if (!domain.empty() && !project.empty())
    out.push_back({"project", settings_object_key(org, domain, project), nullptr, ""});
  return out;
}

Json effective_settings(const std::vector<SettingsLevel>& levels) {
  Json doc;
  doc["levels"] = Json::array();
  for (const auto& lv : levels)
    doc["levels"].push_back(Json{{"level", lv.level},
                                 {"key", lv.key},
                                 {"record", lv.record != nullptr},
                                 {"source", null_or(lv.source)}});
  doc["settings"] = Json::array();
  for (const auto& leaf : leaves()) doc["settings"].push_back(resolve_leaf(leaf, levels));
  return doc;
}

std::string effective_settings_text(const Json& doc, const std::string& title, const Json* compare,
                                    const std::string& compare_name) {
  std::string out = "# " + title + "\n# levels (broadest first):";
  for (const auto& lv : doc["levels"]) {
    out += " " + lv.value("level", "") + " ";
    if (!lv.value("record", false))
      out += "(no record)";
    else
      out += lv["source"].is_string() ? lv["source"].get<std::string>() : std::string("(record)");
  }
  out += "\n";
  size_t width = 0;
  for (const auto& leaf : doc["settings"])
    width = std::max(width, leaf["path"].get<std::string>().size());
  for (const auto& leaf : doc["settings"]) {
    const std::string path = leaf["path"].get<std::string>();
    std::string line = path + std::string(width - path.size() + 2, ' ') + shown(leaf);
    if (leaf["level"].is_string()) {
      line += "  (" + leaf["level"].get<std::string>();
      if (leaf["source"].is_string()) line += ", " + leaf["source"].get<std::string>();
      line += ")";
    } else {
      line += "  (no level sets it: the server's default)";
    }
    if (compare) {
      for (const auto& other : (*compare)["settings"]) {
        if (other["path"] != leaf["path"]) continue;
        if (other["state"] != leaf["state"] || other["value"] != leaf["value"] ||
            other["level"] != leaf["level"])
          line += "  ≠ " + compare_name + ": " + shown(other) +
                  (other["level"].is_string() ? " (" + other["level"].get<std::string>() + ")"
                                              : std::string());
      }
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace flytecd::model
