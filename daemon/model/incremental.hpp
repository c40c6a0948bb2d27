#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/model/file_facts.hpp"
#include "daemon/model/loader.hpp"

namespace flytecd::model {

// Loads revisions, re-parsing only files whose content id changed since the previous load
// (the cross-document checks always run over the whole revision); enough files to parse are parsed
// on every core (up to 8 threads), with the same result as one after the other. Not thread-safe.
class IncrementalLoader {
 public:
  IncrementalLoader(Limits limits, Policy policy) : m_limits(limits), m_policy(std::move(policy)) {}

  // `blob_ids` is parallel to `files`. Returns the same result load_documents would.
  LoadResult load(const std::vector<SourceFile>& files, const std::vector<std::string>& blob_ids);

  // Keep every file parsed, not only those of the last load (a command comparing revisions).
  void keep_all(bool keep) {
    m_keep_all = keep;
    m_keep_none = m_keep_none && !keep;
  }
  // Keep nothing: each load moves every file's documents into its result (a command that loads
  // once; a cached copy would cost a copy of every document and its memory).
  void keep_none(bool none) {
    m_keep_none = none;
    m_keep_all = m_keep_all && !none;
  }

  size_t parsed_last() const { return m_parsed_last; }  // files parsed by the last load()
  // Each file of the last load(), in its order: YAML documents, nodes counted, budget-bound.
  const std::vector<FileLoad>& last_files() const { return m_last_files; }

 private:
  struct Parsed {
    Documents docs;
    Diagnostics diags;
    size_t count = 0;
    // Its share of the revision's node budget: what the streaming pass counted (up to where it
    // stopped) and what was spent (0 if refused). A file whose result depended on the budget
    // (it ran out there or before) is parsed again.
    size_t nodes_scanned = 0, nodes_spent = 0;
    bool budget_bound = false;
  };
  // The files marked `wanted`, parsed on every core when there are enough of them (each with a
  // budget of its own; load() keeps a result only where the revision's budget agrees).
  std::vector<std::optional<Parsed>> parse_ahead(const std::vector<SourceFile>& files,
                                                 const std::vector<bool>& wanted) const;
  Limits m_limits;
  Policy m_policy;
  std::map<std::string, Parsed> m_cache;  // key: path + '\0' + blob id (locations name the path)
  size_t m_parsed_last = 0;
  bool m_keep_all = false;
  bool m_keep_none = false;
  std::vector<FileLoad> m_last_files;
};

}  // namespace flytecd::model
