#include "daemon/reconcile/review.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/model/resolve.hpp"
#include "daemon/reconcile/render.hpp"
#include "daemon/reconcile/state.hpp"

namespace flytecd::reconcile {
namespace {

// A change of an object of a document kind (Flyte 2 settings), as opposed to the three kinds the
// review has its own views of.
bool is_object(const ReviewChange& c) {
  return c.kind != "override" && c.kind != "project" && c.kind != "registration";
}

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

// The effective value's fields that differ, each with where its after value comes from (the part's
// origin for field-wise merges, else the attribute's).
std::vector<FieldChange> field_changes(const nlohmann::json& before, const nlohmann::json& after,
                                       const model::EffectiveAttribute* now) {
  auto fields = diff_json(before, after);
  for (auto& f : fields) {
    if (!now) {
      f.source = "none";
      continue;
    }
    auto part = now->parts.find(f.path.substr(0, f.path.find('.')));
    if (part == now->parts.end()) {
      f.source = source_of(now);
      continue;
    }
    f.source = std::string(model::to_string(part->second.level));
    if (!part->second.where.file.empty())
      f.source += " (" + model::to_string(part->second.where) + ")";
  }
  return fields;
}

// Whether the effective value of `type` at `at` differs between the two revisions.
bool effective_changes(const model::Hierarchy& before, const model::Hierarchy& after,
                       const model::Scope& at, model::AttributeType type) {
  return value_of(effective(before.resolve(at), type)) !=
         value_of(effective(after.resolve(at), type));
}

// Every scope a change at `scope` reaches: for a project-level row each configured domain whose
// effective value changes, the workflow scopes of the repository whose effective value changes,
// and for each domain reached, the workflows without a row of their own.
std::vector<Reach> blast_radius(const model::Hierarchy& before, const model::Hierarchy& after,
                                const model::Scope& scope, model::AttributeType type,
                                const std::vector<std::string>& domains) {
  std::vector<Reach> out;
  if (scope.level() == model::Level::workflow) return out;
  // CLUSTER_RESOURCE is applied per project-domain namespace by the cluster resource
  // controller: it reaches domains, never workflows.
  const bool per_namespace = type == flyteidl::admin::MatchableResource::CLUSTER_RESOURCE;
  std::vector<std::string> reached;
  if (scope.level() == model::Level::project) {
    for (const auto& d : domains)
      if (effective_changes(before, after, model::Scope{scope.project, d, ""}, type)) {
        reached.push_back(d);
        out.push_back(Reach{scope.project, d, "", false});
      }
  } else if (effective_changes(before, after, scope, type)) {
    reached.push_back(scope.domain);
  }
  if (per_namespace) {
    if (scope.level() != model::Level::project)
      for (const auto& d : reached) out.push_back(Reach{scope.project, d, "", false});
    return out;
  }
  std::set<model::Scope> workflows;
  for (const auto* h : {&before, &after})
    for (const auto& wf : h->workflow_scopes(scope.project, scope.domain)) workflows.insert(wf);
  for (const auto& wf : workflows)
    if (effective_changes(before, after, wf, type))
      out.push_back(Reach{wf.project, wf.domain, wf.workflow, false});
  for (const auto& d : reached) out.push_back(Reach{scope.project, d, "", true});
  return out;
}

// One row per project touched: counts by kind and action, and the scopes reached. Named
// blast-radius entries are scopes; "every other workflow of …" is not one (it stays in the item's
// details).
std::vector<ProjectRollup> rollup_of(const std::vector<ReviewChange>& changes) {
  std::map<std::string, ProjectRollup> rows;
  std::map<std::string, std::set<std::string>> scopes;
  for (const auto& c : changes) {
    auto& row = rows[c.project];
    row.project = c.project;
    auto& reached = scopes[c.project];
    if (c.kind == "override") {
      if (c.action == '+') ++row.overrides_created;
      if (c.action == '~') ++row.overrides_changed;
      if (c.action == '-') ++row.overrides_deleted;
      if (!c.scope.empty()) reached.insert(c.scope);
      for (const auto& s : c.reaches)
        if (s.rfind("every other workflow", 0) != 0) reached.insert(s);
    } else if (c.kind == "project") {
      row.overrides_deleted += c.retired_overrides.size();
      row.project_added = c.action == '+';
      row.project_archived = c.action == '-';
      row.project_changed = c.action == '~';
    } else if (c.kind == "registration") {
      ++row.registrations_changed;
      reached.insert(c.scope);
    } else {
      ++row.objects_changed;
      if (!c.scope.empty()) reached.insert(c.scope);
    }
  }
  std::vector<ProjectRollup> out;
  for (auto& [p, row] : rows) {
    row.scopes.assign(scopes[p].begin(), scopes[p].end());
    out.push_back(std::move(row));
  }
  return out;
}

std::string registration_line(const model::Registration& r) {
  return r.project + "/" + r.domain + " " + r.version + " from " + r.package;
}

// Who the registration's own policy says must have signed (empty without verify:).
std::string signer_policy(const model::Registration& r) {
  return r.verify ? r.verify->describe() : std::string();
}

}  // namespace

std::string to_string(const Reach& r) {
  if (r.other_workflows) return "every other workflow of " + r.project + " in " + r.domain;
  return r.project + "/" + r.domain + (r.workflow.empty() ? "" : "/" + r.workflow);
}

namespace {

// The override rows that differ between base and head, with their effective values and reach.
void review_overrides(Review& out, const model::Hierarchy& hb, const model::Hierarchy& hh,
                      const State& sb, const State& sh, const std::vector<std::string>& domains) {
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
    c.key = sinks::override_key(any.scope, any.type);
    const auto old_all = hb.resolve(any.scope);
    const auto new_all = hh.resolve(any.scope);
    c.old_effective = value_of(effective(old_all, any.type));
    c.new_effective = value_of(effective(new_all, any.type));
    c.old_source = source_of(effective(old_all, any.type));
    c.new_source = source_of(effective(new_all, any.type));
    c.fields = field_changes(c.old_effective, c.new_effective, effective(new_all, any.type));
    c.reach = blast_radius(hb, hh, any.scope, any.type, domains);
    for (const auto& r : c.reach) c.reaches.push_back(to_string(r));
    c.project = any.scope.project;
    // A domain or workflow row reaches its own scope when the effective value there changes (a
    // project row reaches its domains, which blast_radius names).
    if (any.scope.level() != model::Level::project && !c.fields.empty())
      c.scope = model::to_string(any.scope);
    if (any.scope.level() != model::Level::workflow &&
        any.type != flyteidl::admin::MatchableResource::CLUSTER_RESOURCE) {
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
}

// Projects added, changed or archived; an archived project takes its removed overrides along.
void review_projects(Review& out, const State& sb, const State& sh) {
  std::set<std::string> ids;
  for (const auto& [k, v] : sb.projects) ids.insert(k);
  for (const auto& [k, v] : sh.projects) ids.insert(k);
  for (const auto& id : ids) {
    auto b = sb.projects.find(id);
    auto h = sh.projects.find(id);
    ReviewChange c;
    c.kind = "project";
    c.object = "project " + id;
    c.key = sinks::project_key(id);
    c.project = id;
    if (b == sb.projects.end())
      c.action = '+', ++out.projects_added, c.detail = "RegisterProject " + id;
    else if (h == sh.projects.end())
      c.action = '-', ++out.projects_removed,
      c.detail = "archived (FlyteAdmin cannot delete projects)";
    else if (!(b->second == h->second))
      c.action = '~', ++out.projects_changed;
    else
      continue;
    if (c.action == '-') {
      // Its overrides go with it: one list in the project's item, not a table each.
      auto retired =
          std::stable_partition(out.changes.begin(), out.changes.end(), [&](const ReviewChange& o) {
            return !(o.kind == "override" && o.action == '-' && o.project == id);
          });
      for (auto it = retired; it != out.changes.end(); ++it)
        c.retired_overrides.push_back(it->object);
      out.changes.erase(retired, out.changes.end());
      if (!c.retired_overrides.empty())
        c.detail += "; its " + std::to_string(c.retired_overrides.size()) +
                    " override(s) are removed with it";
    }
    out.changes.push_back(std::move(c));
  }
}

void review_registrations(Review& out, const model::Documents& base, const model::Documents& head) {
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
    {
      const model::Registration& any = b != rb.end() ? *b->second : *h->second;
      c.key = "registration/" + any.project + "/" + any.domain + "/" + any.name;
    }
    if (b == rb.end()) {
      c.action = '+';
      ++out.registrations_added;
      c.detail = "register " + registration_line(*h->second) + ", activate " +
                 std::string(model::to_string(h->second->activate));
      if (!signer_policy(*h->second).empty())
        c.detail += ", signed with " + signer_policy(*h->second);
    } else if (h == rh.end()) {
      c.action = '-';
      ++out.registrations_removed;
      ++out.deactivations;
      c.detail = "deactivate the launch plans of " + registration_line(*b->second) +
                 " (nothing is deleted)";
    } else if (registration_line(*b->second) != registration_line(*h->second) ||
               b->second->activate != h->second->activate ||
               signer_policy(*b->second) != signer_policy(*h->second)) {
      c.action = '~';
      ++out.registrations_changed;
      c.detail = registration_line(*b->second) + " -> " + registration_line(*h->second);
      const std::string was = signer_policy(*b->second), now = signer_policy(*h->second);
      if (was != now)
        c.detail += "; SIGNER POLICY CHANGES: " + (was.empty() ? "none" : was) + " -> " +
                    (now.empty() ? "none (the package is no longer verified)" : now);
      else if (!now.empty())
        c.detail += ", signed with " + now;
    } else {
      continue;
    }
    const model::Registration& now = h != rh.end() ? *h->second : *b->second;
    c.project = now.project;
    c.scope = now.project + "/" + now.domain;
    out.changes.push_back(std::move(c));
  }
}

// Objects of document kinds (Flyte 2 settings): each key created, changed field by field (with
// the head's file:line), or removed. A key "<kind>/<org>/<domain>/<project>" belongs to its
// project, and reaches its domain/project scope (the org's and a domain's records: "" project).
void review_objects(Review& out, const State& sb, const State& sh) {
  std::set<std::string> keys;
  for (const auto& [k, v] : sb.objects) keys.insert(k);
  for (const auto& [k, v] : sh.objects) keys.insert(k);
  for (const auto& key : keys) {
    const auto b = sb.objects.find(key), h = sh.objects.find(key);
    const sinks::ObjectValue* before = b != sb.objects.end() ? &b->second : nullptr;
    const sinks::ObjectValue* after = h != sh.objects.end() ? &h->second : nullptr;
    ReviewChange c;
    c.kind = after ? after->kind : before->kind;
    c.key = key;
    c.fields =
        diff_messages(before ? before->value.get() : nullptr, after ? after->value.get() : nullptr);
    if (c.fields.empty()) continue;
    if (after && after->source)
      locate(c.fields, after->source->file, after->source->line, after->source->fields);
    c.action = !before ? '+' : !after ? '-' : '~';
    auto& counts = out.objects[c.kind];
    ++(c.action == '+' ? counts.added : c.action == '-' ? counts.removed : counts.changed);
    const std::string rest = key.substr(key.find('/') + 1);  // org/domain/project
    c.object = c.kind + " " + rest;
    const auto first = rest.find('/'), second = rest.find('/', first + 1);
    if (first != std::string::npos && second != std::string::npos) {
      c.project = rest.substr(second + 1);
      const std::string domain = rest.substr(first + 1, second - first - 1);
      c.scope = c.project.empty() ? domain : c.project + "/" + domain;
    }
    if (c.project.empty()) c.project = "(" + rest.substr(0, first) + ")";  // an org's records
    out.changes.push_back(std::move(c));
  }
}

}  // namespace

Review review(const model::Documents& base, const model::Documents& head,
              const std::vector<std::string>& domains) {
  Review out;
  const model::Hierarchy hb(base), hh(head);
  const State sb = desired_state(base), sh = desired_state(head);
  review_overrides(out, hb, hh, sb, sh, domains);
  review_projects(out, sb, sh);
  review_registrations(out, base, head);
  review_objects(out, sb, sh);
  out.rollup = rollup_of(out.changes);
  return out;
}

namespace {
// " · settings: +1 ~2 -0" for each kind of object the change touches.
std::string objects_summary(const Review& r) {
  std::string out;
  for (const auto& [kind, n] : r.objects)
    out += " · " + kind + ": +" + std::to_string(n.added) + " ~" + std::to_string(n.changed) +
           " -" + std::to_string(n.removed);
  return out;
}
}  // namespace

std::string review_summary(const Review& r) {
  return "overrides: +" + std::to_string(r.overrides_added) + " ~" +
         std::to_string(r.overrides_changed) + " -" + std::to_string(r.overrides_removed) +
         " · projects: +" + std::to_string(r.projects_added) +
         (r.projects_changed ? " ~" + std::to_string(r.projects_changed) : "") +
         (r.projects_removed ? " -" + std::to_string(r.projects_removed) : "") +
         " · registrations: +" + std::to_string(r.registrations_added) +
         (r.registrations_changed ? " ~" + std::to_string(r.registrations_changed) : "") +
         " · deactivations: " + std::to_string(r.deactivations) + objects_summary(r);
}

namespace {

std::string field_line(const FieldChange& f) {
  FieldChange shown = f;
  shown.source.clear();
  return change_line(shown, k_base_head) + "  [" + scan::printable(f.source) + "]";
}

std::string reaches_text(const ReviewChange& c) {
  std::string out;
  for (size_t i = 0; i < c.reaches.size(); ++i) out += (i ? ", " : "") + c.reaches[i];
  return out;
}

// One change as Markdown: heading, field table, blast radius; `collapse` wraps it in <details>.
std::string change_markdown(const ReviewChange& c) {
  const std::string title =
      "<code>" + md_escape(std::string(1, c.action) + " " + c.object) + "</code>";
  std::string body;
  if (is_object(c)) {
    body += "| field | before | after | declared at |\n|---|---|---|---|\n";
    for (const auto& f : c.fields)
      body += "| <code>" + md_escape(f.path) + "</code> | " +
              (f.before.empty() ? "_unset_" : "<code>" + md_escape(f.before) + "</code>") + " | " +
              (f.after.empty() ? "_unset_" : "<code>" + md_escape(f.after) + "</code>") + " | " +
              md_escape(f.source) + (f.elided ? " (long values elided)" : "") + " |\n";
  } else if (c.kind == "override") {
    if (c.fields.empty()) {
      body += "No effective change at this scope (the value is shadowed or equal).\n";
    } else {
      body += "| field | before | after | after comes from |\n|---|---|---|---|\n";
      for (const auto& f : c.fields)
        body += "| <code>" + md_escape(f.path) + "</code> | " +
                (f.before.empty() ? "_unset_" : "<code>" + md_escape(f.before) + "</code>") +
                " | " + (f.after.empty() ? "_unset_" : "<code>" + md_escape(f.after) + "</code>") +
                " | " + md_escape(f.source) + (f.elided ? " (long values elided)" : "") + " |\n";
    }
    if (!c.reaches.empty()) {
      body += "\n**Reaches:** ";
      for (size_t i = 0; i < c.reaches.size(); ++i) {
        const bool named = c.reaches[i].rfind("every other workflow", 0) != 0;
        body += (i ? ", " : "") +
                (named ? "<code>" + md_escape(c.reaches[i]) + "</code>" : md_escape(c.reaches[i]));
      }
      body += "\n";
    }
  } else {
    body += md_escape(c.detail) + "\n";
    if (!c.retired_overrides.empty()) {
      body += "\n";
      for (const auto& o : c.retired_overrides) body += "- <code>" + md_escape(o) + "</code>\n";
    }
  }
  // Short items are shown open; only long ones (many fields, a wide radius) are collapsed.
  constexpr size_t k_open_max_chars = 1500;
  constexpr size_t k_open_max_rows = 8;
  if (body.size() <= k_open_max_chars && c.fields.size() <= k_open_max_rows)
    return "#### " + title + "\n\n" + body + "\n";
  return "<details><summary>" + title + " — " + std::to_string(c.fields.size()) +
         " field(s), reaches " + std::to_string(c.reaches.size()) + " scope(s)</summary>\n\n" +
         body + "\n</details>\n\n";
}

std::string project_record(const ProjectRollup& p) {
  if (p.project_added) return "added";
  if (p.project_archived) return "archived";
  if (p.project_changed) return "changed";
  return "—";
}

// The per-project rollup table; long scope lists and many projects are cut with a count so the
// head of the comment stays short.
std::string rollup_markdown(const std::vector<ProjectRollup>& rows) {
  constexpr size_t k_max_rows = 50;
  constexpr size_t k_max_scopes = 5;
  std::string out =
      "| project | overrides | project record | registrations | scopes reached |\n"
      "|---|---|---|---|---|\n";
  for (size_t i = 0; i < rows.size() && i < k_max_rows; ++i) {
    const auto& p = rows[i];
    std::string scopes;
    for (size_t k = 0; k < p.scopes.size() && k < k_max_scopes; ++k)
      scopes += (k ? ", " : "") + ("<code>" + md_escape(p.scopes[k]) + "</code>");
    if (p.scopes.size() > k_max_scopes)
      scopes += " and " + std::to_string(p.scopes.size() - k_max_scopes) + " more";
    out += "| <code>" + md_escape(p.project) + "</code> | +" + std::to_string(p.overrides_created) +
           " ~" + std::to_string(p.overrides_changed) + " -" + std::to_string(p.overrides_deleted) +
           " | " + project_record(p) + " | " + std::to_string(p.registrations_changed) + " | " +
           (scopes.empty() ? "—" : scopes) + " |\n";
  }
  if (rows.size() > k_max_rows)
    out += "\n…and " + std::to_string(rows.size() - k_max_rows) + " more project(s).\n";
  return out + "\n";
}

}  // namespace

std::string render_review_text(const Review& r, const ReviewRevision& base,
                               const ReviewRevision& head) {
  auto line = [](const char* which, const ReviewRevision& rev) {
    std::string out = std::string(which) + " " + rev.name;
    if (!rev.commit.empty()) out += " = " + rev.commit.substr(0, 12);
    return scan::printable(out, 4096) + "\n";
  };
  std::string out = line("base", base) + line("head", head);
  for (const auto& c : r.changes) {
    out += scan::printable(std::string(1, c.action) + " " + c.object, 4096) + "\n";
    if (is_object(c)) {
      for (const auto& f : c.fields) out += "    " + field_line(f) + "\n";
    } else if (c.kind == "override") {
      for (const auto& f : c.fields) out += "    " + field_line(f) + "\n";
      if (c.fields.empty()) out += "    no effective change at this scope\n";
      if (!c.reaches.empty())
        out += "    reaches: " + scan::printable(reaches_text(c), 4096) + "\n";
    } else if (!c.detail.empty()) {
      out += "    " + scan::printable(c.detail, 4096) + "\n";
      for (const auto& o : c.retired_overrides) out += "    - " + scan::printable(o, 4096) + "\n";
    }
  }
  out += review_summary(r) + "\n";
  out += r.empty() ? "no changes\n" : "changes pending\n";
  return out;
}

std::string render_review_markdown(const Review& r, const ReviewRevision& base_rev,
                                   const ReviewRevision& head_rev, size_t max_chars) {
  auto named = [](const char* which, const ReviewRevision& rev) {
    if (rev.commit.empty()) return "<code>" + md_escape(rev.name) + "</code>";
    return std::string(which) + " <code>" + md_escape(rev.name) + "</code> = <code>" +
           md_escape(rev.commit.substr(0, 12)) + "</code>";
  };
  std::string head = "### flytecd plan\n\n**" + review_summary(r) + "**\n\n" +
                     named("base", base_rev) + " → " + named("head", head_rev) + "\n\n";
  if (r.empty()) return head + "No changes to Flyte.\n";
  head += rollup_markdown(r.rollup);
  std::vector<std::string> items;
  size_t total = head.size();
  for (const auto& c : r.changes) total += items.emplace_back(change_markdown(c)).size();
  std::string out = head;
  if (total <= max_chars) {
    for (const auto& i : items) out += i;
    return out;
  }
  const std::string note = "\n> :warning: Truncated: the full plan is " + std::to_string(total) +
                           " characters (" + std::to_string(r.changes.size()) +
                           " changes); run `flytecd plan` locally to see all of it.\n";
  // Whole items only, so the Markdown stays well-formed.
  const size_t keep = max_chars > note.size() ? max_chars - note.size() : 0;
  for (const auto& i : items) {
    if (out.size() + i.size() > keep) break;
    out += i;
  }
  if (out.size() > keep) out.resize(keep);
  return out + note;
}

namespace {
// Field changes as JSON, before/after named as the two revisions.
nlohmann::ordered_json fields_json(const std::vector<FieldChange>& fields) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& f : fields) {
    auto fj = change_json(f);
    fj["before"] = fj["live"];
    fj["after"] = fj["git"];
    fj.erase("live");
    fj.erase("git");
    out.push_back(std::move(fj));
  }
  return out;
}
}  // namespace

