#include "daemon/model/incremental.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

namespace flytecd::model {
namespace {

// Fewer files than this are parsed on the calling thread: starting threads costs more.
constexpr size_t k_min_parallel_files = 8;

template <typename T>
void append(std::vector<T>& to, std::vector<T>& from, bool move) {
  if (move)
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  else
    to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

// Files not in the cache are parsed up front on every core, each as if it came first (an empty
// node budget). parse_file is pure, and the revision's budget only decides whether a file is read
// at all and whether it crosses the bound, so such a result stands exactly when a cached one
// would: the budget is not exhausted, the file did not run it out on its own, and its nodes fit
// in what is left. The files are then taken in order as before; a file whose result does not
// stand is parsed again with the real budget.
std::vector<std::optional<IncrementalLoader::Parsed>> IncrementalLoader::parse_ahead(
    const std::vector<SourceFile>& files, const std::vector<bool>& wanted) const {
  std::vector<std::optional<Parsed>> out(files.size());
  const size_t misses = static_cast<size_t>(std::count(wanted.begin(), wanted.end(), true));
  const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 8);
  if (misses < k_min_parallel_files || threads < 2) return out;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      if (!wanted[i]) continue;
      Parsed p;
      NodeBudget alone;
      p.count = parse_file(files[i], m_limits, m_policy, p.docs, p.diags, &alone);
      p.nodes_scanned = alone.last_file;
      p.nodes_spent = alone.spent;
      p.budget_bound = alone.exhausted;
      out[i] = std::move(p);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return out;
}

LoadResult IncrementalLoader::load(const std::vector<SourceFile>& files,
                                   const std::vector<std::string>& blob_ids) {
  std::map<std::string, Parsed> next;
  LoadResult result;
  NodeBudget budget;
  m_parsed_last = 0;
  m_last_files.clear();
  auto key_of = [&](size_t i) {
    return files[i].path + '\0' + (i < blob_ids.size() ? blob_ids[i] : std::string());
  };
  auto cacheable = [&](size_t i) { return i < blob_ids.size() && !blob_ids[i].empty(); };
  std::vector<bool> missing(files.size());
  for (size_t i = 0; i < files.size(); ++i) missing[i] = !cacheable(i) || !m_cache.count(key_of(i));
  auto ahead = parse_ahead(files, missing);
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string key = key_of(i);
    auto it = m_cache.find(key);
    // A result parsed before (cached, or ahead) holds if this revision's budget would not run
    // out within that file.
    auto stands = [&](const Parsed& p) {
      return !budget.exhausted && !p.budget_bound &&
             budget.spent + p.nodes_scanned <= m_limits.max_nodes_per_revision;
    };
    Parsed parsed;
    if (cacheable(i) && it != m_cache.end() && stands(it->second)) {
      parsed = std::move(it->second);
      budget.spent += parsed.nodes_spent;
    } else if (ahead[i] && stands(*ahead[i])) {
      parsed = std::move(*ahead[i]);
      budget.spent += parsed.nodes_spent;
      ++m_parsed_last;
    } else {
      const size_t spent = budget.spent;
      const bool exhausted = budget.exhausted;
      parsed.count = parse_file(files[i], m_limits, m_policy, parsed.docs, parsed.diags, &budget);
      parsed.nodes_scanned = budget.last_file;
      parsed.nodes_spent = budget.spent - spent;
      parsed.budget_bound = exhausted || budget.exhausted;
      ++m_parsed_last;
    }
    m_last_files.push_back(
        {files[i].path, parsed.count, parsed.nodes_scanned, parsed.budget_bound});
    // What cannot be found again (no blob id) is moved into the result instead of kept.
    const bool keep = cacheable(i) && !m_keep_none;
    auto& d = result.documents;
    append(d.overrides, parsed.docs.overrides, !keep);
    append(d.platform_defaults, parsed.docs.platform_defaults, !keep);
    append(d.projects, parsed.docs.projects, !keep);
    append(d.registrations, parsed.docs.registrations, !keep);
    append(d.objects, parsed.docs.objects, !keep);
    d.document_count += parsed.count;
    d.rejected_documents += parsed.docs.rejected_documents;
    ++d.file_count;
    append(result.diagnostics, parsed.diags, !keep);
    if (keep) next.emplace(key, std::move(parsed));
  }
  if (m_keep_all) next.merge(m_cache);  // entries of this load win; the rest stay
  m_cache = std::move(next);
  check_documents(result.documents, m_limits, result.diagnostics);
  sort_diagnostics(result.diagnostics);
  return result;
}

}  // namespace flytecd::model
