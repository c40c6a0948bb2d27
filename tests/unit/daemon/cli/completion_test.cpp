#include "daemon/cli/completion.hpp"

#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>

#include <algorithm>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::cli;

namespace {

const OptionSpec* find_option(const CommandSpec& c, const std::string& name) {
  for (const auto& o : c.options)
    if (std::find(o.names.begin(), o.names.end(), name) != o.names.end()) return &o;
  return nullptr;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("completion: the command tree comes from the CLI11 definitions", "[cli][completion]") {
  CLI::App app{"tool \xE2\x80\x94 does things.", "tool"};
  app.footer("Example:\n  tool sub --out x\n");
  std::string level, out, format, hidden_value, dir;
  bool flag = false;
  app.add_option("--level", level, "Log level")->check(CLI::IsMember({"info", "debug"}));
  auto* sub = app.add_subcommand("sub", "A subcommand");
  sub->add_option("-o,--out", out, "Output file")->required();
  sub->add_option("-f,--format", format, "Format")->check(CLI::IsMember({"text", "json"}));
  sub->add_flag("--dry-run", flag, "Change nothing");
  sub->add_option("--secret-knob", hidden_value, "hidden")->group("");
  sub->add_option("dir", dir, "Directory");
  sub->fallthrough();
  auto* nested = app.add_subcommand("get", "Show things");
  nested->add_subcommand("things", "The things");
  app.add_subcommand("man", "hidden")->group("");

  CommandSpec root = describe_commands(app);
  CHECK(root.name == "tool");
  REQUIRE(root.subcommands.size() == 2);  // "man" is hidden
  const CommandSpec& s = root.subcommands[0];
  CHECK(s.path == std::vector<std::string>{"sub"});
  CHECK(s.footer.empty());  // CLI11 copies the parent's footer: not the subcommand's own
  CHECK(root.footer == "Example:\n  tool sub --out x\n");

  const OptionSpec* o = find_option(s, "--out");
  REQUIRE(o);
  CHECK(o->names == std::vector<std::string>{"--out", "-o"});
  CHECK(o->required);
  CHECK(!o->value_name.empty());
  const OptionSpec* f = find_option(s, "--format");
  REQUIRE(f);
  CHECK(f->choices == std::vector<std::string>{"text", "json"});
  const OptionSpec* dry = find_option(s, "--dry-run");
  REQUIRE(dry);
  CHECK(dry->value_name.empty());  // a flag takes no value
  CHECK(find_option(s, "--secret-knob") == nullptr);
  REQUIRE(s.positionals.size() == 1);
  CHECK(s.positionals[0].name == "dir");

  // A falling-through subcommand accepts its parent's options, but not the parent's help flag
  // twice; one that does not fall through does not.
  const OptionSpec* inherited = find_option(s, "--level");
  REQUIRE(inherited);
  CHECK(inherited->inherited);
  CHECK(inherited->choices == std::vector<std::string>{"info", "debug"});
  CHECK(std::count_if(s.options.begin(), s.options.end(), [](const OptionSpec& x) {
          return std::find(x.names.begin(), x.names.end(), "--help") != x.names.end();
        }) == 1);
  CHECK(find_option(root.subcommands[1], "--level") == nullptr);
  REQUIRE(root.subcommands[1].subcommands.size() == 1);
  CHECK(root.subcommands[1].subcommands[0].path == std::vector<std::string>{"get", "things"});
}

TEST_CASE("completion: scripts name every command, option and choice", "[cli][completion]") {
  CLI::App app{"tool", "tool"};
  std::string format;
  auto* sub = app.add_subcommand("sub", "A subcommand");
  sub->add_option("-f,--format", format, "Format")->check(CLI::IsMember({"text", "json"}));
  auto* get = app.add_subcommand("get", "Show things");
  get->add_subcommand("things", "The things");
  CommandSpec root = describe_commands(app);

  auto bash = completion_script(root, "bash");
  REQUIRE(bash.ok());
  CHECK(contains(*bash, "complete -F _tool tool"));
  CHECK(contains(*bash, "subs='sub get'"));
  CHECK(contains(*bash, "\"sub|--format\"|\"sub|-f\") echo 'text json'"));
  CHECK(contains(*bash, "\"get/things\""));
  auto zsh = completion_script(root, "zsh");
  REQUIRE(zsh.ok());
  CHECK(zsh->rfind("#compdef tool\n", 0) == 0);
  CHECK(contains(*zsh, "'sub:A subcommand'"));
  auto fish = completion_script(root, "fish");
  REQUIRE(fish.ok());
  CHECK(contains(*fish, "-l format -s f -x -a 'text json' -d 'Format'"));
  CHECK(contains(*fish, "-a things -d 'The things'"));

  auto tcsh = completion_script(root, "tcsh");
  REQUIRE(!tcsh.ok());
  CHECK(tcsh.error().code == flytecd::ErrorCode::invalid_input);
  CHECK(tcsh.error().message == "unknown shell 'tcsh' (expected bash, zsh or fish)");
}

TEST_CASE("completion: a choice that is not a plain word is refused, not emitted unquoted",
          "[cli][completion]") {
  CLI::App app{"tool", "tool"};
  std::string v;
  app.add_option("--mode", v, "Mode")->check(CLI::IsMember({"ok", "rm$(x)"}));
  auto script = completion_script(describe_commands(app), "bash");
  REQUIRE(!script.ok());
  CHECK(script.error().code == flytecd::ErrorCode::invalid_input);
  CHECK(contains(script.error().message, "'rm$(x)' is not a plain word"));
}

TEST_CASE("completion: the man page is roff with escaped text", "[cli][completion]") {
  CLI::App app{"tool \xE2\x80\x94 does things.", "tool"};
  std::string out;
  auto* sub = app.add_subcommand("sub", "Reads a\\b path");
  sub->add_option("-o,--out-file", out, "Output file")->required();
  sub->footer(".dangerous line\n'quoted line\n");
  std::string page = man_page(describe_commands(app), "1.2.3");
  CHECK(page.rfind(".\\\" Generated by `tool man`", 0) == 0);
  CHECK(contains(page, ".TH TOOL 1 \"\" \"tool 1.2.3\" \"User Commands\"\n"));
  CHECK(contains(page, ".SH NAME\ntool \\- does things.\n"));  // for whatis/lexgrog
  CHECK(contains(page, ".SS \"tool sub\"\nReads a\\eb path\n"));
  CHECK(contains(page, "\\fB\\-\\-out\\-file\\fR, \\fB\\-o\\fR \\fI"));
  CHECK(contains(page, "Output file. Required.\n"));
  CHECK(contains(page, "\\&.dangerous line\n\\&'quoted line\n"));
  CHECK(contains(page, "tool \\(em does things."));
}

TEST_CASE("completion: an option whose value is a PROJECT completes the repository's projects",
          "[cli][completion]") {
  CLI::App app{"tool", "tool"};
  std::string project;
  auto* sub = app.add_subcommand("sub", "A subcommand");
  sub->add_option("-p,--project", project, "Project")->type_name("PROJECT");
  const CommandSpec root = describe_commands(app);
  auto bash = completion_script(root, "bash");
  REQUIRE(bash.ok());
  CHECK(contains(*bash, "\"sub|--project\"|\"sub|-p\") _tool_projects ;;"));
  CHECK(contains(*bash, "complete-projects --repo \"$repo\""));
  auto zsh = completion_script(root, "zsh");
  REQUIRE(zsh.ok());
  CHECK(contains(*zsh, "('sub|--project'|'sub|-p') _tool_projects ;;"));
  auto fish = completion_script(root, "fish");
  REQUIRE(fish.ok());
  CHECK(contains(*fish, "-l project -s p -x -a '(__tool_projects)'"));
}

}  // namespace FLYTECD_UNITY_ID
