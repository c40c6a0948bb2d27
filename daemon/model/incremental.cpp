#include "daemon/model/incremental.hpp"

#include <algorithm>

namespace flytecd::model {

LoadResult IncrementalLoader::load(const std::vector<SourceFile>& files,
                                   const std::vector<std::string>& blob_ids) {
  std::map<std::string, Parsed> next;
  LoadResult result;
  NodeBudget budget;
  m_parsed_last = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string key =
        files[i].path + '\0' + (i < blob_ids.size() ? blob_ids[i] : std::string());
    auto it = m_cache.find(key);
    Parsed parsed;
    // A cached result holds if this revision's budget would not run out within that file.
    const bool same_budget =
        it != m_cache.end() && !budget.exhausted && !it->second.budget_bound &&
        budget.spent + it->second.nodes_scanned <= m_limits.max_nodes_per_revision;
    if (same_budget && i < blob_ids.size() && !blob_ids[i].empty()) {
      parsed = std::move(it->second);
      budget.spent += parsed.nodes_spent;
    } else {
      const size_t spent = budget.spent;
      const bool exhausted = budget.exhausted;
      parsed.count = parse_file(files[i], m_limits, m_policy, parsed.docs, parsed.diags, &budget);
      parsed.nodes_scanned = budget.last_file;
      parsed.nodes_spent = budget.spent - spent;
      parsed.budget_bound = exhausted || budget.exhausted;
      ++m_parsed_last;
    }
    auto& d = result.documents;
    d.overrides.insert(d.overrides.end(), parsed.docs.overrides.begin(),
                       parsed.docs.overrides.end());
    d.platform_defaults.insert(d.platform_defaults.end(), parsed.docs.platform_defaults.begin(),
                               parsed.docs.platform_defaults.end());
    d.projects.insert(d.projects.end(), parsed.docs.projects.begin(), parsed.docs.projects.end());
    d.registrations.insert(d.registrations.end(), parsed.docs.registrations.begin(),
                           parsed.docs.registrations.end());
    d.document_count += parsed.count;
    d.rejected_documents += parsed.docs.rejected_documents;
    ++d.file_count;
    result.diagnostics.insert(result.diagnostics.end(), parsed.diags.begin(), parsed.diags.end());
    next.emplace(key, std::move(parsed));
  }
  m_cache = std::move(next);
  check_documents(result.documents, m_limits, result.diagnostics);
  sort_diagnostics(result.diagnostics);
  return result;
}

}  // namespace flytecd::model
