#pragma once

#include "sinks/types.hpp"

// Transitional, for sink code written before these types moved to sinks/types.hpp: the names it
// uses (reconcile::State, reconcile::Step, model::Scope, ...) are the very same types. Nothing
// here includes daemon/. Delete this file (and its #include in sinks/sink.hpp) once no file
// under sinks/ says reconcile:: or model:: for them.

namespace flytecd::reconcile {
using sinks::Action;
using sinks::ObjectKind;
using sinks::override_key;
using sinks::OverrideState;
using sinks::project_key;
using sinks::ProjectState;
using sinks::State;
using sinks::Step;
using sinks::to_string;
}  // namespace flytecd::reconcile

namespace flytecd::model {
using sinks::all_attribute_types;
using sinks::attribute_json_key;
using sinks::attribute_type_from_name;
using sinks::attribute_type_name;
using sinks::attribute_type_of_field;
using sinks::AttributeType;
using sinks::field_of_attribute_type;
using sinks::Level;
using sinks::Scope;
using sinks::to_string;
}  // namespace flytecd::model
