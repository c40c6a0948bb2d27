#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/model/diagnostic.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/model/loader.hpp"

// flytectl attribute files (`flytectl update <type>-attribute --attrFile FILE`) read into
// flytecd's model and rendered as Overrides documents. flytectl reads such a file with
// sigs.k8s.io/yaml's UnmarshalStrict into a Go struct {project, domain, workflow, *admin.X}: keys
// are the snake_case protobuf names matched case-insensitively (`Project`, `MAX_PARALLELISM`),
// enums are numbers, wrappers are {value: …}, scalars headed for strings are stringified, and
// any other key is an error. This reads the same files the same way.
namespace flytecd::model::flytectl {

// The six types flytectl writes through --attrFile, by its short names ("task-resource",
// "cluster-resource", "execution-queue", "execution-cluster-label", "plugin-override",
// "workflow-execution-config"); flytectl's command names ("task-resource-attribute", …) too.
std::optional<AttributeType> type_from_name(std::string_view name);
std::string type_name(AttributeType type);  // the short name
std::vector<std::string> type_names();      // the six short names, in enum order

// One attribute file, read.
struct AttrFile {
  std::string path;
  Scope scope;
  AttributeType type{};
  flyteidl::admin::MatchingAttributes value;
};

// Parses one flytectl attribute file. `forced` (--type) skips inference: keys of other types
// are then unknown. Errors (unknown keys, wrong types, a type that cannot be inferred, keys of
// two types, a missing project) go to `diags` with file:line:col. Pure; never throws.
std::optional<AttrFile> parse_attr_file(const SourceFile& file, std::optional<AttributeType> forced,
                                        const Limits& limits, Diagnostics& diags);

enum class Outcome { imported, skipped, invalid };

// What happened to one input file. `diagnostics` are its own (errors and warnings), in the
// input file's terms (file:line of the flytectl file).
struct FileReport {
  std::string path;
  Outcome outcome = Outcome::invalid;
  std::optional<AttributeType> type;
  Scope scope;
  Diagnostics diagnostics;
};

// One file of the repository to write, relative to --out.
struct OutputFile {
  std::string path;  // "projects/<p>/overrides.yaml", "projects/<p>/<domain>.yaml",
                     // "projects/<p>/workflows/<workflow>.yaml"
  std::string text;
  size_t documents = 0;
};

struct ImportResult {
  std::vector<FileReport> files;  // one per input, in input order
  std::vector<OutputFile> outputs;
  // Errors of the rendered repository itself (a flytecd bug if ever non-empty).
  Diagnostics output_diagnostics;
  bool any_invalid() const;
};

// Converts flytectl attribute files into Overrides documents in the recommended layout: one
// document per scope (files of one scope merge), one (scope, type) once. Every file is checked
// as `flytecd validate` would check the document it becomes, under `policy`; a file FlyteAdmin
// cannot store (validate's unsupported_attribute error, e.g. a project-scope plugin override)
// is `skipped` with validate's message. Outputs hold only imported files, whether or not others
// are invalid: the caller decides (--skip-invalid). Pure: no I/O.
ImportResult import_files(const std::vector<SourceFile>& inputs,
                          std::optional<AttributeType> forced, const Policy& policy,
                          const Limits& limits);

}  // namespace flytecd::model::flytectl