nlohmann::ordered_json render_review_json(const Review& r, const ReviewRevision& base_rev,
                                          const ReviewRevision& head_rev) {
  nlohmann::ordered_json j;
  j["base"] = {{"name", base_rev.name}, {"commit", base_rev.commit}};
  j["head"] = {{"name", head_rev.name}, {"commit", head_rev.commit}};
  j["changes"] = !r.empty();
  j["summary"] = review_summary(r);
  j["rollup"] = nlohmann::ordered_json::array();
  for (const auto& p : r.rollup) {
    nlohmann::ordered_json row;
    row["project"] = p.project;
    row["overridesCreated"] = p.overrides_created;
    row["overridesChanged"] = p.overrides_changed;
    row["overridesDeleted"] = p.overrides_deleted;
    row["projectAdded"] = p.project_added;
    row["projectArchived"] = p.project_archived;
    row["projectChanged"] = p.project_changed;
    row["registrationsChanged"] = p.registrations_changed;
    row["objectsChanged"] = p.objects_changed;
    row["scopes"] = p.scopes;
    j["rollup"].push_back(std::move(row));
  }
  j["items"] = nlohmann::ordered_json::array();
  for (const auto& c : r.changes) {
    nlohmann::ordered_json i;
    i["kind"] = c.kind;
    // The words plan --live and apply use for the same action (issue 21: one vocabulary).
    i["action"] = c.action == '+' ? "create" : c.action == '-' ? "delete" : "update";
    i["object"] = c.object;
    i["key"] = c.key;
    if (c.kind == "override") {
      i["before"] = nlohmann::ordered_json::parse(dump_json(c.old_effective));
      i["after"] = nlohmann::ordered_json::parse(dump_json(c.new_effective));
      i["beforeSource"] = c.old_source;
      i["afterSource"] = c.new_source;
      i["inheritingWorkflows"] = c.inheriting_workflows;
      i["fields"] = fields_json(c.fields);
      // Data: one object per scope reached; the prose is the text and markdown's.
      i["reaches"] = nlohmann::ordered_json::array();
      for (const auto& reach : c.reach) {
        nlohmann::ordered_json o{{"project", reach.project}, {"domain", reach.domain}};
        if (!reach.workflow.empty()) o["workflow"] = reach.workflow;
        if (reach.other_workflows) o["otherWorkflows"] = true;
        i["reaches"].push_back(std::move(o));
      }
    }
    if (is_object(c)) i["fields"] = fields_json(c.fields);
    if (!c.detail.empty()) i["detail"] = c.detail;
    if (!c.retired_overrides.empty()) i["retiredOverrides"] = c.retired_overrides;
    j["items"].push_back(i);
  }
  return j;
}

}  // namespace flytecd::reconcile
