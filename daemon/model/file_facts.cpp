#include "daemon/model/file_facts.hpp"

#include <nlohmann/json.hpp>

#include "daemon/common/json_dump.hpp"

namespace flytecd::model {
namespace {

std::string key_of(const std::string& path, const std::string& content_id) {
  return path + '\0' + content_id;
}

bool reads_repository(const Registration& r) {
  return !r.registry_relative && r.package.find("://") == std::string::npos;
}

}  // namespace

std::map<std::string, FileFacts> facts_of(const std::vector<FileLoad>& files, const Documents& docs,
                                          const Diagnostics& diags) {
  std::map<std::string, FileFacts> out;
  for (const auto& f : files) {
    auto& facts = out[f.path];
    facts.documents = f.documents;
    facts.nodes = f.nodes;
    facts.budget_bound = f.budget_bound;
  }
  // Only the files of the load: a document is attributed to the file its location names.
  auto at = [&](const Location& where) -> FileFacts* {
    auto it = out.find(where.file);
    return it == out.end() ? nullptr : &it->second;
  };
  for (const auto& p : docs.projects)
    if (auto* f = at(p.where)) f->projects.insert(p.id);
  for (const auto& o : docs.overrides)
    if (auto* f = at(o.where)) f->projects.insert(o.scope.project);
  for (const auto& r : docs.registrations)
    if (auto* f = at(r.where)) {
      f->projects.insert(r.project);
      f->registrations.insert(r.name);
      f->reads_repository = f->reads_repository || reads_repository(r);
    }
  for (const auto& d : docs.platform_defaults)
    if (auto* f = at(d.where)) f->global = true;
  for (const auto& o : docs.objects)
    if (auto* f = at(o.where)) f->global = true;
  for (const auto& d : diags)
    if (d.severity == Severity::error)
      if (auto* f = at(d.where)) f->errors = true;
  return out;
}

const FileFacts* FileIndex::find(const std::string& path, const std::string& content_id) const {
  auto it = m_entries.find(key_of(path, content_id));
  return it == m_entries.end() ? nullptr : &it->second;
}

void FileIndex::put(const std::string& path, const std::string& content_id, FileFacts facts) {
  if (content_id.empty()) return;  // what has no content id cannot be found again
  m_entries[key_of(path, content_id)] = std::move(facts);
}

void FileIndex::keep_only(const std::vector<const std::map<std::string, std::string>*>& revisions) {
  std::map<std::string, FileFacts> kept;
  for (const auto* files : revisions)
    for (const auto& [path, id] : *files)
      if (auto it = m_entries.find(key_of(path, id)); it != m_entries.end())
        kept.emplace(it->first, it->second);
  m_entries = std::move(kept);
}

std::string FileIndex::to_json() const {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [key, f] : m_entries) {
    const auto nul = key.find('\0');
    files.push_back({{"path", key.substr(0, nul)},
                     {"id", key.substr(nul + 1)},
                     {"projects", f.projects},
                     {"registrations", f.registrations},
                     {"global", f.global},
                     {"readsRepository", f.reads_repository},
                     {"errors", f.errors},
                     {"documents", f.documents},
                     {"nodes", f.nodes},
                     {"budgetBound", f.budget_bound}});
  }
  // Names from documents can hold any bytes: dump_json replaces them, never throws.
  return dump_json(nlohmann::json{{"parser", m_parser}, {"files", files}});
}

FileIndex FileIndex::from_json(const std::string& text, std::string parser) {
  FileIndex index(std::move(parser));
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || j.value("parser", "") != index.m_parser || !j.contains("files") ||
      !j["files"].is_array())
    return index;
  try {
    for (const auto& e : j["files"]) {
      FileFacts f;
      f.projects = e.at("projects").get<std::set<std::string>>();
      f.registrations = e.at("registrations").get<std::set<std::string>>();
      f.global = e.at("global").get<bool>();
      f.reads_repository = e.at("readsRepository").get<bool>();
      f.errors = e.at("errors").get<bool>();
      f.documents = e.at("documents").get<size_t>();
      f.nodes = e.at("nodes").get<size_t>();
      f.budget_bound = e.at("budgetBound").get<bool>();
      index.put(e.at("path").get<std::string>(), e.at("id").get<std::string>(), std::move(f));
    }
  } catch (const nlohmann::json::exception&) {
    return FileIndex(index.m_parser);  // a damaged file: start again
  }
  return index;
}

