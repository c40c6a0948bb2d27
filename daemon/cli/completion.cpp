#include "daemon/cli/completion.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <sstream>

namespace flytecd::cli {

namespace {

// "TEXT:{text,json}" -> {"text", "json"}: CLI::IsMember describes itself as {a,b,...}.
std::vector<std::string> choices_of(const std::string& type_name) {
  std::vector<std::string> out;
  auto open = type_name.find(":{");
  if (open == std::string::npos) return out;
  auto close = type_name.find('}', open);
  if (close == std::string::npos) return out;
  std::string list = type_name.substr(open + 2, close - open - 2);
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

OptionSpec option_spec(const CLI::Option& o) {
  OptionSpec s;
  for (const auto& l : o.get_lnames()) s.names.push_back("--" + l);
  for (const auto& n : o.get_snames()) s.names.push_back("-" + n);
  s.description = o.get_description();
  s.required = o.get_required();
  if (o.get_expected_max() != 0) {  // flags expect 0 values
    const std::string type_name = o.get_type_name();
    s.value_name = type_name.substr(0, type_name.find(':'));
    if (s.value_name.empty()) s.value_name = "VALUE";
    s.choices = choices_of(type_name);
  }
  return s;
}

bool is_help(const CLI::App& app, const CLI::Option* o) { return o == app.get_help_ptr(); }

CommandSpec describe(const CLI::App& app, std::vector<std::string> path,
                     const std::vector<OptionSpec>& inherited) {
  CommandSpec c;
  c.path = path;
  c.name = app.get_name();
  c.description = app.get_description();
  c.footer = app.get_footer();
  // CLI11 copies the parent's footer into each subcommand: keep only a footer of its own.
  if (app.get_parent() != nullptr && c.footer == app.get_parent()->get_footer()) c.footer.clear();
  std::vector<OptionSpec> passed_down;  // what a falling-through subcommand accepts from here
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    if (o->get_positional() && !o->nonpositional()) {
      c.positionals.push_back(
          {o->get_name(), o->get_description(), choices_of(o->get_type_name()), o->get_required()});
      continue;
    }
    c.options.push_back(option_spec(*o));
    if (!is_help(app, o)) passed_down.push_back(c.options.back());
  }
  for (auto o : inherited) {
    o.inherited = true;
    c.options.push_back(o);
  }
  passed_down.insert(passed_down.end(), inherited.begin(), inherited.end());
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden
    std::vector<std::string> sub_path = path;
    sub_path.push_back(sub->get_name());
    c.subcommands.push_back(
        describe(*sub, sub_path, sub->get_fallthrough() ? passed_down : std::vector<OptionSpec>{}));
  }
  return c;
}

void flatten(const CommandSpec& c, std::vector<const CommandSpec*>& out) {
  out.push_back(&c);
  for (const auto& s : c.subcommands) flatten(s, out);
}

std::string join(const std::vector<std::string>& words, const std::string& sep = " ") {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

bool plain_word(const std::string& w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == '-';
  });
}

Status check_words(const std::vector<const CommandSpec*>& all) {
  for (const CommandSpec* c : all) {
    std::vector<std::string> words = c->path;
    for (const auto& o : c->options) {
      words.insert(words.end(), o.names.begin(), o.names.end());
      words.insert(words.end(), o.choices.begin(), o.choices.end());
    }
    for (const auto& p : c->positionals)
      words.insert(words.end(), p.choices.begin(), p.choices.end());
    for (const auto& w : words)
      if (!plain_word(w))
        return make_error(ErrorCode::invalid_input,
                          "command '" + join(c->path) + "': '" + w +
                              "' is not a plain word ([A-Za-z0-9_.-]); cannot complete it");
  }
  return ok_status();
}

std::vector<std::string> valued_names(const CommandSpec& c) {
  std::vector<std::string> out;
  for (const auto& o : c.options)
    if (!o.value_name.empty()) out.insert(out.end(), o.names.begin(), o.names.end());
  return out;
}

std::vector<std::string> option_names(const CommandSpec& c) {
  std::vector<std::string> out;
  for (const auto& o : c.options) out.insert(out.end(), o.names.begin(), o.names.end());
  return out;
}

std::vector<std::string> subcommand_names(const CommandSpec& c) {
  std::vector<std::string> out;
  for (const auto& s : c.subcommands) out.push_back(s.name);
  return out;
}

