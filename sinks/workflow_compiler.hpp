#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flyteidl/admin/workflow.pb.h"
#include "flyteidl/core/interface.pb.h"
#include "flyteidl/core/literals.pb.h"
#include "flyteidl/core/tasks.pb.h"
#include "flyteidl/core/types.pb.h"

// The checks FlyteAdmin's workflow compiler makes before it stores a workflow (flytepropeller
// pkg/compiler: validators/typing.go, bindings.go, node.go, branch.go, interface.go and
// workflow_compiler.go), written for flytecd: the same rules, our own messages. Used by the
// registration planner (before any Create RPC) and by the FlyteAdmin emulator's CreateWorkflow,
// so both refuse what FlyteAdmin refuses. Pure: no I/O; thread-safe.
//
// Deliberately more lenient than FlyteAdmin where reproducing it exactly would risk refusing a
// workflow FlyteAdmin accepts: two STRUCT types with different JSON schemas are castable (the
// JSON-schema subtyping of isSuperTypeInJSON is not reproduced); the typing of an array node's
// inner node is not checked; a node whose id repeats an earlier one (AddNode keeps the first)
// has its references checked, not its bindings.

namespace flytecd::sinks::compiler {

// Flyte's AreTypesCastable: a value of type `upstream` may be bound where `downstream` is
// expected. Unions (a variant must be chosen unambiguously; union to union: every upstream
// variant fits some downstream variant), NONE (only to NONE, optional unions and structured
// datasets), collections and maps (element-wise; empty ones fit any), blobs (format equal or
// either empty), enums <-> STRING, schemas and structured datasets (columns a subset), type tags.
bool castable(const flyteidl::core::LiteralType& upstream,
              const flyteidl::core::LiteralType& downstream);

// A short readable type: "STRING", "List[INTEGER]", "Dict[str, FLOAT]", "Union[INTEGER, NONE]",
// "Blob(csv)", "Enum[a, b]", "StructuredDataset(parquet)", "Schema".
std::string type_text(const flyteidl::core::LiteralType& t);

// The type of a literal value as FlyteAdmin infers it (LiteralTypeForLiteral); nullopt when it
// cannot be told (a blob without metadata, an empty value).
std::optional<flyteidl::core::LiteralType> type_of(const flyteidl::core::Literal& literal);

// Go's prototext one-line form of a message, as %v and String() print it ("simple:INTEGER",
// "collection_type:{simple:STRING}"); it orders the variants of an inferred union.
std::string go_text(const google::protobuf::Message& m);

// A promise's variable as typing.ParseVarName reads it: exactly one match of
// `(\[(\d+)\]\.)?(\w+)` in the text ("o", "[0].o"); nullopt when there are none or several
// ("o[0]", "out-1", "").
struct VarName {
  std::string name;
  bool indexed = false;
  long long index = 0;
};
std::optional<VarName> parse_var_name(const std::string& text);

// "project/domain/name/version": how references are looked up in References.
std::string id_key(const flyteidl::core::Identifier& id);

// What a launch plan exposes to a node that launches it: its expected inputs (closure.expected_
// inputs, or the workflow's inputs with the plan's defaults and fixed inputs applied) and the
// launched workflow's outputs.
struct LaunchPlanInterface {
  flyteidl::core::ParameterMap inputs;
  flyteidl::core::VariableMap outputs;
};

// What the references of a workflow resolve to, keyed by id_key().
struct References {
  std::map<std::string, flyteidl::core::TypedInterface> tasks;
  std::map<std::string, LaunchPlanInterface> launch_plans;
  // true: a task or launch plan missing here does not exist (an error, as FlyteAdmin says);
  // false: it may already be registered, so it is a warning and the nodes using it go unchecked.
  bool complete = true;
};

struct Issue {
  bool warning = false;
  std::string node;         // node id ("" for the workflow itself, "end-node" for its outputs)
  std::string code;         // FlyteAdmin's compile error code: "MismatchingTypes", …
  std::string text;         // "node n1 input a: STRING is not castable from INTEGER (n0.o0)"
  std::string description;  // FlyteAdmin's description of the same error
};

// Compiles spec.template (with spec.sub_workflows for sub-workflow references) against `refs`:
// node input bindings against the interfaces of the nodes they reference (task, launch plan,
// sub-workflow, branch, gate) and the workflow inputs, the workflow's output bindings, branch
// cases and else, the failure node, references to tasks / launch plans / sub-workflows, node ids.
// Every error found, in node order; empty when the workflow compiles.
std::vector<Issue> compile_workflow(const flyteidl::admin::WorkflowSpec& spec,
                                    const References& refs);

// The task compiler FlyteAdmin's CreateTask runs (compiler.CompileTask): a container needs an
// image, and a command or args when the interface has inputs or outputs; the containers of a
// pod task need DNS-1123 label names; resource quantities must parse. Empty when it compiles.
std::vector<Issue> compile_task(const flyteidl::core::TaskTemplate& task);

// What a workflow needs from FlyteAdmin's database (compiler.GetRequirements): the tasks and
// launch plans its nodes reference (branches, array nodes and the failure node included), each
// once in first-seen order, reached from spec.template through sub-workflow references into
// spec.sub_workflows (each followed once). A sub-workflow reference spec.sub_workflows does not
// hold is recorded (the first: node id and reference) and not followed.
struct Requirements {
  std::vector<flyteidl::core::Identifier> tasks;
  std::vector<flyteidl::core::Identifier> launch_plans;
  std::optional<std::pair<std::string, flyteidl::core::Identifier>> missing_sub_workflow;
};
Requirements requirements(const flyteidl::admin::WorkflowSpec& spec);

// FlyteAdmin's CompileErrors text for the errors (warnings skipped) of `issues`:
// "Collected Errors: 1\n\tError 0: Code: MismatchingTypes, Node Id: n1, Description: …\n".
std::string admin_text(const std::vector<Issue>& issues);

}  // namespace flytecd::sinks::compiler
