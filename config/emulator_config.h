// `emulators:` — the servers one run spans, one etwire process each, started together by an MPI
// launcher (`mpirun -np N`, N = the number of emulators). A port belongs to one emulator
// (`ports[].emulator`), whose process drives it and replays the trace ranks mapped to it. Not to
// be confused with `mapping.jobs[].hosts`, the emulated GPU servers. No section: one emulator,
// the process `etwire run` started.
#pragma once

#include <cstdint>
#include <string>

namespace etwire::config {

struct EmulatorConfig {
  std::string name;      // unique; what ports[].emulator names
  std::string key_path;  // "emulators[1]"
  uint32_t rank = 0;     // the MPI rank of its process; default: its position in the list
  std::string host;      // the host name its process must run on; "" = wherever it is started
};

}  // namespace etwire::config
