#include "daemon/reconcile/review.hpp"

#include <map>
#include <set>

#include "daemon/model/proto_yaml.hpp"
#include "daemon/model/resolve.hpp"
#include "daemon/reconcile/state.hpp"

namespace flytecd::reconcile {
namespace {

const model::EffectiveAttribute* effective(const std::vector<model::EffectiveAttribute>& all,
                                           model::AttributeType t) {
  for (const auto& a : all)
    if (a.type == t) return &a;
  return nullptr;
}

nlohmann::json value_of(const model::EffectiveAttribute* a) {
  if (!a) return nullptr;
  auto j = model::message_to_json(a->value);
  auto key = model::attribute_json_key(a->type);
  return j.contains(key) ? j[key] : nlohmann::json::object();
}

std::string source_of(const model::EffectiveAttribute* a) {
  if (!a) return "none";
  std::string s(model::to_string(a->origin.level));
  if (!a->origin.where.file.empty()) s += " (" + model::to_string(a->origin.where) + ")";
  return s;
}

// Does the effective value at `wf` come (wholly or partly) from `scope`?
bool inherits_from(const model::EffectiveAttribute* a, const model::Scope& scope) {
  if (!a) return false;
  auto same = [&](const model::Origin& o) { return o.level == scope.level() && o.scope == scope; };
  if (same(a->origin)) return true;
  for (const auto& [k, o] : a->parts)
    if (same(o)) return true;
  return false;
}

std::string registration_line(const model::Registration& r) {
  return r.project + "/" + r.domain + " " + r.version + " from " + r.package;
}

}  // namespace

Review review(const model::Documents& base, const model::Documents& head) {
  Review out;
  model::Hierarchy hb(base), hh(head);
  State sb = desired_state(base), sh = desired_state(head);

  std::set<std::string> keys;
  for (const auto& [k, v] : sb.overrides) keys.insert(k);
  for (const auto& [k, v] : sh.overrides) keys.insert(k);
  for (const auto& k : keys) {
    auto b = sb.overrides.find(k);
    auto h = sh.overrides.find(k);
    const OverrideState& any = h != sh.overrides.end() ? h->second : b->second;
    char action;
    if (b == sb.overrides.end())
      action = '+', ++out.overrides_added;
    else if (h == sh.overrides.end())
      action = '-', ++out.overrides_removed;
    else if (model::canonical_bytes(b->second.value) != model::canonical_bytes(h->second.value))
      action = '~', ++out.overrides_changed;
    else
      continue;
    ReviewChange c;
    c.kind = "override";
    c.action = action;
    c.object = model::to_string(any.scope) + " " + model::attribute_type_name(any.type);
    const auto old_all = hb.resolve(any.scope);
    const auto new_all = hh.resolve(any.scope);
    c.old_effective = value_of(effective(old_all, any.type));
    c.new_effective = value_of(effective(new_all, any.type));
    c.old_source = source_of(effective(old_all, any.type));
    c.new_source = source_of(effective(new_all, any.type));
    if (any.scope.level() != model::Level::workflow) {
      // Workflow scopes declared in the repository that see this scope's value after the change.
      for (const auto& wf : hh.workflow_scopes(any.scope.project, any.scope.domain)) {
        const auto resolved = hh.resolve(wf);
        const model::Scope src = action == '-' ? model::Scope{} : any.scope;
        if (action != '-' && inherits_from(effective(resolved, any.type), src)) {
          ++c.inheriting_workflows;
          if (c.inheriting_examples.size() < 5)
            c.inheriting_examples.push_back(model::to_string(wf));
        }
      }
    }
    out.changes.push_back(std::move(c));
  }

  std::set<std::string> ids;
  for (const auto& [k, v] : sb.projects) ids.insert(k);
  for (const auto& [k, v] : sh.projects) ids.insert(k);
  for (const auto& id : ids) {
    auto b = sb.projects.find(id);
    auto h = sh.projects.find(id);
    ReviewChange c;
    c.kind = "project";
    c.object = "project " + id;
    if (b == sb.projects.end())
      c.action = '+', ++out.projects_added, c.detail = "RegisterProject " + id;
    else if (h == sh.projects.end())
      c.action = '-', ++out.projects_removed,
      c.detail = "archived (FlyteAdmin cannot delete projects)";
    else if (!(b->second == h->second))
      c.action = '~', ++out.projects_changed;
    else
      continue;
    out.changes.push_back(std::move(c));
  }

  std::map<std::string, const model::Registration*> rb, rh;
  for (const auto& r : base.registrations) rb[r.name] = &r;
  for (const auto& r : head.registrations) rh[r.name] = &r;
  std::set<std::string> names;
  for (const auto& [k, v] : rb) names.insert(k);
  for (const auto& [k, v] : rh) names.insert(k);
  for (const auto& n : names) {
    auto b = rb.find(n);
    auto h = rh.find(n);
    ReviewChange c;
    c.kind = "registration";
    c.object = "registration " + n;
    if (b == rb.end()) {
      c.action = '+';
      ++out.registrations_added;
      c.detail = "register " + registration_line(*h->second) + ", activate " +
                 std::string(model::to_string(h->second->activate));
    } else if (h == rh.end()) {
      c.action = '-';
      ++out.registrations_removed;
      ++out.deactivations;
      c.detail = "deactivate the launch plans of " + registration_line(*b->second) +
                 " (nothing is deleted)";
    } else if (registration_line(*b->second) != registration_line(*h->second) ||
               b->second->activate != h->second->activate) {
      c.action = '~';
      ++out.registrations_changed;
      c.detail = registration_line(*b->second) + " -> " + registration_line(*h->second);
    } else {
      continue;
    }
    out.changes.push_back(std::move(c));
  }
  return out;
}

std::string review_summary(const Review& r) {
  return "overrides: +" + std::to_string(r.overrides_added) + " ~" +
         std::to_string(r.overrides_changed) + " -" + std::to_string(r.overrides_removed) +
         " · projects: +" + std::to_string(r.projects_added) +
         (r.projects_changed ? " ~" + std::to_string(r.projects_changed) : "") +
         (r.projects_removed ? " -" + std::to_string(r.projects_removed) : "") +
         " · registrations: +" + std::to_string(r.registrations_added) +
         (r.registrations_changed ? " ~" + std::to_string(r.registrations_changed) : "") +
         " · deactivations: " + std::to_string(r.deactivations);
}

std::string render_review_text(const Review& r, const std::string& base_rev,
                               const std::string& head_rev) {
  std::string out = "plan " + base_rev + " -> " + head_rev + "\n";
  for (const auto& c : r.changes) {
    out += std::string(1, c.action) + " " + c.object + "\n";
    if (c.kind == "override") {
      out += "    before: " + c.old_effective.dump() + "  [" + c.old_source + "]\n";
      out += "    after:  " + c.new_effective.dump() + "  [" + c.new_source + "]\n";
      if (c.inheriting_workflows)
        out += "    inherited by " + std::to_string(c.inheriting_workflows) +
               " workflow scope(s) in the repository\n";
    } else if (!c.detail.empty()) {
      out += "    " + c.detail + "\n";
    }
  }
  out += review_summary(r) + "\n";
  out += r.empty() ? "no changes\n" : "changes pending\n";
  return out;
}

std::string render_review_markdown(const Review& r, const std::string& base_rev,
                                   const std::string& head_rev, size_t max_chars) {
  std::string head = "### flytecd plan\n\n**" + review_summary(r) + "**\n\n`" + base_rev + "` → `" +
                     head_rev + "`\n\n";
  if (r.empty()) return head + "No changes to Flyte.\n";
  std::string body;
  for (const auto& c : r.changes) {
    std::string block =
        "<details><summary><code>" + std::string(1, c.action) + " " + c.object + "</code>";
    if (c.inheriting_workflows)
      block += " — inherited by " + std::to_string(c.inheriting_workflows) + " workflow scope(s)";
    block += "</summary>\n\n";
    if (c.kind == "override") {
      block += "| | effective value | source |\n|---|---|---|\n";
      block += "| before | `" + c.old_effective.dump() + "` | " + c.old_source + " |\n";
      block += "| after | `" + c.new_effective.dump() + "` | " + c.new_source + " |\n";
      if (!c.inheriting_examples.empty()) {
        block += "\nInherited by: ";
        for (size_t i = 0; i < c.inheriting_examples.size(); ++i)
          block += (i ? ", " : "") + std::string("`") + c.inheriting_examples[i] + "`";
        if (c.inheriting_workflows > c.inheriting_examples.size())
          block += " and " + std::to_string(c.inheriting_workflows - c.inheriting_examples.size()) +
                   " more";
        block += "\n";
      }
    } else {
      block += c.detail + "\n";
    }
    block += "\n</details>\n\n";
    body += block;
  }
  std::string out = head + body;
  if (out.size() > max_chars) {
    const std::string note = "\n\n> :warning: Truncated: the full plan is " +
                             std::to_string(out.size()) + " characters (" +
                             std::to_string(r.changes.size()) +
                             " changes); run `flytecd plan` locally to see all of it.\n";
    size_t keep = max_chars > note.size() ? max_chars - note.size() : 0;
    // Cut at the end of a whole block so the Markdown stays well-formed.
    size_t cut = out.rfind("</details>\n\n", keep);
    out.resize(cut == std::string::npos ? keep : cut + 12);
    out += note;
  }
  return out;
}

nlohmann::ordered_json render_review_json(const Review& r, const std::string& base_rev,
                                          const std::string& head_rev) {
  nlohmann::ordered_json j;
  j["base"] = base_rev;
  j["head"] = head_rev;
  j["changes"] = !r.empty();
  j["summary"] = review_summary(r);
  j["items"] = nlohmann::ordered_json::array();
  for (const auto& c : r.changes) {
    nlohmann::ordered_json i;
    i["kind"] = c.kind;
    i["action"] = std::string(1, c.action);
    i["object"] = c.object;
    if (c.kind == "override") {
      i["before"] = nlohmann::ordered_json::parse(c.old_effective.dump());
      i["after"] = nlohmann::ordered_json::parse(c.new_effective.dump());
      i["beforeSource"] = c.old_source;
      i["afterSource"] = c.new_source;
      i["inheritingWorkflows"] = c.inheriting_workflows;
    }
    if (!c.detail.empty()) i["detail"] = c.detail;
    j["items"].push_back(i);
  }
  return j;
}

}  // namespace flytecd::reconcile
