// The message for a command line whose first word names no subcommand: CLI11 alone would only say
// that an argument was not expected, which does not tell a user the word was taken for a command
// nor which commands exist.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace etwire::cli {

// `error: unknown command "WORD"; commands: run, validate, ...` when no subcommand was parsed and
// the first word that is not an option is not one of `app`'s subcommands, and "a command is
// required" with the same list when there is no such word; nullopt otherwise (the parse error is
// about something else, and CLI11's own message says it better).
std::optional<std::string> unknown_command_message(const CLI::App& app, int argc,
                                                   const char* const* argv);

}  // namespace etwire::cli