// The words a command's positionals take (their choices), and whether any takes a file name.
std::vector<std::string> argument_words(const CommandSpec& c) {
  std::vector<std::string> out;
  for (const auto& p : c.positionals) out.insert(out.end(), p.choices.begin(), p.choices.end());
  return out;
}
int takes_files(const CommandSpec& c) {
  return std::any_of(c.positionals.begin(), c.positionals.end(),
                     [](const PositionalSpec& p) { return p.choices.empty(); })
             ? 1
             : 0;
}

// Options whose value is a project id (value name PROJECT) complete the projects the repository
// declares: the hidden `complete-projects --repo DIR` (DIR from --repo on the line, else ".").
bool takes_project(const OptionSpec& o) { return o.value_name == "PROJECT"; }

// Single-quoted for sh/zsh/fish: ' -> '\''.
std::string sq(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// The "path/word" patterns that step from one command to a subcommand, e.g. "get/overrides".
std::vector<std::string> step_patterns(const std::vector<const CommandSpec*>& all) {
  std::vector<std::string> out;
  for (const CommandSpec* c : all)
    for (const auto& s : c->subcommands) out.push_back("\"" + join(c->path) + "/" + s.name + "\"");
  return out;
}

std::string bash_script(const CommandSpec& root, const std::vector<const CommandSpec*>& all) {
  const std::string& p = root.name;
  std::ostringstream o;
  o << "# bash completion for " << p << ". Generated by `" << p
    << " completion bash` from its command definitions; do not edit.\n"
    << "# Install: " << p << " completion bash > /etc/bash_completion.d/" << p
    << "   (or source it from ~/.bashrc)\n\n"
    << "# Sets subs, opts, valued (options taking a value) and files for a command path.\n"
    << "_" << p << "_spec() {\n  case \"$1\" in\n";
  for (const CommandSpec* c : all) {
    auto subs = subcommand_names(*c);
    auto args = argument_words(*c);
    subs.insert(subs.end(), args.begin(), args.end());
    o << "    \"" << join(c->path) << "\")\n      subs=" << sq(join(subs))
      << "\n      opts=" << sq(join(option_names(*c)))
      << "\n      valued=" << sq(join(valued_names(*c))) << "\n      files=" << takes_files(*c)
      << " ;;\n";
  }
  o << "    *) subs='' opts='' valued='' files=1 ;;\n  esac\n}\n\n"
    << "# The projects the repository declares (--repo on the line, else .).\n"
    << "_" << p << "_projects() {\n"
    << "  local repo=. i\n"
    << "  for ((i = 1; i + 1 < ${#COMP_WORDS[@]}; i++)); do\n"
    << "    [[ \"${COMP_WORDS[i]}\" == --repo ]] && repo=\"${COMP_WORDS[i + 1]}\"\n"
    << "  done\n"
    << "  \"${COMP_WORDS[0]}\" complete-projects --repo \"$repo\" 2>/dev/null\n"
    << "  return 0\n}\n\n"
    << "# Prints the values allowed for option $2 of command path $1; fails when any value goes.\n"
    << "_" << p << "_choices() {\n  case \"$1|$2\" in\n";
  for (const CommandSpec* c : all)
    for (const auto& opt : c->options) {
      if (opt.choices.empty() && !takes_project(opt)) continue;
      std::vector<std::string> pats;
      for (const auto& n : opt.names) pats.push_back("\"" + join(c->path) + "|" + n + "\"");
      if (takes_project(opt))
        o << "    " << join(pats, "|") << ") _" << p << "_projects ;;\n";
      else
        o << "    " << join(pats, "|") << ") echo " << sq(join(opt.choices)) << " ;;\n";
    }
  o << "    *) return 1 ;;\n  esac\n}\n\n"
    << "_" << p << "() {\n"
    << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" path=\"\" w i choices\n"
    << "  local subs opts valued files\n"
    << "  ((COMP_CWORD > 0)) && prev=\"${COMP_WORDS[COMP_CWORD - 1]}\"\n"
    << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
    << "    w=\"${COMP_WORDS[i]}\"\n"
    << "    _" << p << "_spec \"$path\"\n"
    << "    if [[ \" $valued \" == *\" $w \"* ]]; then ((i++)); continue; fi\n"
    << "    case \"$path/$w\" in\n";
  auto steps = step_patterns(all);
  if (!steps.empty()) o << "      " << join(steps, "|") << ") path=\"${path:+$path }$w\" ;;\n";
  o << "    esac\n  done\n"
    << "  _" << p << "_spec \"$path\"\n"
    << "  if choices=$(_" << p << "_choices \"$path\" \"$prev\"); then\n"
    << "    mapfile -t COMPREPLY < <(compgen -W \"$choices\" -- \"$cur\")\n"
    << "  elif [[ -n \"$prev\" && \" $valued \" == *\" $prev \"* ]]; then\n"
    << "    compopt -o filenames 2>/dev/null\n"
    << "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
    << "  elif [[ \"$cur\" == -* ]]; then\n"
    << "    mapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
    << "  else\n"
    << "    mapfile -t COMPREPLY < <(compgen -W \"$subs\" -- \"$cur\")\n"
    << "    if ((files)); then\n"
    << "      compopt -o filenames 2>/dev/null\n"
    << "      mapfile -t -O \"${#COMPREPLY[@]}\" COMPREPLY < <(compgen -f -- \"$cur\")\n"
    << "    fi\n"
    << "  fi\n"
    << "  return 0\n"
    << "}\n"
    << "complete -F _" << p << " " << p << "\n";
  return o.str();
}

// zsh's _describe: "name:description", a colon in the name escaped.
std::string described(const std::string& name, const std::string& description) {
  return sq(name + ":" + description);
}

std::string zsh_script(const CommandSpec& root, const std::vector<const CommandSpec*>& all) {
  const std::string& p = root.name;
  std::ostringstream o;
  o << "#compdef " << p << "\n"
    << "# zsh completion for " << p << ". Generated by `" << p
    << " completion zsh` from its command definitions; do not edit.\n"
    << "# Install: " << p << " completion zsh > \"${fpath[1]}/_" << p << "\"\n\n"
    << "_" << p << "_spec() {\n  case \"$1\" in\n";
  for (const CommandSpec* c : all) {
    o << "    (" << sq(join(c->path)) << ")\n      subs=(";
    for (const auto& s : c->subcommands) o << " " << described(s.name, s.description);
    for (const auto& pos : c->positionals)
      for (const auto& w : pos.choices) o << " " << described(w, pos.description);
    o << " )\n      opts=(";
    for (const auto& opt : c->options)
      for (const auto& n : opt.names) o << " " << described(n, opt.description);
    o << " )\n      valued=(";
    for (const auto& n : valued_names(*c)) o << " " << n;
    o << " )\n      files=" << takes_files(*c) << " ;;\n";
  }
  o << "    (*) subs=() opts=() valued=() files=1 ;;\n  esac\n}\n\n"
    << "# The projects the repository declares (--repo on the line, else .).\n"
    << "_" << p << "_projects() {\n"
    << "  local repo=. i\n"
    << "  for ((i = 2; i < $#words; i++)); do\n"
    << "    [[ ${words[i]} == --repo ]] && repo=${words[i+1]}\n"
    << "  done\n"
    << "  reply=(${(f)\"$(${words[1]} complete-projects --repo \"$repo\" 2>/dev/null)\"})\n"
    << "}\n\n"
    << "_" << p << "_choices() {\n  case \"$1|$2\" in\n";
  for (const CommandSpec* c : all)
    for (const auto& opt : c->options) {
      if (opt.choices.empty() && !takes_project(opt)) continue;
      std::vector<std::string> pats;
      for (const auto& n : opt.names) pats.push_back(sq(join(c->path) + "|" + n));
      if (takes_project(opt))
        o << "    (" << join(pats, "|") << ") _" << p << "_projects ;;\n";
      else
        o << "    (" << join(pats, "|") << ") reply=(" << join(opt.choices) << ") ;;\n";
    }
  o << "    (*) return 1 ;;\n  esac\n}\n\n"
    << "_" << p << "() {\n"
    << "  local cmdpath=\"\" w i files\n"
    << "  local -a subs opts valued reply\n"
    << "  for ((i = 2; i < CURRENT; i++)); do\n"
    << "    w=${words[i]}\n"
    << "    _" << p << "_spec \"$cmdpath\"\n"
    << "    if (( ${valued[(Ie)$w]} )); then ((i++)); continue; fi\n"
    << "    case \"$cmdpath/$w\" in\n";
  auto steps = step_patterns(all);
  if (!steps.empty())
    o << "      (" << join(steps, "|") << ") cmdpath=\"${cmdpath:+$cmdpath }$w\" ;;\n";
  o << "    esac\n  done\n"
    << "  _" << p << "_spec \"$cmdpath\"\n"
    << "  local prev=${words[CURRENT-1]} cur=${words[CURRENT]}\n"
    << "  if _" << p << "_choices \"$cmdpath\" \"$prev\"; then\n"
    << "    compadd -a reply\n"
    << "  elif (( CURRENT > 2 && ${valued[(Ie)$prev]} )); then\n"
    << "    _files\n"
    << "  elif [[ $cur == -* ]]; then\n"
    << "    _describe -t options option opts\n"
    << "  else\n"
    << "    _describe -t commands command subs\n"
    << "    (( files )) && _files\n"
    << "  fi\n"
    << "  return 0\n"
    << "}\n\n"
    << "_" << p << " \"$@\"\n";
  return o.str();
}

std::string fish_script(const CommandSpec& root, const std::vector<const CommandSpec*>& all) {
  const std::string& p = root.name;
  std::ostringstream o;
  o << "# fish completion for " << p << ". Generated by `" << p
    << " completion fish` from its command definitions; do not edit.\n"
    << "# Install: " << p << " completion fish > ~/.config/fish/completions/" << p << ".fish\n\n"
    << "function __" << p << "_valued --description 'options of a command path taking a value'\n"
    << "    switch \"$argv[1]\"\n";
  for (const CommandSpec* c : all) {
    auto v = valued_names(*c);
    if (v.empty()) continue;
    o << "        case " << sq(join(c->path)) << "\n            printf '%s\\n' " << join(v) << "\n";
  }
  o << "    end\nend\n\n"
    << "function __" << p << "_path --description 'the subcommand path typed so far'\n"
    << "    set -l path ''\n    set -l skip 0\n"
    << "    for w in (commandline -opc)[2..-1]\n"
    << "        if test $skip = 1\n            set skip 0\n            continue\n        end\n"
    << "        switch \"$path/$w\"\n";
  auto steps = step_patterns(all);
  if (!steps.empty())
    o << "            case " << join(steps, " ")
      << "\n                set path (string trim -- \"$path $w\")\n                continue\n";
  o << "        end\n"
    << "        if contains -- $w (__" << p
    << "_valued $path)\n            set skip 1\n        end\n"
    << "    end\n    echo $path\nend\n\n"
    << "function __" << p << "_at --description 'is the subcommand path typed so far $argv[1]'\n"
    << "    set -l path (__" << p << "_path)\n    test \"$path\" = \"$argv[1]\"\nend\n\n"
    << "function __" << p << "_projects --description 'the projects the repository declares'\n"
    << "    set -l words (commandline -opc)\n    set -l repo .\n"
    << "    for i in (seq (count $words))\n"
    << "        if test \"$words[$i]\" = --repo; and test $i -lt (count $words)\n"
    << "            set repo $words[(math $i + 1)]\n        end\n    end\n"
    << "    $words[1] complete-projects --repo $repo 2>/dev/null\nend\n\n"
    << "complete -c " << p << " -f\n";
  for (const CommandSpec* c : all) {
    const std::string cond = "-n " + sq("__" + p + "_at " + sq(join(c->path)));
    for (const auto& s : c->subcommands)
      o << "complete -c " << p << " " << cond << " -a " << s.name << " -d " << sq(s.description)
        << "\n";
    for (const auto& opt : c->options) {
      o << "complete -c " << p << " " << cond;
      for (const auto& n : opt.names) {
        if (n.rfind("--", 0) == 0)
          o << " -l " << n.substr(2);
        else if (n.size() == 2)
          o << " -s " << n.substr(1);
        else
          o << " -o " << n.substr(1);
      }
      if (takes_project(opt))
        o << " -x -a " << sq("(__" + p + "_projects)");
      else if (!opt.choices.empty())
        o << " -x -a " << sq(join(opt.choices));
      else if (!opt.value_name.empty())
        o << " -r -F";
      o << " -d " << sq(opt.description) << "\n";
    }
    for (const auto& pos : c->positionals) {
      o << "complete -c " << p << " " << cond;
      if (pos.choices.empty())
        o << " -F";
      else
        o << " -a " << sq(join(pos.choices));
      o << " -d " << sq(pos.description) << "\n";
    }
  }
  return o.str();
}

// roff text: backslashes, minus signs, a leading control character; the em dash by name.
std::string roff(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '\\')
      out += "\\e";
    else if (ch == '-')
      out += "\\-";
    else if (s.compare(i, 3, "\xE2\x80\x94") == 0) {  // U+2014 EM DASH
      out += "\\(em";
      i += 2;
    } else
      out += ch;
  }
  std::string lines;
  std::stringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && (line[0] == '.' || line[0] == '\'')) line = "\\&" + line;
    lines += line + "\n";
  }
  return lines;
}

