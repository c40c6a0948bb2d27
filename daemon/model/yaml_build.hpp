#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

namespace flytecd::model {

// A YAML document's tree as yaml-cpp's YAML::Load builds it, built from libyaml's events instead
// of yaml-cpp's scanner (half of loading a repository was that scanner's regular expressions).
// The tree is the one YAML::Load returns for the same text: scalars tagged "?" when plain and
// "!" when quoted or block (an explicit tag as written, resolved), plain null strings ("", "~",
// "null", "Null", "NULL") as Null nodes, mappings keeping repeated keys in order, an alias the
// node its anchor names; each node's Mark at its first character (line and byte column, 0-based,
// as yaml-cpp counts them). One mark differs: an empty value (`key:` and nothing) is marked just
// after the colon, where the value is missing; yaml-cpp marks the token after it.
struct BuiltDocument {
  YAML::Node root;  // Null for an empty document
  bool ok = true;
  std::string error;  // libyaml's problem, when !ok
  YAML::Mark error_mark;
};
// Builds the first document of `text`.
BuiltDocument build_yaml_document(std::string_view text);

}  // namespace flytecd::model