std::set<std::string> differing_files(const std::map<std::string, std::string>& base,
                                      const std::map<std::string, std::string>& head) {
  std::set<std::string> out;
  for (const auto& [path, id] : base)
    if (auto it = head.find(path); it == head.end() || it->second != id) out.insert(path);
  for (const auto& [path, id] : head)
    if (!base.count(path)) out.insert(path);
  return out;
}

namespace {

// The facts of every file of one revision: the differing ones as parsed, the others from the
// index. Empty (with `why`) when one is missing.
std::optional<std::map<std::string, const FileFacts*>> revision_facts(
    const std::map<std::string, std::string>& files, const std::set<std::string>& differing,
    const std::map<std::string, FileFacts>& changed, const FileIndex& index, std::string& why) {
  std::map<std::string, const FileFacts*> out;
  for (const auto& [path, id] : files) {
    const FileFacts* f = nullptr;
    if (differing.count(path)) {
      auto it = changed.find(path);
      if (it != changed.end()) f = &it->second;
    } else {
      f = index.find(path, id);
    }
    if (!f) {
      why = "no facts kept for " + path + " at " + id.substr(0, 12);
      return std::nullopt;
    }
    out.emplace(path, f);
  }
  return out;
}

// Why the revision as a whole crosses a bound (or has a cross-file error) a partial load would
// not see; empty when it does not.
std::string whole_revision_bounds(const std::map<std::string, const FileFacts*>& facts,
                                  size_t max_documents, size_t max_nodes) {
  size_t documents = 0, nodes = 0;
  std::map<std::string, std::string> registration_file;
  for (const auto& [path, f] : facts) {
    documents += f->documents;
    nodes += f->nodes;
    if (f->budget_bound) return path + " met the revision's node budget";
    for (const auto& name : f->registrations)
      if (auto [it, fresh] = registration_file.emplace(name, path); !fresh)
        return "registration names repeated across files (" + it->second + ", " + path + ")";
  }
  if (documents > max_documents) return "more documents than the revision's bound";
  if (nodes > max_nodes) return "more YAML nodes than the revision's budget";
  return {};
}

}  // namespace

ReviewFiles select_review_files(const std::map<std::string, std::string>& base,
                                const std::map<std::string, std::string>& head,
                                const std::map<std::string, FileFacts>& base_changed,
                                const std::map<std::string, FileFacts>& head_changed,
                                const FileIndex& index, size_t max_documents, size_t max_nodes) {
  ReviewFiles r;
  auto whole = [&](std::string why) {
    r = ReviewFiles{};
    r.whole = true;
    r.why = std::move(why);
    return r;
  };
  const auto differing = differing_files(base, head);
  std::string why;
  const auto base_facts = revision_facts(base, differing, base_changed, index, why);
  if (!base_facts) return whole(why);
  const auto head_facts = revision_facts(head, differing, head_changed, index, why);
  if (!head_facts) return whole(why);
  for (const auto* facts : {&*base_facts, &*head_facts}) {
    if (auto bound = whole_revision_bounds(*facts, max_documents, max_nodes); !bound.empty())
      return whole(bound);
    for (const auto& [path, f] : *facts) {
      if (differing.count(path)) {
        if (f->global) return whole("platform defaults or generic objects in " + path + " changed");
        r.projects.insert(f->projects.begin(), f->projects.end());
      } else if (f->errors) {
        return whole(path + " has an error");
      }
    }
  }
  // The same file in both revisions (so the same facts): loaded when it holds what every
  // project resolves against, a registration reading the repository, or a touched project.
  const auto& same = *head_facts;
  for (const auto& [path, f] : same)
    if (!differing.count(path) && f->reads_repository)
      r.projects.insert(f->projects.begin(), f->projects.end());
  for (const auto& [path, f] : same) {
    if (differing.count(path)) continue;
    bool wanted = f->global || f->reads_repository;
    for (auto it = f->projects.begin(); !wanted && it != f->projects.end(); ++it)
      wanted = r.projects.count(*it) > 0;
    if (wanted) {
      r.base.insert(path);
      r.head.insert(path);
    }
  }
  for (const auto& path : differing) {
    if (base.count(path)) r.base.insert(path);
    if (head.count(path)) r.head.insert(path);
  }
  return r;
}

}  // namespace flytecd::model
