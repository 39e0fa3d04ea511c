#include "cli/unknown_command.h"

#include <fmt/format.h>

#include <string_view>
#include <vector>

namespace etwire::cli {

std::optional<std::string> unknown_command_message(const CLI::App& app, int argc,
                                                   const char* const* argv) {
  const std::vector<const CLI::App*> subcommands =
      app.get_subcommands([](const CLI::App*) { return true; });
  std::string commands;
  for (const CLI::App* sub : subcommands) {
    if (sub->parsed()) return std::nullopt;
    if (!commands.empty()) commands += ", ";
    commands += sub->get_name();
  }
  // The top-level app takes flags only (-v, --help, --version), so the first word that is not an
  // option is where a command was expected.
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word.empty() || word.front() == '-') continue;
    for (const CLI::App* sub : subcommands) {
      if (sub->check_name(std::string(word))) return std::nullopt;
    }
    return fmt::format("error: unknown command \"{}\"; commands: {}\n", word, commands);
  }
  // No word at all: a command was expected.
  return fmt::format(
      "error: a command is required; commands: {} (etwire COMMAND --help says more)\n", commands);
}

}  // namespace etwire::cli
