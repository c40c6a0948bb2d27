#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
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
};

struct YamlDocument {
  YAML::Node root;
  int line = 1;  // 1-based line where the document starts
};

// Parses `bytes` (the content of `file`) into YAML documents, enforcing UTF-8, the limits,
// and rejecting duplicate mapping keys. Documents with errors are dropped (and reported).
// Pure: no I/O. Never throws.
std::vector<YamlDocument> parse_yaml_file(const std::string& file, std::string_view bytes,
                                          const Limits& limits, Diagnostics& diags);

// Returns the byte offset of the first invalid UTF-8 sequence, or npos if valid.
size_t find_invalid_utf8(std::string_view bytes);

// 1-based line/column of a yaml-cpp node.
Location location_of(const std::string& file, const YAML::Node& node);
Location location_of(const std::string& file, const YAML::Mark& mark);

}  // namespace flytecd::model
