#pragma once

// Flyte's literal typing as FlyteAdmin applies it to launch-plan inputs (internal to
// sinks/emulator): the type of a literal value and whether one type can be cast to another,
// following flytepropeller/pkg/compiler/validators/{utils,typing}.go. Pure functions.

#include <optional>
#include <string>

#include "flyteidl/core/interface.pb.h"
#include "flyteidl/core/literals.pb.h"
#include "flyteidl/core/types.pb.h"

namespace flytecd::sinks::emulator::detail {

namespace fc = ::flyteidl::core;

// validators.LiteralTypeForLiteral; nullopt where Go returns nil (no value, a scalar of an
// unknown kind, a blob without metadata). Collections and maps of mixed types become unions.
std::optional<fc::LiteralType> literal_type_for(const fc::Literal& literal);

// validators.ValidateLiteralType: "" when valid, else its error text (an unknown type, also
// nested in a collection or map).
std::string literal_type_error(const std::optional<fc::LiteralType>& type);

// validators.AreTypesCastable(upstream, downstream). One simplification: two STRUCT types that
// both carry a JSON schema are castable (FlyteAdmin compares the schemas).
bool types_castable(const fc::LiteralType& upstream, const fc::LiteralType& downstream);

}  // namespace flytecd::sinks::emulator::detail
