#include "daemon/pass/scope.hpp"

#include <algorithm>
#include <iterator>

#include "daemon/model/file_facts.hpp"

namespace flytecd::pass {
namespace {

// The n-th '/'-separated field of a key ("" when it has fewer).
std::string_view field(std::string_view key, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    auto slash = key.find('/');
    if (slash == std::string_view::npos) return {};
    key.remove_prefix(slash + 1);
  }
  return key.substr(0, key.find('/'));
}

template <typename Map, typename Pred>
void erase_if_not(Map& m, Pred keep) {
  for (auto it = m.begin(); it != m.end();) it = keep(*it) ? std::next(it) : m.erase(it);
}

}  // namespace

std::string PassScope::describe() const {
  if (empty()) return "every project";
  if (projects) {
    std::string names;
    size_t shown = 0;
    for (const auto& p : *projects) {
      if (shown++ == 5) {
        names += ", …";
        break;
      }
      names += (names.empty() ? "" : ", ") + p;
    }
    if (projects->empty()) return "no project";
    return std::to_string(projects->size()) +
           (projects->size() == 1 ? " project (" : " projects (") + names + ")";
  }
  return "project " + project + (domain.empty() ? "" : ", domain " + domain);
}

bool in_scope(const PassScope& s, std::string_view project, std::string_view domain) {
  if (s.empty()) return true;
  if (s.projects) return !project.empty() && s.projects->count(std::string(project)) > 0;
  if (project != s.project) return false;
  return s.domain.empty() || domain == s.domain;
}

bool key_in_scope(const PassScope& s, std::string_view key) {
  if (s.empty()) return true;
  const std::string_view kind = field(key, 0);
  if (kind == "project") return s.domain.empty() && in_scope(s, field(key, 1), "");
  if (kind == "override" || kind == "registration")
    return !field(key, 1).empty() && in_scope(s, field(key, 1), field(key, 2));
  return false;
}

void narrow(const PassScope& s, reconcile::State& state) {
  if (s.empty()) return;
  // A pass narrowed to a FlyteAdmin project or domain leaves generic objects (Flyte 2's settings)
  // out, as it leaves their ledger rows out (key_in_scope).
  state.objects.clear();
  erase_if_not(state.projects,
               [&](const auto& kv) { return s.domain.empty() && in_scope(s, kv.first, ""); });
  erase_if_not(state.overrides, [&](const auto& kv) {
    return !kv.second.scope.project.empty() &&
           in_scope(s, kv.second.scope.project, kv.second.scope.domain);
  });
}

void narrow(const PassScope& s, reconcile::Managed& managed) {
  if (s.empty()) return;
  erase_if_not(managed, [&](const auto& kv) { return key_in_scope(s, kv.first); });
}

void narrow(const PassScope& s, std::map<std::string, ledger::RegistrationRecord>& records) {
  if (s.empty()) return;
  erase_if_not(records,
               [&](const auto& kv) { return in_scope(s, kv.second.project, kv.second.domain); });
}

void narrow(const PassScope& s, reconcile::State& live, reconcile::Managed& managed) {
  narrow(s, live);
  narrow(s, managed);
}

std::vector<model::Registration> narrowed(const PassScope& s,
                                          const std::vector<model::Registration>& declared) {
  std::vector<model::Registration> out;
  std::copy_if(declared.begin(), declared.end(), std::back_inserter(out),
               [&](const model::Registration& r) { return in_scope(s, r.project, r.domain); });
  return out;
}

model::Documents narrowed(const PassScope& s, const model::Documents& docs) {
  if (s.empty()) return docs;
  model::Documents out;
  out.file_count = docs.file_count;
  for (const auto& p : docs.projects)
    if (s.domain.empty() && in_scope(s, p.id, "")) out.projects.push_back(p);
  for (const auto& o : docs.overrides)
    if (in_scope(s, o.scope.project, o.scope.domain)) out.overrides.push_back(o);
  out.registrations = narrowed(s, docs.registrations);
  out.document_count = out.projects.size() + out.overrides.size() + out.registrations.size();
  return out;
}

reconcile::State narrowed(const PassScope& s, reconcile::State state) {
  narrow(s, state);
  return state;
}

void narrow(const PassScope& s, std::vector<ledger::HistoryEntry>& entries) {
  if (s.empty()) return;
  for (auto& e : entries)
    std::erase_if(e.step_list,
                  [&](const ledger::HistoryStep& step) { return !key_in_scope(s, step.key); });
  std::erase_if(entries, [](const ledger::HistoryEntry& e) { return e.step_list.empty(); });
}

namespace {

// Adds to `c` what `docs` has in `files`, and the projects whose registrations read the
// repository.
void touched_by(const model::Documents& docs, const std::set<std::string>& files,
                bool repository_keys, ChangedProjects& c) {
  auto in = [&](const model::Location& where) { return files.count(where.file) > 0; };
  for (const auto& p : docs.projects)
    if (in(p.where)) c.projects.insert(p.id);
  for (const auto& o : docs.overrides)
    if (in(o.where)) c.projects.insert(o.scope.project);
  for (const auto& r : docs.registrations) {
    const bool reads_repository =
        (!r.registry_relative && r.package.find("://") == std::string::npos) ||
        (r.verify && !r.verify->key.empty()) || (repository_keys && !r.verify);
    if (in(r.where) || reads_repository) c.projects.insert(r.project);
  }
  for (const auto& d : docs.platform_defaults)
    if (in(d.where) && !c.everything) {
      c.everything = true;
      c.why = "platform defaults changed (" + d.where.file + ")";
    }
  for (const auto& o : docs.objects)
    if (in(o.where) && !c.everything) {
      c.everything = true;
      c.why = o.kind + " changed (" + o.where.file + ")";
    }
}

}  // namespace

ChangedProjects changed_projects(const model::Documents& before,
                                 const std::map<std::string, std::string>& before_files,
                                 const model::Documents& after,
                                 const std::map<std::string, std::string>& after_files,
                                 bool repository_keys) {
  ChangedProjects c;
  const auto files = model::differing_files(before_files, after_files);
  touched_by(before, files, repository_keys, c);
  touched_by(after, files, repository_keys, c);
  return c;
}

}  // namespace flytecd::pass
