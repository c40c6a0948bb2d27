#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/model/diagnostic.hpp"

namespace flytecd::model {

// Bounds on untrusted repository input. Each has its own diagnostic kind.
struct Limits {
  size_t max_file_bytes = 4u << 20;        // file_too_large
  size_t max_documents_per_file = 1000;    // too_many_documents_in_file
  size_t max_documents = 100000;           // too_many_documents (whole tree)
  size_t max_nodes_per_document = 100000;  // alias_expansion (billion laughs) / oversized
  int max_depth = 64;                      // nesting_too_deep
  // YAML nodes (aliases counted as what they expand to), counted by the streaming pass before
  // any tree is built: what one file and what all files of a revision may hold (too_many_nodes).
  // They bound the memory a revision's documents take once converted, whatever the file sizes.
  size_t max_nodes_per_file = 1000000;
  size_t max_nodes_per_revision = 1000000;
};

struct YamlDocument {
  YAML::Node root;
  int line = 1;  // 1-based line where the document starts
};

using DocumentFn = std::function<void(const YamlDocument&)>;

// The YAML nodes of one revision (Limits::max_nodes_per_revision), spent file by file.
struct NodeBudget {
  size_t spent = 0;        // nodes of the files accepted so far
  size_t last_file = 0;    // nodes the streaming pass counted in the last file read (up to where
                           // it stopped, if it refused the file)
  bool exhausted = false;  // a file crossed the bound (its error says so): later files are not read
};

// Parses `bytes` (the content of `file`) into YAML documents, enforcing UTF-8, the limits, and
// rejecting duplicate mapping keys, and calls `fn` with each document that passes, in order.
// Documents with errors are dropped (and reported). Every bound is checked by a streaming pass
// over the whole file before any tree is built; then one document's tree is built at a time and
// dropped after `fn` returns, so memory follows the largest document, not the file. Inside `fn`,
// location_of() reports the document's nodes at their line in the whole file.
// `budget`, if given, is the revision's (see NodeBudget): this file's nodes are added to it if the
// file is accepted. Once a file has exhausted it, the files after it are not read and return 0.
// Returns the number of documents passed to `fn`. Pure: no I/O. Never throws (unless `fn` does).
size_t for_each_yaml_document(const std::string& file, std::string_view bytes, const Limits& limits,
                              Diagnostics& diags, const DocumentFn& fn,
                              NodeBudget* budget = nullptr);

// The same, collecting the documents (for files of one document: the trees of a second and later
// document carry marks counted from their own first line, and are all held at once).
std::vector<YamlDocument> parse_yaml_file(const std::string& file, std::string_view bytes,
                                          const Limits& limits, Diagnostics& diags);

// Returns the byte offset of the first invalid UTF-8 sequence, or npos if valid.
size_t find_invalid_utf8(std::string_view bytes);

// 1-based line/column of a yaml-cpp node.
Location location_of(const std::string& file, const YAML::Node& node);
Location location_of(const std::string& file, const YAML::Mark& mark);

}  // namespace flytecd::model
