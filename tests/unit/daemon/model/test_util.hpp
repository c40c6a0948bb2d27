#pragma once

#include <string>
#include <vector>

#include "daemon/model/loader.hpp"

namespace flytecd::test {

inline model::SourceFile file(std::string path, std::string bytes) {
  model::SourceFile f;
  f.path = std::move(path);
  f.size = bytes.size();
  f.bytes = std::move(bytes);
  return f;
}

inline model::LoadResult load(std::vector<model::SourceFile> files, model::Limits limits = {},
                              model::Policy policy = {}) {
  return model::load_documents(files, limits, policy);
}

inline model::LoadResult load_one(const std::string& yaml) { return load({file("a.yaml", yaml)}); }

// The first error of `kind`, or nullptr.
inline const model::Diagnostic* find(const model::LoadResult& r, model::DiagKind kind) {
  for (const auto& d : r.diagnostics)
    if (d.kind == kind && d.severity == model::Severity::error) return &d;
  return nullptr;
}

}  // namespace flytecd::test
