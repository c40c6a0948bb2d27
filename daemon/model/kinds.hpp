#pragma once

// The document kinds a repository may hold, one row each (model-internal: the loader reads the
// table). Adding a kind is one file with its parse and check functions and one row in kinds.cpp.

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "daemon/model/diagnostic.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/model/loader.hpp"

namespace flytecd::model {

class Fields;

// One document to convert.
struct KindInput {
  const std::string& file;  // its path, UTF-8
  const YAML::Node& doc;    // the document: a mapping with apiVersion and kind
  const Policy& policy;
};

struct DocumentKind {
  std::string_view kind;         // "Overrides"
  std::string_view api_version;  // "flytecd/v1"
  // Converts one document into `out`, reading its fields through `f` (apiVersion and kind are
  // read already); a document with an error adds nothing to `out`.
  void (*parse)(const KindInput& in, Fields& f, Documents& out, Diagnostics& diags);
  // Checks across the revision's documents of this kind (a scope or name declared twice, naming
  // both places).
  void (*check)(const Documents& docs, Diagnostics& diags);
};

// In the order diagnostics list them.
const std::vector<DocumentKind>& document_kinds();
// The row of `kind`, or null.
const DocumentKind* find_document_kind(std::string_view kind);
// "Overrides, WorkflowRegistration, Project, PlatformDefaults, Settings or FlyteRegistration".
const std::string& document_kind_names();

}  // namespace flytecd::model
