#include "daemon/reconcile/render.hpp"

#include <array>
#include <map>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/model/proto_yaml.hpp"

namespace flytecd::reconcile {
namespace {

const char* sigil(Action a) {
  switch (a) {
    case Action::create:
      return "+";
    case Action::update:
      return "~";
    case Action::replace:
      return "±";
    case Action::remove:
      return "-";
    case Action::adopt:
      return "=";
  }
  return "?";
}

}  // namespace

std::string object_name(const Step& s) {
  if (s.kind == ObjectKind::project) return "project " + s.project->id;
  if (s.kind == ObjectKind::object) {
    // "settings/flyte/development/p" -> "settings flyte/development/p"
    const auto slash = s.key.find('/');
    return slash == std::string::npos ? s.key
                                      : s.key.substr(0, slash) + " " + s.key.substr(slash + 1);
  }
  const OverrideState* o = s.desired ? &*s.desired : s.live ? &*s.live : nullptr;
  if (!o) return s.key;
  return "override " + model::to_string(o->scope) + " " + model::attribute_type_name(o->type);
}

std::string md_escape(std::string_view text) {
  std::string out;
  for (char c : scan::printable(text, 4096)) {
    switch (c) {
      case '|':
        out += "&#124;";
        break;
      case '`':
        out += "&#96;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string step_line(const Step& s) {
  // One step is one line: a workflow name with a newline or ESC must not forge another.
  return scan::printable(std::string(sigil(s.action)) + " " + std::string(to_string(s.action)) +
                             " " + object_name(s) + " (" + s.reason + ")",
                         4096);
}

std::string summary_line(const Plan& p) {
  auto n = [&](Action a, ObjectKind k) { return std::to_string(p.count(a, k)); };
  std::string s = "projects: +" + n(Action::create, ObjectKind::project) + " ~" +
                  n(Action::update, ObjectKind::project) + " archive " +
                  n(Action::remove, ObjectKind::project);
  s += " · overrides: +" + n(Action::create, ObjectKind::override_attr) + " ~" +
       std::to_string(p.count(Action::update, ObjectKind::override_attr) +
                      p.count(Action::replace, ObjectKind::override_attr)) +
       " -" + n(Action::remove, ObjectKind::override_attr);
  // Generic objects, per kind: "settings: +1 ~0 -0".
  std::map<std::string, std::array<size_t, 3>> objects;
  for (const auto& st : p.steps) {
    if (st.kind != ObjectKind::object || st.action == Action::adopt) continue;
    auto& c = objects[sinks::object_kind_of(st.key)];
    ++c[st.action == Action::create ? 0 : st.action == Action::remove ? 2 : 1];
  }
  for (const auto& [kind, c] : objects)
    s += " · " + kind + ": +" + std::to_string(c[0]) + " ~" + std::to_string(c[1]) + " -" +
         std::to_string(c[2]);
  size_t adopt = p.count(Action::adopt, ObjectKind::project) +
                 p.count(Action::adopt, ObjectKind::override_attr) +
                 p.count(Action::adopt, ObjectKind::object);
  s += " · in sync " + std::to_string(p.in_sync) + " · adopt " + std::to_string(adopt) +
       " · drift " + std::to_string(p.drift.size()) + " · unmanaged " +
       std::to_string(p.unmanaged.size());
  if (!p.orphaned.empty()) s += " · not pruned " + std::to_string(p.orphaned.size());
  return s;
}

std::string render_text(const Plan& p, const std::string& target) {
  std::string out = "target: " + target + "\n";
  if (p.refused) out += "REFUSED: " + p.refusal + "\n";
  for (const auto& s : p.steps) {
    out += step_line(s) + "\n";
    for (const auto& c : step_changes(s)) out += "    " + change_line(c) + "\n";
  }
  for (const auto& d : p.drift) {
    out +=
        scan::printable(std::string("! drift ") + d.key + ": " + d.detail +
                            (d.healed ? " (will be reverted)" : " (self-heal off: reported only)"),
                        4096) +
        "\n";
    for (const auto& c : d.changes) out += "    " + change_line(c) + "\n";
  }
  for (const auto& u : p.unmanaged)
    out += "? unmanaged " + u + " (not in Git, never created by flytecd: left alone)\n";
  for (const auto& o : p.orphaned)
    out += "? not pruned " + o + " (removed from Git; prune is off)\n";
  // The summary and the verdict are the caller's (pass::plan_text): they count registrations
  // too, and the verdict is the value the exit code comes from.
  return out;
}

std::string render_markdown(const Plan& p, const std::string& target, size_t max_chars) {
  std::string head =
      "### flytecd plan\n\n**" + summary_line(p) + "**\n\nTarget: `" + target + "`\n\n";
  if (p.refused) head += "> :no_entry: **Refused:** " + p.refusal + "\n\n";
  if (!p.has_changes() && p.drift.empty()) head += "No changes.\n";
  std::string body;
  if (p.has_changes()) {
    body += "<details><summary>Steps (" + std::to_string(p.steps.size()) +
            ")</summary>\n\n| | object | why |\n|---|---|---|\n";
    for (const auto& s : p.steps) {
      std::string why = md_escape(s.reason);
      for (const auto& c : step_changes(s))
        why += "<br><code>" + md_escape(change_line(c)) + "</code>";
      body += std::string("| ") + sigil(s.action) + " " + std::string(to_string(s.action)) +
              " | <code>" + md_escape(object_name(s)) + "</code> | " + why + " |\n";
    }
    body += "\n</details>\n\n";
  }
  if (!p.drift.empty()) {
    body += "<details><summary>Drift (" + std::to_string(p.drift.size()) + ")</summary>\n\n";
    for (const auto& d : p.drift) {
      body += "- <code>" + md_escape(d.key) + "</code>: " + md_escape(d.detail) + "\n";
      for (const auto& c : d.changes)
        body += "  - <code>" + md_escape(change_line(c)) + "</code>\n";
    }
    body += "\n</details>\n\n";
  }
  if (!p.unmanaged.empty()) {
    body += "<details><summary>Unmanaged (" + std::to_string(p.unmanaged.size()) +
            ", left alone)</summary>\n\n";
    for (const auto& u : p.unmanaged) body += "- `" + u + "`\n";
    body += "\n</details>\n";
  }
  std::string out = head + body;
  if (out.size() > max_chars) {
    const std::string note = "\n\n> :warning: Truncated: the full plan is " +
                             std::to_string(out.size()) +
                             " characters; run `flytecd plan` locally for all of it.\n";
    out.resize(max_chars > note.size() ? max_chars - note.size() : 0);
    out += note;
  }
  return out;
}

nlohmann::ordered_json render_json(const Plan& p, const std::string& target) {
  nlohmann::ordered_json j;
  j["target"] = target;
  j["changes"] = p.has_changes();
  j["refused"] = p.refused;
  if (p.refused) j["refusal"] = p.refusal;
  j["summary"] = summary_line(p);
  j["steps"] = nlohmann::ordered_json::array();
  for (const auto& s : p.steps) {
    nlohmann::ordered_json o;
    o["action"] = std::string(to_string(s.action));
    o["kind"] = std::string(to_string(s.kind));
    o["key"] = s.key;
    o["reason"] = s.reason;
    o["drift"] = s.drift;
    if (s.desired)
      o["git"] = nlohmann::ordered_json::parse(dump_json(model::message_to_json(s.desired->value)));
    if (s.live)
      o["live"] = nlohmann::ordered_json::parse(dump_json(model::message_to_json(s.live->value)));
    o["changes"] = nlohmann::ordered_json::array();
    for (const auto& c : step_changes(s)) o["changes"].push_back(change_json(c));
    j["steps"].push_back(o);
  }
  j["drift"] = nlohmann::ordered_json::array();
  for (const auto& d : p.drift) {
    nlohmann::ordered_json o{{"key", d.key}, {"detail", d.detail}, {"healed", d.healed}};
    o["changes"] = nlohmann::ordered_json::array();
    for (const auto& c : d.changes) o["changes"].push_back(change_json(c));
    j["drift"].push_back(std::move(o));
  }
  j["unmanaged"] = p.unmanaged;
  j["notPruned"] = p.orphaned;
  j["inSync"] = p.in_sync;
  j["managed"] = p.managed_count;
  return j;
}

}  // namespace flytecd::reconcile
