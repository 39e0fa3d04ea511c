// `etwire completion bash|zsh`: a shell completion script made from the command line etwire
// itself defines (every command, subcommand and option), so it cannot drift from the binary.
// Words that are not options complete as the next command where there is one, else as files.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

namespace {

struct Level {
  std::string path;                   // "", " synth", " synth model": the commands before it
  std::vector<std::string> words;     // what completes here: subcommands, then options
  std::vector<std::string> commands;  // the subcommands alone
};

void collect(const CLI::App& app, const std::string& path, std::vector<Level>& levels) {
  Level level{path, {}, {}};
  for (const CLI::App* sub : app.get_subcommands({})) {
    level.commands.push_back(sub->get_name());
    level.words.push_back(sub->get_name());
  }
  for (const CLI::Option* option : app.get_options({})) {
    for (const std::string& name : option->get_lnames()) level.words.push_back("--" + name);
    for (const std::string& name : option->get_snames()) level.words.push_back("-" + name);
  }
  levels.push_back(level);
  for (const CLI::App* sub : app.get_subcommands({})) {
    collect(*sub, path + " " + sub->get_name(), levels);
  }
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

std::string bash_script(const CLI::App& app) {
  std::vector<Level> levels;
  collect(app, "", levels);
  std::string commands;  // "path word" pairs: which word after which path is a command
  std::string cases;
  for (const Level& level : levels) {
    for (const std::string& command : level.commands) {
      commands += fmt::format("    \"{} {}\") path=\"$path $w\" ;;\n", level.path, command);
    }
    cases += fmt::format("    \"{}\") words=\"{}\" ;;\n", level.path, joined(level.words));
  }
  return fmt::format(
      "# bash completion for etwire, written by `etwire completion bash`.\n"
      "_etwire() {{\n"
      "  local cur=${{COMP_WORDS[COMP_CWORD]}} path=\"\" words=\"\" w i\n"
      "  # The commands named so far: each word that names a command where it stands.\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=${{COMP_WORDS[i]}}\n"
      "    case \"$path $w\" in\n"
      "{}"
      "    esac\n"
      "  done\n"
      "  case \"$path\" in\n"
      "{}"
      "  esac\n"
      "  # Options where one is begun, else the commands; nothing left: files (complete -o "
      "default).\n"
      "  if [[ $cur == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "  else\n"
      "    COMPREPLY=($(compgen -W \"$(printf '%s\\n' $words | grep -v '^-')\" -- \"$cur\"))\n"
      "  fi\n"
      "}}\n"
      "complete -o default -F _etwire etwire\n",
      commands, cases);
}

}  // namespace

CommandAction add_completion_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "completion",
      "Print a shell completion script for etwire's commands and options: "
      "`source <(etwire completion bash)`, or install it where the shell looks (bash: "
      "/usr/share/bash-completion/completions/etwire; zsh: a file _etwire on $fpath)");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("SHELL", *shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  const CLI::App* top = &app;
  return [shell, top]() -> int {
    const std::string script = bash_script(*top);
    if (*shell == "zsh") {
      // zsh runs bash completion functions through its bashcompinit.
      std::cout << "#compdef etwire\nautoload -U +X bashcompinit && bashcompinit\n" << script;
    } else {
      std::cout << script;
    }
    return runner::kExitOk;
  };
}

}  // namespace etwire::cli