std::string one_line(const std::string& s) {
  std::string r = roff(s);
  while (!r.empty() && r.back() == '\n') r.pop_back();
  return r;
}

void man_options(std::ostringstream& o, const std::vector<OptionSpec>& options) {
  bool inherited = false;
  for (const auto& opt : options) {
    if (opt.inherited) {
      inherited = true;
      continue;
    }
    o << ".TP\n";
    std::vector<std::string> names;
    for (const auto& n : opt.names) names.push_back("\\fB" + one_line(n) + "\\fR");
    o << join(names, ", ");
    if (!opt.value_name.empty()) o << " \\fI" << opt.value_name << "\\fR";
    std::string text = opt.description;
    if (!text.empty() && text.back() != '.') text += ".";
    if (!opt.choices.empty()) text += " One of: " + join(opt.choices, ", ") + ".";
    if (opt.required) text += " Required.";
    o << "\n" << roff(text);
  }
  if (inherited) o << ".PP\nAlso accepts the options of the command it belongs to (see above).\n";
}

}  // namespace

CommandSpec describe_commands(const CLI::App& app) { return describe(app, {}, {}); }

Result<std::string> completion_script(const CommandSpec& root, std::string_view shell) {
  std::vector<const CommandSpec*> all;
  flatten(root, all);
  if (!plain_word(root.name))
    return make_error(ErrorCode::invalid_input,
                      "program name '" + root.name + "' is not a plain word ([A-Za-z0-9_.-])");
  if (auto s = check_words(all); !s) return s.error();
  if (shell == "bash") return bash_script(root, all);
  if (shell == "zsh") return zsh_script(root, all);
  if (shell == "fish") return fish_script(root, all);
  return make_error(ErrorCode::invalid_input,
                    "unknown shell '" + std::string(shell) + "' (expected bash, zsh or fish)");
}

