#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/model/diagnostic.hpp"
#include "daemon/model/documents.hpp"

namespace flytecd::model {

// What one document file (at one content id) declares, as far as choosing which files a change
// under review has to parse: the PR view (`plan --git`) keeps these between runs so that a
// change of a few files of a large repository parses those files and the files of the projects
// they touch, not the whole base revision.
struct FileFacts {
  std::set<std::string> projects;       // every project a document of the file names
  std::set<std::string> registrations;  // registration names (unique across a revision)
  bool global = false;                  // platform defaults or generic objects: in no project
  bool reads_repository = false;        // a registration whose package is a repository file
  bool errors = false;                  // an error diagnostic located in the file
  size_t documents = 0;                 // YAML documents (the revision's bound counts these)
  size_t nodes = 0;                     // YAML nodes the streaming pass counted (its budget)
  bool budget_bound = false;            // its result depended on the revision's node budget
  bool operator==(const FileFacts&) const = default;
};

// The facts of each file of a load, from what it produced (documents are attributed by their
// location's file). `files` are the loaded paths with their YAML document counts, node counts
// and whether the node budget bound them (IncrementalLoader::last_files()). Pure.
struct FileLoad {
  std::string path;
  size_t documents = 0;
  size_t nodes = 0;
  bool budget_bound = false;
};
std::map<std::string, FileFacts> facts_of(const std::vector<FileLoad>& files, const Documents& docs,
                                          const Diagnostics& diags);

// Facts by path and content id, kept in a file between runs. `parser` names the flytecd build
// and loader policy the facts were computed with: another one discards them all.
class FileIndex {
 public:
  explicit FileIndex(std::string parser) : m_parser(std::move(parser)) {}
  const FileFacts* find(const std::string& path, const std::string& content_id) const;
  void put(const std::string& path, const std::string& content_id, FileFacts facts);
  // Keeps only the entries of these (path -> content id) maps.
  void keep_only(const std::vector<const std::map<std::string, std::string>*>& revisions);
  size_t size() const { return m_entries.size(); }

  std::string to_json() const;
  // An unreadable text, or one of another parser, gives an empty index (it is only a cache).
  static FileIndex from_json(const std::string& text, std::string parser);

 private:
  std::string m_parser;
  std::map<std::string, FileFacts> m_entries;  // key: path '\0' content id
};

// Which files a change under review must load. Either `whole` (with `why`): load both revisions
// entirely; or the projects the change touches and, per revision, the files to load: the files
// that differ between the two revisions, every file holding a document of a touched project,
// platform defaults or generic objects, and every file with a registration that reads a
// repository package (its package can change without a document changing). Loaded so, each
// revision holds every document of the touched projects, and outside them the two are the same.
struct ReviewFiles {
  bool whole = false;
  std::string why;
  std::set<std::string> projects;
  std::set<std::string> base, head;  // paths to load
};
// Stage 1: the files that differ (either revision's path -> content id): present in one only, or
// with another content id. Parsed first; a targeted pass takes its projects from them too.
std::set<std::string> differing_files(const std::map<std::string, std::string>& base,
                                      const std::map<std::string, std::string>& head);
// Stage 2: with the facts of the differing files as each revision holds them (`base_changed`,
// `head_changed`: path -> facts) and the index for the rest. Whole when a file the same in both
// is not in the index or has an error, when a differing file holds platform defaults or generic
// objects, or when the head as a whole would cross a bound the partial load cannot see (documents,
// nodes, a registration name declared in two files). Pure.
ReviewFiles select_review_files(const std::map<std::string, std::string>& base,
                                const std::map<std::string, std::string>& head,
                                const std::map<std::string, FileFacts>& base_changed,
                                const std::map<std::string, FileFacts>& head_changed,
                                const FileIndex& index, size_t max_documents, size_t max_nodes);

}  // namespace flytecd::model
