#include "sinks/emulator/literal_types.hpp"

#include "sinks/workflow_compiler.hpp"

namespace flytecd::sinks::emulator::detail {
// One implementation of LiteralTypeForLiteral, shared with flytecd's own compile step.
std::optional<fc::LiteralType> literal_type_for(const fc::Literal& literal) {
  return compiler::type_of(literal);
}

std::string literal_type_error(const std::optional<fc::LiteralType>& type) {
  if (!type) {
    return "got unknown literal type: [<nil>].\nSuggested solution: Please update all your Flyte "
           "deployment images to the latest version and try again";
  }
  if (type->has_collection_type()) return literal_type_error(type->collection_type());
  if (type->has_map_value_type()) return literal_type_error(type->map_value_type());
  return "";
}

// One rule set for the emulator's launch-plan checks and the workflow compiler (shared with
// flytecd's own compile step).
bool types_castable(const fc::LiteralType& upstream, const fc::LiteralType& downstream) {
  return compiler::castable(upstream, downstream);
}

}  // namespace flytecd::sinks::emulator::detail
