#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/result.hpp"

namespace CLI {
class App;
}

namespace flytecd::cli {

// The command tree of a CLI11 application, as shell completion and the man page need it. Built
// from the same definitions that parse the command line, so neither can drift from the CLI.
struct OptionSpec {
  std::vector<std::string> names;  // long names first ("--output", "-o")
  std::string description;
  std::string value_name;            // e.g. "TEXT"; empty for a flag (takes no value)
  std::vector<std::string> choices;  // allowed values (from a CLI::IsMember check), else empty
  bool required = false;
  bool inherited = false;  // accepted from a parent command (fallthrough)
};

struct PositionalSpec {
  std::string name;
  std::string description;
  std::vector<std::string> choices;  // allowed values, else empty (any word: a file name)
  bool required = false;
};

struct CommandSpec {
  std::vector<std::string> path;  // {} for the program itself, {"get", "overrides"}, ...
  std::string name;               // the program's name for the root
  std::string description;
  std::string footer;
  std::vector<OptionSpec> options;  // its own, then the ones it accepts from its parents
  std::vector<PositionalSpec> positionals;
  std::vector<CommandSpec> subcommands;  // visible ones only (a hidden command has no group)
};

// Walks `app` (hidden subcommands and options left out). An option of a parent is accepted by a
// subcommand that falls through to it (CLI::App::fallthrough); its help flag is not inherited.
CommandSpec describe_commands(const CLI::App& app);

// The completion script for `shell` (bash, zsh or fish). Errors: another shell; a command,
// option or choice whose name is not a plain word ([A-Za-z0-9_.-]) and so cannot be emitted
// unquoted.
Result<std::string> completion_script(const CommandSpec& root, std::string_view shell);

// The man page (roff, section 1) of the program and every command.
std::string man_page(const CommandSpec& root, std::string_view version);

}  // namespace flytecd::cli
