#pragma once

#include <string>
#include <vector>

#include "daemon/model/diagnostic.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/model/yaml_safe.hpp"
#include "sources/snapshot.hpp"

namespace flytecd::model {

// Repository-level rules beyond the schema.
struct Policy {
  std::vector<std::string> domains{"development", "staging",
                                   "production"};  // FlyteAdmin's `domains`
  bool require_digest_pins = false;                // packages must be pinned by digest
  // Overrides go to FlyteAdmin's ConfigMap (kubernetes.configMap.enabled), not through its
  // Update*Attributes RPCs, so the RPCs' limits (project-scope pluginOverrides) do not apply.
  bool configmap_mode = false;
};

// One file of the revision being loaded (declared with the Source interface that produces it).
using SourceFile = sources::SourceFile;

// Parses one file into typed documents, appending to `out`, one document at a time. `budget` is
// the revision's node budget (for_each_yaml_document). Pure: no I/O, never throws.
// Returns the number of YAML documents it held (0 if the file was rejected).
size_t parse_file(const SourceFile& file, const Limits& limits, const Policy& policy,
                  Documents& out, Diagnostics& diags, NodeBudget* budget = nullptr);

// Checks across all documents of a revision: duplicates (naming both places), unknown projects,
// total-document bound. Pure.
void check_documents(const Documents& docs, const Limits& limits, Diagnostics& diags);

struct LoadResult {
  Documents documents;
  Diagnostics diagnostics;
  bool ok() const { return !has_errors(diagnostics); }
};

// Orders diagnostics by file, line, column (stable), as every load reports them.
void sort_diagnostics(Diagnostics& diags);

// Loads a whole revision. A revision with any error must be rejected whole by the caller.
LoadResult load_documents(const std::vector<SourceFile>& files, const Limits& limits,
                          const Policy& policy);

}  // namespace flytecd::model
