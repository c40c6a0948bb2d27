#pragma once

// `flytecd convert --to flyte2`: a repository of FlyteAdmin 1.x Overrides and PlatformDefaults
// rewritten as Flyte 2 Settings documents where Flyte 2 has a field of the same meaning, and every
// field without one listed by name (file:line, scope, field, why) — nothing is guessed. Pure.
//
// The correspondences (flyteidl2/settings/settings_definition.proto on flyteorg/flyte main):
//   taskResourceAttributes.defaults.{cpu,gpu,memory,ephemeralStorage} -> taskResource.min.{…}
//   taskResourceAttributes.limits.{cpu,gpu,memory,ephemeralStorage}   -> taskResource.max.{…}
//   (ephemeralStorage is Flyte 2's storage)
//   workflowExecutionConfig.securityContext.runAs.k8sServiceAccount  -> security.serviceAccount
//   workflowExecutionConfig.rawOutputDataConfig.outputLocationPrefix -> storage.rawDataPath
//   workflowExecutionConfig.{labels,annotations}.values               -> labels, annotations
//   workflowExecutionConfig.envs.values                               -> environmentVariables
// Levels: a global PlatformDefaults is the org record, a domain's the org-domain record; each
// project with Overrides gets one record per configured domain holding the values its own rows
// (project-domain, else project) give there as FlyteAdmin resolves them (model::Hierarchy); an
// execution-config leaf they leave unset inherits the org levels, as FlyteAdmin fills those fields
// from its configuration, while a task-resource leaf they leave unset is written UNSET where a
// broader record sets it (FlyteAdmin takes a task-resource record whole, and so does a domain's
// PlatformDefaults over the global one). Workflow-level rows have no Flyte 2 level.

#include <string>
#include <vector>

#include "daemon/model/documents.hpp"

namespace flytecd::model {

struct ConvertedFile {
  std::string path;  // relative to the output directory
  std::string text;  // YAML, one or more documents
};

// A field of an input document that is not written.
struct Unconverted {
  Location where;
  std::string scope;  // "ml/development", "ml/development/wf.name", "platform (global)"
  std::string field;  // its JSON path in the document's spec ("executionQueueAttributes.tags")
  std::string reason;
};

struct Flyte2Conversion {
  std::vector<ConvertedFile> files;
  std::vector<Unconverted> unconverted;
  // Written, but not with the same effect: a map FlyteAdmin takes whole from the narrowest level
  // that Flyte 2 merges per key with broader ones.
  std::vector<std::string> notes;
  size_t settings_documents = 0;
  size_t project_documents = 0;
  size_t leaves = 0;  // leaves written with a value
};

Flyte2Conversion convert_to_flyte2(const Documents& docs, const std::vector<std::string>& domains);

}  // namespace flytecd::model
