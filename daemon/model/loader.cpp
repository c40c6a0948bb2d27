#include "daemon/model/loader.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <set>

#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "daemon/model/document_fields.hpp"
#include "daemon/model/incremental.hpp"
#include "daemon/model/kinds.hpp"

namespace flytecd::model {

size_t parse_file(const SourceFile& file, const Limits& limits, const Policy& policy,
                  Documents& out, Diagnostics& diags, NodeBudget* budget) {
  if (budget) {
    budget->last_file = 0;
    if (budget->exhausted) return 0;  // an earlier file's error says the rest is not read
  }
  // A path is bytes (Git and POSIX allow any name, e.g. a Latin-1 "caf\xe9.yaml"); every
  // diagnostic and field source names the file in UTF-8, ill-formed bytes shown as U+FFFD.
  const std::string path = text::to_utf8_lossy(file.path);
  if (file.size > limits.max_file_bytes || file.bytes.size() > limits.max_file_bytes) {
    diags.push_back(
        Diagnostic{Severity::error,
                   DiagKind::file_too_large,
                   Location{path, 0, 0},
                   "",
                   "file is " + std::to_string(std::max(file.size, file.bytes.size())) + " bytes",
                   "at most " + std::to_string(limits.max_file_bytes) + " bytes",
                   {}});
    return 0;
  }
  // One document at a time: each tree is converted and dropped before the next is built.
  auto convert_one = [&](const YamlDocument& yd) {
    const YAML::Node& doc = yd.root;
    if (!doc.IsMap()) {
      diags.push_back(Diagnostic{Severity::error,
                                 DiagKind::not_a_mapping,
                                 location_of(path, doc),
                                 "",
                                 "document is not a mapping",
                                 "a mapping with apiVersion and kind",
                                 {}});
      return;
    }
    Fields f(path, doc, "", diags);
    std::string kind = f.str("kind", true, document_kind_names());
    std::string api = f.str("apiVersion", true, k_api_version);
    if (kind.empty() || api.empty()) return;
    const DocumentKind* row = find_document_kind(kind);
    if (!row) {
      f.add(DiagKind::unknown_kind, location_of(path, doc["kind"]), "kind",
            "unknown kind '" + scan::printable(kind) + "'", document_kind_names());
      return;
    }
    if (api != row->api_version) {
      f.add(DiagKind::unknown_api_version, location_of(path, doc["apiVersion"]), "apiVersion",
            "unknown apiVersion '" + scan::printable(api) + "' for kind " + kind,
            std::string(row->api_version));
      return;
    }
    // Defence in depth: a library exception (yaml-cpp's InvalidNode, a bad conversion) in a
    // check must reject this document, never terminate the daemon on a commit.
    try {
      row->parse(KindInput{path, doc, policy}, f, out, diags);
    } catch (const std::exception& e) {
      diags.push_back(
          Diagnostic{Severity::error,
                     DiagKind::invalid_value,
                     location_of(path, doc),
                     "",
                     "this document could not be checked (" + scan::printable(e.what()) + ")",
                     "a document flytecd can read; this is a flytecd bug, please "
                     "report it with the document",
                     {}});
    }
  };
  // A document with an error is left out of `out`; it is counted, so a summary that counts
  // what was accepted also says how much was not (validate --require-digest, issue 21).
  auto convert = [&](const YamlDocument& yd) {
    const size_t before = diags.size();
    convert_one(yd);
    for (size_t i = before; i < diags.size(); ++i)
      if (diags[i].severity == Severity::error) {
        ++out.rejected_documents;
        break;
      }
  };
  return for_each_yaml_document(path, file.bytes, limits, diags, convert, budget);
}

void check_documents(const Documents& docs, const Limits& limits, Diagnostics& diags) {
  if (docs.document_count > limits.max_documents)
    diags.push_back(
        Diagnostic{Severity::error,
                   DiagKind::too_many_documents,
                   Location{"", 0, 0},
                   "",
                   "repository holds " + std::to_string(docs.document_count) + " documents",
                   "at most " + std::to_string(limits.max_documents),
                   {}});

  for (const auto& k : document_kinds())
    if (k.check) k.check(docs, diags);
  std::set<std::string> projects;
  for (const auto& p : docs.projects) projects.insert(p.id);
  if (!projects.empty()) {
    auto warn = [&](const std::string& project, const Location& where, const std::string& path) {
      if (!projects.count(project))
        diags.push_back(Diagnostic{
            Severity::warning,
            DiagKind::unknown_project,
            where,
            path,
            "project '" + scan::printable(project) + "' has no Project document in this repository",
            "a Project document, or the project to exist in FlyteAdmin already",
            {}});
    };
    std::set<std::string> warned;
    for (const auto& o : docs.overrides)
      if (warned.insert(o.scope.project).second) warn(o.scope.project, o.where, "project");
    for (const auto& r : docs.registrations)
      if (warned.insert(r.project).second) warn(r.project, r.where, "project");
  }
}

void sort_diagnostics(Diagnostics& diags) {
  std::stable_sort(diags.begin(), diags.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.where.file, a.where.line, a.where.column) <
           std::tie(b.where.file, b.where.line, b.where.column);
  });
}

LoadResult load_documents(const std::vector<SourceFile>& files, const Limits& limits,
                          const Policy& policy) {
  // The same load with nothing cached: its files are parsed on every core.
  return IncrementalLoader(limits, policy).load(files, {});
}

}  // namespace flytecd::model
