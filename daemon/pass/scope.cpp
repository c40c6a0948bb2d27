#include "daemon/pass/scope.hpp"

#include <algorithm>
#include <iterator>

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
  return "project " + project + (domain.empty() ? "" : ", domain " + domain);
}

bool in_scope(const PassScope& s, std::string_view project, std::string_view domain) {
  if (s.empty()) return true;
  if (project != s.project) return false;
  return s.domain.empty() || domain == s.domain;
}

bool key_in_scope(const PassScope& s, std::string_view key) {
  if (s.empty()) return true;
  const std::string_view kind = field(key, 0);
  if (kind == "project") return s.domain.empty() && field(key, 1) == s.project;
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
               [&](const auto& kv) { return s.domain.empty() && kv.first == s.project; });
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
    if (s.domain.empty() && p.id == s.project) out.projects.push_back(p);
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

}  // namespace flytecd::pass
