// `etwire schema`: the run configuration's JSON Schema (control/resolve/config_schema.h), for an
// editor to check configurations as they are typed.

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/build_info.h"
#include "cli/commands.h"
#include "control/resolve/config_schema.h"
#include "outputs/output_file.h"
#include "runner/exit_codes.h"

namespace etwire::cli {

CommandAction add_schema_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "schema",
      "Print the JSON Schema of a run configuration: every key etwire reads, with its type, "
      "range, units and names, and no other. Editors using yaml-language-server check a "
      "configuration against it when the file's first line is `# yaml-language-server: "
      "$schema=PATH` (an installed etwire has it at share/etwire/etwire.schema.json)");
  auto out = std::make_shared<std::string>();
  cmd->add_option("-o,--out", *out, "Write it to this file instead of standard output");
  return [out]() -> int {
    const std::string text = control::config_json_schema(kVersion).dump(2) + "\n";
    if (out->empty()) {
      std::cout << text;
      return runner::kExitOk;
    }
    try {
      outputs::write_file_atomically(*out, text);
    } catch (const std::runtime_error& e) {
      std::cerr << "etwire schema: cannot write " << e.what() << "\n";
      return runner::kExitFailure;
    }
    return runner::kExitOk;
  };
}

}  // namespace etwire::cli