std::string man_page(const CommandSpec& root, std::string_view version) {
  std::vector<const CommandSpec*> all;
  flatten(root, all);
  std::string upper = root.name;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  std::string summary = root.description;
  for (const std::string& sep : {std::string(" \xE2\x80\x94 "), std::string(" - ")}) {
    if (summary.rfind(root.name + sep, 0) == 0)
      summary = summary.substr(root.name.size() + sep.size());
  }
  std::ostringstream o;
  o << ".\\\" Generated by `" << root.name << " man` from its command definitions; do not edit.\n"
    << ".TH " << upper << " 1 \"\" \"" << one_line(root.name + " " + std::string(version))
    << "\" \"User Commands\"\n"
    << ".SH NAME\n"
    << root.name << " \\- " << roff(summary) << ".SH SYNOPSIS\n";
  for (const CommandSpec* c : all) {
    if (c == &root || !c->subcommands.empty()) continue;
    o << ".B " << root.name << " " << join(c->path) << "\n[\\fIOPTIONS\\fR]";
    for (const auto& pos : c->positionals)
      o << (pos.required ? " \\fI" + pos.name + "\\fR" : " [\\fI" + pos.name + "\\fR]");
    o << "\n.br\n";
  }
  o << ".SH DESCRIPTION\n" << roff(root.description);
  if (!root.footer.empty()) o << ".PP\n.nf\n" << roff(root.footer) << ".fi\n";
  o << ".SH OPTIONS\n";
  man_options(o, root.options);
  o << ".SH COMMANDS\n";
  for (const CommandSpec* c : all) {
    if (c == &root) continue;
    o << ".SS \"" << root.name << " " << join(c->path) << "\"\n" << roff(c->description);
    for (const auto& pos : c->positionals) {
      o << ".TP\n\\fI" << pos.name << "\\fR\n" << roff(pos.description);
    }
    if (!c->subcommands.empty())
      o << ".PP\nSubcommands: " << one_line(join(subcommand_names(*c), ", ")) << ".\n";
    man_options(o, c->options);
    if (!c->footer.empty()) o << ".PP\n.nf\n" << roff(c->footer) << ".fi\n";
  }
  o << ".SH FILES\n.TP\n/etc/" << root.name
    << "/config.yaml\nThe daemon's configuration (see the README).\n"
    << ".SH SEE ALSO\n/usr/share/doc/" << root.name << "/README.md\n";
  return o.str();
}

}  // namespace flytecd::cli
